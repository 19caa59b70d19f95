/* Payments (API.md section 7): a payment provider's deliveries, deduplicated on
 * (payment_intent_id, type) and pruned by age, and the refunds that payments which cannot be
 * honoured require. The core decides; the engine checks the signature and speaks HTTP. */
#include "core/internal.h"
#include "core/locks.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(PAYMENT_COUNTS == HF_PAYMENT_COUNTS, "payments.h counts what core.h names");

/* ---- names ---- */

static const char *const TYPE_NAMES[] = {"payment.succeeded", "payment.failed"};
static const char *const RESULT_NAMES[] = {"committed", "refund_required", "recorded"};
static const char *const REASON_NAMES[] = {
    "hold_expired",    "hold_released", "amount_mismatch",  "hold_not_found", "already_confirmed",
    "order_cancelled", "exchange",      "order_not_active", "event_cancelled"};
static const char *const REFUND_STATUS_NAMES[] = {"pending", "completed"};

const char *hf_payment_type_name(uint8_t type) {
    assert(type <= HF_PAYMENT_FAILED);
    return TYPE_NAMES[type];
}

const char *hf_payment_result_name(uint8_t result) {
    assert(result <= HF_PAYMENT_RECORDED);
    return RESULT_NAMES[result];
}

const char *hf_refund_reason_name(uint8_t reason) {
    assert(reason <= HF_REFUND_REASON_LAST);
    return REASON_NAMES[reason];
}

const char *hf_refund_status_name(uint8_t status) {
    assert(status <= HF_REFUND_COMPLETED);
    return REFUND_STATUS_NAMES[status];
}

static bool name_parse(const char *const *names, int count, const char *text, uint8_t *out) {
    for (int i = 0; text && i < count; i++) {
        if (strcmp(names[i], text) != 0) continue;
        *out = (uint8_t)i;
        return true;
    }
    return false;
}

bool hf_payment_type_parse(const char *text, uint8_t *type) {
    return name_parse(TYPE_NAMES, HF_PAYMENT_FAILED + 1, text, type);
}

bool hf_refund_status_parse(const char *text, uint8_t *status) {
    return name_parse(REFUND_STATUS_NAMES, HF_REFUND_COMPLETED + 1, text, status);
}

bool hf_payment_result_parse(const char *text, uint8_t *result) {
    return name_parse(RESULT_NAMES, HF_PAYMENT_RECORDED + 1, text, result);
}

bool hf_refund_reason_parse(const char *text, uint8_t *reason) {
    return name_parse(REASON_NAMES, HF_REFUND_REASON_LAST + 1, text, reason);
}

/* A copy the core owns (strdup is POSIX, not C11). */
static char *text_copy(const char *text) {
    if (!text) return NULL;
    size_t length = strlen(text);
    char *copy = malloc(length + 1);
    if (!copy) abort();
    memcpy(copy, text, length + 1);
    return copy;
}

/* ---- refunds ---- */

static bool refund_key_match(const void *context, uint32_t index) {
    const record_key_t *key = context;
    return id_field_equal(key->core->payments.refunds[index].id, &key->id);
}

static bool refund_index_find(const hf_core_t *core, const text_key_t *id, uint32_t *index) {
    if (id->length > HF_SERVER_ID_SIZE) return false;
    record_key_t key = {core, *id};
    return hf_index_map_find(&core->payments.refund_ids, id->hash, refund_key_match, &key, index);
}

const hf_refund_t *hf_core_refund_find(const hf_core_t *core, const char *refund_id,
                                       uint32_t *index) {
    uint32_t found;
    if (!refund_id) return NULL;
    text_key_t key = text_key_of(refund_id, strlen(refund_id));
    if (!refund_index_find(core, &key, &found)) return NULL;
    if (index) *index = found;
    return &core->payments.refunds[found];
}

uint32_t hf_core_refund_count(const hf_core_t *core) { return core->payments.refund_count; }

uint32_t hf_core_refunds_completed(const hf_core_t *core) {
    return core->payments.refunds_completed;
}

const uint64_t *hf_core_payment_counts(const hf_core_t *core) { return core->payments.counts; }

const hf_refund_t *hf_core_refund_at(const hf_core_t *core, uint32_t index) {
    return index < core->payments.refund_count ? &core->payments.refunds[index] : NULL;
}

