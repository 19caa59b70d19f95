/* Remote exchange holds (core/locks.h, the new unit's side of an exchange across two owners):
 * an exchange hold whose old order is another unit's, known here by its id and, once read or
 * locked, its total. The hold itself is an ordinary one (it keeps nothing of that order); its
 * commit is the exchange's decision, made once the old unit's owner locked the order. */
#include "core/locks.h"

#include <string.h>

#include "core/calendars.h"
#include "core/internal.h"

/* The old order as a local exchange hold's checks would find it: named by the hold, the
 * hold's user's, confirmed. */
static hf_error_t remote_old_check(const char *exchange_for, const char *user_id,
                                   const hf_remote_order_t *old) {
    if (!exchange_for || strcmp(exchange_for, old->order_id) != 0) return HF_ERROR_ORDER_NOT_FOUND;
    if (!user_id || !old->user_id || strcmp(user_id, old->user_id) != 0) return HF_ERROR_NOT_OWNER;
    return old->confirmed ? HF_OK : HF_ERROR_ORDER_NOT_ACTIVE;
}

/* The hold's record names the old order: the slot must say so before the hold call emits it,
 * so the id is stored and is the scratch's for that call (hold_remote_pending). */
static uint32_t remote_id_begin(hf_core_t *core, const hf_remote_order_t *old) {
    uint32_t offset = string_store(core, old->order_id, strlen(old->order_id));
    core->scratch.exchange_elsewhere = offset + 1;
    return offset;
}

/* After the hold call: a refused hold gives the id's bytes back when nothing was stored after
 * them, so refused holds do not grow the strings; a placed one learns the old total. */
static hf_error_t remote_id_end(hf_core_t *core, uint32_t offset, const hf_remote_order_t *old,
                                hf_error_t error, const uint32_t *hold_index) {
    core->scratch.exchange_elsewhere = 0;
    if (error) {
        if (core->strings_length == offset + strlen(old->order_id) + 1)
            core->strings_length = offset;
        return error;
    }
    hold_of(core, *hold_index)->exchange_elsewhere_total = old->total;
    return HF_OK;
}

hf_error_t hf_core_hold_remote_exchange(hf_core_t *core, const hf_hold_request_t *request,
                                        const hf_remote_order_t *old, hf_time_ms_t now,
                                        uint32_t *hold_index, hf_error_detail_t *detail) {
    hf_error_t error = remote_old_check(request->exchange_for, request->user_id, old);
    if (error) return error;
    /* An exchange hold takes the public's inventory (as a local one's check says). */
    if (request->allocation_id) return HF_ERROR_INVALID_REQUEST;
    hf_hold_request_t plain = *request;
    plain.exchange_for = NULL;
    uint32_t offset = remote_id_begin(core, old);
    error = hf_core_hold(core, &plain, now, hold_index, detail);
    return remote_id_end(core, offset, old, error, hold_index);
}

hf_error_t hf_core_calendar_hold_remote_exchange(hf_core_t *core,
                                                 hf_calendar_hold_request_t *request,
                                                 const hf_remote_order_t *old, hf_time_ms_t now,
                                                 uint32_t *hold_index, hf_error_detail_t *detail) {
    hf_error_t error = remote_old_check(request->exchange_for, request->user_id, old);
    if (error) return error;
    const char *exchange_for = request->exchange_for;
    request->exchange_for = NULL;
    uint32_t offset = remote_id_begin(core, old);
    error = hf_core_calendar_hold(core, request, now, hold_index, detail);
    request->exchange_for = exchange_for;
    return remote_id_end(core, offset, old, error, hold_index);
}

const char *hf_core_remote_exchange_of(const hf_core_t *core, const char *hold_id, int64_t *total,
                                       bool *known) {
    const hf_hold_t *hold = hf_core_hold_find(core, hold_id, NULL);
    if (!hold || !hold->exchange_elsewhere) return NULL;
    *known = hold->exchange_elsewhere_total != HF_REMOTE_TOTAL_UNKNOWN;
    *total = hold->exchange_elsewhere_total;
    return exchange_elsewhere_id(core, hold);
}

