/* Lookup in the embedded page files (see assets.h). */
#include "net/assets.h"

#include <string.h>

const hf_asset_t *hf_asset_find(const char *name) {
    for (const hf_asset_t *asset = hf_assets; asset->name; asset++)
        if (strcmp(asset->name, name) == 0) return asset;
    return NULL;
}