uint64_t hf_core_refund_change(const hf_core_t *core, uint32_t index) {
    assert(index < core->payments.refund_count);
    return core->payments.refunds[index].last_change;
}

bool refund_id_taken(const hf_core_t *core, const char *id, text_key_t *key) {
    if (!id) return true;
    *key = server_id_key(id);
    uint32_t index;
    return refund_index_find(core, key, &index);
}

static uint32_t refund_add(hf_core_t *core, const text_key_t *id, const char *intent_id,
                           const char *reservation_id, int64_t amount, uint8_t reason,
                           hf_time_ms_t now) {
    core->payments.refunds = grow(core->payments.refunds, &core->payments.refund_capacity,
                                  core->payments.refund_count + 1, sizeof *core->payments.refunds);
    uint32_t index = core->payments.refund_count++;
    hf_refund_t *refund = &core->payments.refunds[index];
    memset(refund, 0, sizeof *refund);
    text_key_t key = server_id_copy(refund->id, id);
    refund->payment_intent_id = text_copy(intent_id);
    refund->reservation_id = text_copy(reservation_id);
    refund->amount = amount;
    refund->reason = reason;
    refund->status = HF_REFUND_PENDING;
    refund->created_at_ms = now;
    hf_index_map_insert(&core->payments.refund_ids, key.hash, index);
    return index;
}

/* The refund's unit: the event of the hold it names, when the core has the hold (the engine
 * revives a forgotten one before a payment), else none. */
static void refund_event_set(hf_core_t *core, uint32_t index, const char *reservation_id) {
    uint32_t hold_index;
    const hf_hold_t *hold = reservation_id ? hf_core_hold_find(core, reservation_id, &hold_index)
                                           : NULL;
    core->payments.refunds[index].of_event = hold != NULL;
    core->payments.refunds[index].event = hold ? hold->event : 0;
    core->payments.refunds[index].target = hold ? hold->target : HF_TARGET_EVENT;
}

uint32_t refund_of_payment(hf_core_t *core, const text_key_t *refund_key, const char *intent_id,
                           const char *reservation_id, int64_t amount, uint8_t reason,
                           hf_time_ms_t now) {
    uint32_t index = refund_add(core, refund_key, intent_id, reservation_id, amount, reason, now);
    refund_event_set(core, index, reservation_id);
    return index;
}

uint32_t refund_of_cancel(hf_core_t *core, uint32_t order_index, const text_key_t *refund_key,
                          uint8_t reason, hf_time_ms_t now) {
    hf_order_t *order = &core->orders.slots[order_index];
    const char *payment_ref = hf_core_string(core, order->payment_ref);
    assert(payment_ref && order->refund == 0);
    const char *hold_id = order->hold ? core->holds.slots[order->hold - 1].id : NULL;
    uint32_t index = refund_add(core, refund_key, payment_ref, hold_id, order->total, reason, now);
    hf_refund_t *refund = &core->payments.refunds[index];
    refund->of_event = true;
    refund->event = order->event;
    refund->target = order->target;
    refund->order = order_index + 1;
    order->refund = index + 1;
    record_refund(core, index, now);
    return index;
}

hf_error_t hf_core_refund_complete(hf_core_t *core, const char *refund_id, hf_time_ms_t now,
                                   uint32_t *index) {
    command_at(core, now);
    const hf_refund_t *refund = hf_core_refund_find(core, refund_id, index);
    if (!refund) return HF_ERROR_REFUND_NOT_FOUND;
    if (refund->status == HF_REFUND_COMPLETED) return HF_OK;
    core->payments.refunds[*index].status = HF_REFUND_COMPLETED;
    core->payments.refunds_completed++;
    record_refund(core, *index, now);
    return HF_OK;
}

/* ---- deliveries: kept oldest first, pruned from the front by age ---- */

typedef struct delivery_key {
    const hf_core_t *core;
    const char *intent_id;
    uint8_t type;
} delivery_key_t;

/* Entries of pruned deliveries stay in the index until the next compaction: they never
 * match, since their index is before delivery_first. */
static bool delivery_match(const void *context, uint32_t index) {
    const delivery_key_t *key = context;
    const hf_core_t *core = key->core;
    if (index < core->payments.delivery_first || index >= core->payments.delivery_count)
        return false;
    const delivery_t *delivery = &core->payments.deliveries[index];
    return delivery->type == key->type && strcmp(delivery->payment_intent_id, key->intent_id) == 0;
}

