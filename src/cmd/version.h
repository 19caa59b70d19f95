/* The server's version, defined once: `holdfast --version` prints it. Raised by hand at each
 * release, so a build never depends on git being present. */
#ifndef HF_VERSION_H
#define HF_VERSION_H

#define HF_VERSION "0.12.0"

#endif
