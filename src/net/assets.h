/* The box-office page's files (ui/), embedded at build time by tools/embed.c. */
#ifndef HF_ASSETS_H
#define HF_ASSETS_H

#include <stddef.h>

typedef struct hf_asset {
    const char *name; /* base name, e.g. "event.html"; NULL ends the table */
    const char *content_type;
    const unsigned char *data; /* static, NUL-terminated beyond length */
    size_t length;
} hf_asset_t;

extern const hf_asset_t hf_assets[];

/* The asset of that base name, or NULL. */
const hf_asset_t *hf_asset_find(const char *name);

#endif