static const delivery_t *delivery_find(const hf_core_t *core, const char *intent_id, uint8_t type,
                                       uint32_t hash) {
    delivery_key_t key = {core, intent_id, type};
    uint32_t index;
    if (!hf_index_map_find(&core->payments.delivery_ids, hash, delivery_match, &key, &index))
        return NULL;
    return &core->payments.deliveries[index];
}

uint32_t hf_core_deliveries_kept(const hf_core_t *core) {
    return core->payments.delivery_count - core->payments.delivery_first;
}

/* Drops the deliveries older than HF_WEBHOOK_DEDUP_KEEP_MS: they arrived in order, so these
 * are a prefix, and pruning reads only what it drops. */
static void deliveries_prune(hf_core_t *core, hf_time_ms_t now) {
    while (core->payments.delivery_first < core->payments.delivery_count) {
        delivery_t *oldest = &core->payments.deliveries[core->payments.delivery_first];
        if (now - oldest->at_ms <= HF_WEBHOOK_DEDUP_KEEP_MS) return;
        free(oldest->payment_intent_id);
        oldest->payment_intent_id = NULL;
        core->payments.delivery_first++;
    }
}

/* Moves the kept deliveries to the front and indexes them anew. */
static void deliveries_compact(hf_core_t *core) {
    uint32_t kept = core->payments.delivery_count - core->payments.delivery_first;
    if (core->payments.deliveries == NULL) return; /* none was ever kept */
    memmove(core->payments.deliveries, core->payments.deliveries + core->payments.delivery_first,
            (size_t)kept * sizeof *core->payments.deliveries);
    core->payments.delivery_first = 0;
    core->payments.delivery_count = kept;
    hf_index_map_clear(&core->payments.delivery_ids);
    for (uint32_t i = 0; i < kept; i++)
        hf_index_map_insert(&core->payments.delivery_ids, core->payments.deliveries[i].hash, i);
}

/* A new delivery at the end: the array is compacted rather than grown when a quarter of it or
 * more is pruned, so it stays within twice what is kept. */
static delivery_t *delivery_append(hf_core_t *core, const char *intent_id, uint8_t type,
                                   const hf_payment_outcome_t *outcome, hf_time_ms_t at_ms) {
    if (core->payments.delivery_count == core->payments.delivery_capacity &&
        core->payments.delivery_first > 0 &&
        core->payments.delivery_first >= core->payments.delivery_capacity / 4)
        deliveries_compact(core);
    core->payments.deliveries = grow(core->payments.deliveries, &core->payments.delivery_capacity,
                                     core->payments.delivery_count + 1,
                                     sizeof *core->payments.deliveries);
    uint32_t index = core->payments.delivery_count++;
    delivery_t *delivery = &core->payments.deliveries[index];
    *delivery = (delivery_t){.payment_intent_id = text_copy(intent_id),
                             .hash = hf_map_hash(intent_id, strlen(intent_id)),
                             .type = type,
                             .result = outcome->result,
                             .reason = outcome->reason,
                             .late = outcome->late,
                             .order = outcome->order,
                             .refund = outcome->refund,
                             .at_ms = at_ms};
    hf_index_map_insert(&core->payments.delivery_ids, delivery->hash, index);
    return delivery;
}

/* ---- deciding a successful payment ---- */

/* Whether the delivery's currency, when it names one, is the event's: ASCII letters compare
 * without case, since providers write codes in lower case ("usd") where events have "USD". */
static bool currency_matches(const char *given, const char *own) {
    if (!given) return true;
    for (; *given && *own; given++, own++) {
        char a = *given >= 'a' && *given <= 'z' ? (char)(*given - 'a' + 'A') : *given;
        char b = *own >= 'a' && *own <= 'z' ? (char)(*own - 'a' + 'A') : *own;
        if (a != b) return false;
    }
    return *given == *own;
}

/* Whether everything a lapsed hold held is still free: its seats available, its pools with
 * the units. */