/* The refund of a negative difference, against the old order's payment (none unpaid). */
static void refund_of_remote(hf_core_t *core, const hf_hold_t *hold, const hf_remote_order_t *old,
                             const text_key_t *refund_key, hf_time_ms_t now) {
    int64_t difference = hold->total - old->total;
    if (difference >= 0 || !old->payment_ref) return;
    uint32_t index = refund_of_payment(core, refund_key, old->payment_ref, hold->id, -difference,
                                       HF_REFUND_EXCHANGE, now);
    record_refund(core, index, now);
}

hf_error_t hf_core_commit_remote_exchange(hf_core_t *core, const char *hold_id, const char *user_id,
                                          const char *order_id, const char *payment_ref,
                                          const char *refund_id, const hf_remote_order_t *old,
                                          hf_time_ms_t now, uint32_t *order_index) {
    command_at(core, now);
    uint32_t index;
    hf_error_t error = hold_owned(core, hold_id, user_id, &index);
    if (error) return error;
    hf_hold_t *hold = hold_of(core, index);
    if (hold->status == HF_HOLD_CONFIRMED) {
        /* As a local commit's repeat (order.c): another payment is not absorbed. */
        *order_index = hold->order - 1;
        return order_same_payment(core, &core->orders.slots[hold->order - 1], payment_ref)
                   ? HF_OK
                   : HF_ERROR_ALREADY_CONFIRMED;
    }
    if (hold->status == HF_HOLD_RELEASED) return HF_ERROR_HOLD_RELEASED;
    if (hold->status == HF_HOLD_EXPIRED) return HF_ERROR_HOLD_EXPIRED;
    const char *named = exchange_elsewhere_id(core, hold);
    if (!named || strcmp(named, old->order_id) != 0 || !old->confirmed)
        return HF_ERROR_ORDER_NOT_ACTIVE;
    int64_t difference = hold->total - old->total;
    if (difference > 0 && (!payment_ref || !*payment_ref)) return HF_ERROR_INVALID_REQUEST;
    text_key_t order_key, refund_key;
    if (order_id_taken(core, order_id, &order_key)) return HF_ERROR_INVALID_REQUEST;
    bool refunds = difference < 0 && old->payment_ref;
    if (refunds && (!refund_id || refund_id_taken(core, refund_id, &refund_key)))
        return HF_ERROR_INVALID_REQUEST;
    *order_index = remote_exchange_apply(core, index, &order_key, refunds ? &refund_key : NULL,
                                         payment_ref, old, user_id, now);
    return HF_OK;
}

uint32_t remote_exchange_apply(hf_core_t *core, uint32_t hold_index, const text_key_t *order_key,
                               const text_key_t *refund_key, const char *payment_ref,
                               const hf_remote_order_t *old, const char *user_id,
                               hf_time_ms_t now) {
    hf_hold_t *hold = hold_of(core, hold_index);
    hold->exchange_elsewhere_total = old->total;
    /* As a local exchange's commit (exchange.c): held seats move to sold without a report. */
    hold_finish(core, hold_index, HF_HOLD_CONFIRMED, now, false);
    if (refund_key) refund_of_remote(core, hold, old, refund_key, now);
    core->orders.exchanged++;
    /* Paid by the commit's payment for a difference, else by the old order's. */
    const char *paid_by = payment_ref && *payment_ref ? payment_ref : old->payment_ref;
    return order_from_hold(core, hold_index, order_key, paid_by, user_id, now);
}

hf_error_t hf_core_payment_remote(hf_core_t *core, const hf_payment_delivery_t *delivery,
                                  const hf_remote_order_t *locked, hf_time_ms_t now,
                                  hf_payment_outcome_t *outcome) {
    core->payment_locked = locked;
    hf_error_t error = hf_core_payment(core, delivery, now, outcome);
    core->payment_locked = NULL;
    return error;
}
