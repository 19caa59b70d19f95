/* Readiness for a service manager: systemd's sd_notify protocol written here, without
 * libsystemd. When the variable NOTIFY_SOCKET names a datagram socket (a path, or "@name" for
 * an abstract one), a state such as "READY=1" or "STOPPING=1" is sent to it as one datagram;
 * without the variable nothing happens, so the server runs the same outside systemd. */
#ifndef HF_NOTIFY_H
#define HF_NOTIFY_H

/* Sends state; a failure is logged at debug and otherwise ignored (readiness is a courtesy to
 * the manager, not a reason to stop serving). */
void hf_notify(const char *state);

#endif