static bool inventory_free(const hf_core_t *core, const hf_hold_t *hold) {
    if (hold->target == HF_TARGET_CALENDAR) return calendar_hold_free(core, hold);
    const hf_event_t *event = core->events.slots[hold->event];
    const hf_item_t *items = core->items + hold->item_offset;
    for (uint32_t i = 0; i < hold->seat_count; i++)
        if (!seat_free_for(event, items[i].index, hold->allocation)) return false;
    for (uint32_t i = hold->seat_count; i < hold->seat_count + hold->pool_count; i++)
        if (allocation_pool_free(core, event, items[i].index, hold->allocation) <
            (int64_t)items[i].quantity)
            return false;
    return true;
}

/* The refund a confirmed hold requires, or none when this very payment confirmed it (the
 * client's commit with payment_ref = the intent id came first). */
static void decide_confirmed(const hf_core_t *core, const hf_hold_t *hold, const char *intent_id,
                             hf_payment_outcome_t *outcome) {
    const hf_order_t *order = &core->orders.slots[hold->order - 1];
    const char *own = hf_core_string(core, order->payment_ref);
    if (own && strcmp(own, intent_id) == 0) {
        outcome->result = HF_PAYMENT_COMMITTED;
        outcome->order = hold->order - 1;
        return;
    }
    outcome->reason = HF_REFUND_ALREADY_CONFIRMED;
}

/* payment.succeeded for an exchange hold: its amount is the positive difference, and it
 * commits only while the hold is held and its old order confirmed (a lapsed exchange is not
 * taken again: the old order may have moved on). */
static void decide_exchange(hf_core_t *core, const hf_payment_delivery_t *delivery, uint32_t index,
                            const text_key_t *order_key, hf_time_ms_t now,
                            hf_payment_outcome_t *outcome) {
    const hf_hold_t *hold = &core->holds.slots[index];
    const hf_order_t *old = &core->orders.slots[hold->exchange_for - 1];
    const char *currency = hold->target == HF_TARGET_CALENDAR
                               ? calendar_currency_at(core, hold->event)
                               : core->events.slots[hold->event]->currency;
    bool amount_right = delivery->amount == hold->total - old->total &&
                        currency_matches(delivery->currency, currency);
    if (hold->status == HF_HOLD_RELEASED) outcome->reason = HF_REFUND_HOLD_RELEASED;
    else if (hold->status == HF_HOLD_EXPIRED) outcome->reason = HF_REFUND_HOLD_EXPIRED;
    else if (amount_right && old->status != HF_ORDER_CONFIRMED)
        outcome->reason = HF_REFUND_ORDER_NOT_ACTIVE;
    /* A refused commit is not reached here (the difference is positive): counted a mismatch. */
    else if (amount_right && exchange_commit(core, index, order_key, delivery->payment_intent_id,
                                             NULL, NULL, now, &outcome->order) == HF_OK)
        outcome->result = HF_PAYMENT_COMMITTED;
    else outcome->reason = HF_REFUND_AMOUNT_MISMATCH;
}

/* payment.succeeded for a remote exchange hold (core/locks.h): as a local exchange's, its old
 * order as its owner locked it for this delivery (hf_core_payment_remote), none otherwise. */
static void decide_remote_exchange(hf_core_t *core, const hf_payment_delivery_t *delivery,
                                   uint32_t index, const text_key_t *order_key, hf_time_ms_t now,
                                   hf_payment_outcome_t *outcome) {
    const hf_hold_t *hold = &core->holds.slots[index];
    const hf_remote_order_t *old = core->payment_locked;
    const char *named = exchange_elsewhere_id(core, hold);
    const char *currency = hold->target == HF_TARGET_CALENDAR
                               ? calendar_currency_at(core, hold->event)
                               : core->events.slots[hold->event]->currency;
    if (hold->status == HF_HOLD_RELEASED) outcome->reason = HF_REFUND_HOLD_RELEASED;
    else if (hold->status == HF_HOLD_EXPIRED) outcome->reason = HF_REFUND_HOLD_EXPIRED;
    else if (!old || !old->confirmed || strcmp(old->order_id, named) != 0)
        outcome->reason = HF_REFUND_ORDER_NOT_ACTIVE;
    else if (delivery->amount != hold->total - old->total ||
             !currency_matches(delivery->currency, currency))
        outcome->reason = HF_REFUND_AMOUNT_MISMATCH;
    else {
        outcome->result = HF_PAYMENT_COMMITTED;
        /* A positive difference: nothing to refund; no user asked (the provider did). */
        outcome->order = remote_exchange_apply(core, index, order_key, NULL,
                                               delivery->payment_intent_id, old, NULL, now);
    }
}

