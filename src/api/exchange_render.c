/* The exchange members of a hold (exchange_render.h). */
#include "api/exchange_render.h"

#include "core/locks.h"

void hf_render_exchange(hf_json_t *json, const hf_core_t *core, const char *order_id,
                        int64_t total) {
    /* An exchange hold (API.md section 13): the order it would replace, and what the swap
     * costs on top of it (negative: what it gives back). */
    HF_JSON_KEY(json, "exchange_for");
    hf_json_string(json, order_id);
    const hf_order_t *old = hf_core_order_find(core, order_id, NULL);
    if (!old) return; /* another node's unit: the hold's own answer says it */
    HF_JSON_KEY(json, "difference");
    hf_json_int(json, total - old->total);
}

void hf_render_exchange_elsewhere(hf_json_t *json, const hf_core_t *core, const hf_hold_t *hold) {
    HF_JSON_KEY(json, "exchange_for");
    hf_json_string(json, hf_core_string(core, hold->exchange_elsewhere - 1));
    /* Known once read or locked (a restored hold's is not until its commit). */
    if (hold->exchange_elsewhere_total == HF_REMOTE_TOTAL_UNKNOWN) return;
    HF_JSON_KEY(json, "difference");
    hf_json_int(json, hold->total - hold->exchange_elsewhere_total);
}