/* payment.succeeded: the hold committed (late when it had lapsed and all it held is free), or
 * the reason of the refund it requires; the hold changes only when it is committed. */
static void decide_succeeded(hf_core_t *core, const hf_payment_delivery_t *delivery,
                             const text_key_t *order_key, hf_time_ms_t now,
                             hf_payment_outcome_t *outcome) {
    uint32_t index;
    const hf_hold_t *hold = hf_core_hold_find(core, delivery->reservation_id, &index);
    outcome->result = HF_PAYMENT_REFUND_REQUIRED;
    if (!hold) {
        outcome->reason = HF_REFUND_HOLD_NOT_FOUND;
        return;
    }
    if (hold->status == HF_HOLD_CONFIRMED) {
        decide_confirmed(core, hold, delivery->payment_intent_id, outcome);
        return;
    }
    if (hold->exchange_for) {
        decide_exchange(core, delivery, index, order_key, now, outcome);
        return;
    }
    if (hold->exchange_elsewhere) {
        decide_remote_exchange(core, delivery, index, order_key, now, outcome);
        return;
    }
    if (hold->status == HF_HOLD_RELEASED) outcome->reason = HF_REFUND_HOLD_RELEASED;
    else if (delivery->amount != hold->total ||
             !currency_matches(delivery->currency, hold->target == HF_TARGET_CALENDAR
                                                       ? calendar_currency_at(core, hold->event)
                                                       : core->events.slots[hold->event]->currency))
        outcome->reason = HF_REFUND_AMOUNT_MISMATCH;
    else if (hold->status == HF_HOLD_EXPIRED && !inventory_free(core, hold))
        outcome->reason = HF_REFUND_HOLD_EXPIRED;
    else {
        outcome->result = HF_PAYMENT_COMMITTED;
        outcome->late = hold->status == HF_HOLD_EXPIRED;
        if (outcome->late) {
            /* Money in hand is never refunded while what it paid for is free: the lapsed hold
             * is confirmed as if it had never lapsed. */
            finished_remove(core, index);
            hold_of(core, index)->status = HF_HOLD_CONFIRMED;
        } else {
            hold_finish(core, index, HF_HOLD_CONFIRMED, now, false);
        }
        /* No user asked for this change (the hold's update names none, as an expiry's):
         * the provider did, and the delivery's record says so. */
        outcome->order = order_from_hold(core, index, order_key, delivery->payment_intent_id, NULL,
                                         now);
    }
}

hf_error_t hf_core_payment(hf_core_t *core, const hf_payment_delivery_t *delivery, hf_time_ms_t now,
                           hf_payment_outcome_t *outcome) {
    command_at(core, now);
    deliveries_prune(core, now);
    memset(outcome, 0, sizeof *outcome);
    const char *intent_id = delivery->payment_intent_id;
    if (!intent_id || !*intent_id || delivery->type > HF_PAYMENT_FAILED)
        return HF_ERROR_INVALID_REQUEST;
    const delivery_t *seen = delivery_find(core, intent_id, delivery->type,
                                           hf_map_hash(intent_id, strlen(intent_id)));
    if (seen) {
        *outcome = (hf_payment_outcome_t){.result = seen->result,
                                          .reason = seen->reason,
                                          .late = seen->late,
                                          .repeat = true,
                                          .order = seen->order,
                                          .refund = seen->refund};
        core->payments.counts[HF_PAYMENT_COUNT_REPEAT]++;
        return HF_OK;
    }
    if (hf_core_deliveries_kept(core) >= HF_WEBHOOK_DELIVERIES_MAX) return HF_ERROR_CAPACITY;
    text_key_t order_key, refund_key;
    if (order_id_taken(core, delivery->order_id, &order_key) ||
        refund_id_taken(core, delivery->refund_id, &refund_key))
        return HF_ERROR_INVALID_REQUEST;
    if (delivery->type == HF_PAYMENT_FAILED) outcome->result = HF_PAYMENT_RECORDED;
    else decide_succeeded(core, delivery, &order_key, now, outcome);
    if (outcome->result == HF_PAYMENT_REFUND_REQUIRED) {
        outcome->refund = refund_add(core, &refund_key, intent_id, delivery->reservation_id,
                                     delivery->amount, outcome->reason, now);
        refund_event_set(core, outcome->refund, delivery->reservation_id);
    }
    const delivery_t *kept = delivery_append(core, intent_id, delivery->type, outcome, now);
    record_delivery(core, delivery, kept, now);
    if (outcome->result == HF_PAYMENT_REFUND_REQUIRED) record_refund(core, outcome->refund, now);
    core->payments.counts[outcome->result]++;
    return HF_OK;
}

/* ---- restore ---- */

/* The cancelled order a stored refund names, which must have been paid and refunded by none
 * other; false when it is not so. */
static bool refund_order_find(const hf_core_t *core, const hf_stored_refund_t *stored,
                              uint32_t *order_index) {
    bool of_cancel = hf_refund_reason_of_cancel(stored->reason);
    if (!stored->order_id) return !of_cancel;
    const hf_order_t *order = hf_core_order_find(core, stored->order_id, order_index);
    return order && order->status == HF_ORDER_CANCELLED && order->refund == 0 && of_cancel;
}

hf_error_t hf_core_restore_refund(hf_core_t *core, const hf_stored_refund_t *stored) {
    text_key_t key;
    uint32_t order_index = 0;
    if (!stored->payment_intent_id || stored->reason > HF_REFUND_REASON_LAST ||
        stored->status > HF_REFUND_COMPLETED || refund_id_taken(core, stored->refund_id, &key))
        return HF_ERROR_INVALID_REQUEST;
    if (!refund_order_find(core, stored, &order_index)) return HF_ERROR_ORDER_NOT_FOUND;
    uint32_t index = refund_add(core, &key, stored->payment_intent_id, stored->reservation_id,
                                stored->amount, stored->reason, stored->created_at_ms);
    hf_refund_t *refund = &core->payments.refunds[index];
    refund->status = stored->status;
    if (stored->status == HF_REFUND_COMPLETED) core->payments.refunds_completed++;
    uint32_t event_index;
    if (stored->order_id) {
        /* An order's refund is its event's, whether or not it had a hold. */
        refund->order = order_index + 1;
        core->orders.slots[order_index].refund = index + 1;
        refund->of_event = true;
        refund->event = core->orders.slots[order_index].event;
        refund->target = core->orders.slots[order_index].target;
    } else if (stored->event_id && hf_core_event(core, stored->event_id, &event_index)) {
        refund->of_event = true;
        refund->event = event_index;
    } else if (stored->event_id && hf_core_calendar(core, stored->event_id, &event_index)) {
        refund->of_event = true;
        refund->event = event_index;
        refund->target = HF_TARGET_CALENDAR;
    }
    return HF_OK;
}

hf_error_t hf_core_restore_delivery(hf_core_t *core, const hf_stored_delivery_t *stored) {
    const char *intent_id = stored->payment_intent_id;
    if (!intent_id || !*intent_id || stored->type > HF_PAYMENT_FAILED ||
        stored->result > HF_PAYMENT_RECORDED)
        return HF_ERROR_INVALID_REQUEST;
    if (delivery_find(core, intent_id, stored->type, hf_map_hash(intent_id, strlen(intent_id))))
        return HF_ERROR_INVALID_REQUEST;
    hf_payment_outcome_t outcome = {.result = stored->result,
                                    .reason = stored->reason,
                                    .late = stored->late};
    if (stored->result == HF_PAYMENT_COMMITTED &&
        !hf_core_order_find(core, stored->order_id, &outcome.order))
        return HF_ERROR_ORDER_NOT_FOUND;
    if (stored->result == HF_PAYMENT_REFUND_REQUIRED &&
        !hf_core_refund_find(core, stored->refund_id, &outcome.refund))
        return HF_ERROR_REFUND_NOT_FOUND;
    delivery_append(core, intent_id, stored->type, &outcome, stored->at_ms);
    return HF_OK;
}

void payment_free(hf_core_t *core) {
    for (uint32_t i = core->payments.delivery_first; i < core->payments.delivery_count; i++)
        free(core->payments.deliveries[i].payment_intent_id);
    free(core->payments.deliveries);
    for (uint32_t i = 0; i < core->payments.refund_count; i++) {
        free(core->payments.refunds[i].payment_intent_id);
        free(core->payments.refunds[i].reservation_id);
    }
    free(core->payments.refunds);
    hf_index_map_free(&core->payments.delivery_ids);
    hf_index_map_free(&core->payments.refund_ids);
}
