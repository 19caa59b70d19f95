/* Entries of an event's audit history, derived from the batch's records (store/history.h). */
#include "store/history.h"

#include "core/core.h"
#include "lib/json.h"

/* A hold update says what happened by the status it leaves: held is an extension. A
 * confirmation is told by the order it creates (commit, below), which alone carries the
 * payment reference, so the hold's own record of it makes no entry. */
static const char *hold_update_type(const hf_mutation_hold_update_t *update) {
    switch (update->status) {
    case HF_HOLD_HELD: return "extend";
    case HF_HOLD_RELEASED: return "release";
    case HF_HOLD_EXPIRED: return "expiry";
    default: return NULL;
    }
}

bool hf_history_entry_of(const hf_mutation_t *mutation, const char **type,
                         const char **event_id) {
    *type = NULL;
    *event_id = NULL;
    switch (mutation->type) {
    case HF_MUTATION_HOLD_CREATE:
        *type = "hold";
        *event_id = mutation->as.hold_create.event_id;
        break;
    case HF_MUTATION_HOLD_UPDATE:
        *type = hold_update_type(&mutation->as.hold_update);
        *event_id = mutation->as.hold_update.event_id;
        break;
    case HF_MUTATION_ORDER_CREATE:
        *type = mutation->as.order_create.hold_id != NULL ? "commit" : "booking";
        *event_id = mutation->as.order_create.event_id;
        break;
    case HF_MUTATION_ORDER_UPDATE:
        *type = mutation->as.order_update.status == HF_ORDER_CANCELLED ? "cancel" : NULL;
        *event_id = mutation->as.order_update.event_id;
        break;
    case HF_MUTATION_DELIVERY:
        /* A payment webhook's delivery and what it decided; the commit it made, if any, is
         * its order's own entry. A delivery for an unknown hold names no event. */
        *type = "payment";
        *event_id = mutation->as.delivery.hold_event_id;
        break;
    case HF_MUTATION_REFUND: /* the delivery's entry names the refund it owes */
    case HF_MUTATION_EVENT_CREATE:
    case HF_MUTATION_EVENT_SALES:
    case HF_MUTATION_SEAT:
    case HF_MUTATION_POOL:
    case HF_MUTATION_ORDER_ITEM:
    case HF_MUTATION_IDEMPOTENCY:
    /* A waiting room's tickets make no entries (docs/API.md, a Choice): a million joins
     * would swamp the history of the sale they wait for. */
    case HF_MUTATION_TICKET_CREATE:
    case HF_MUTATION_TICKET_UPDATE:
    /* Rides and drivers are no event's: dispatch keeps no audit history (docs/API.md). */
    case HF_MUTATION_DRIVER:
    case HF_MUTATION_RIDE:
        /* Not a change the history tells: seats and pools follow from the holds and orders,
         * an order's items are in its entry, and creating or closing an event is no sale. */
        break;
    }
    /* The core names the event of every record it emits; a record without one (a test's
     * partial record) has no history to go in. */
    if (*event_id == NULL) *type = NULL;
    return *type != NULL;
}

static void items_write(hf_json_t *json, const hf_mutation_items_t *items) {
    HF_JSON_KEY(json, "seats");
    hf_json_array_begin(json);
    for (uint32_t i = 0; i < items->seat_count; i++) hf_json_string(json, items->lines[i].id);
    hf_json_array_end(json);
    HF_JSON_KEY(json, "pools");
    hf_json_object_begin(json);
    for (uint32_t i = items->seat_count; i < items->seat_count + items->pool_count; i++) {
        hf_json_key(json, items->lines[i].id);
        hf_json_int(json, items->lines[i].quantity);
    }
    hf_json_object_end(json);
}

static void string_or_null(hf_json_t *json, const char *text) {
    if (text != NULL && *text != '\0') hf_json_string(json, text);
    else hf_json_null(json);
}

static void hold_create_write(hf_json_t *json, const hf_mutation_hold_create_t *hold) {
    HF_JSON_KEY(json, "reservation_id"); hf_json_string(json, hold->hold_id);
    HF_JSON_KEY(json, "user_id"); hf_json_string(json, hold->user_id);
    items_write(json, &hold->items);
    HF_JSON_KEY(json, "total"); hf_json_int(json, hold->total);
    HF_JSON_KEY(json, "expires_at"); hf_json_time(json, hold->expires_at_ms);
}

static void hold_update_write(hf_json_t *json, const hf_mutation_hold_update_t *hold) {
    HF_JSON_KEY(json, "reservation_id"); hf_json_string(json, hold->hold_id);
    if (hold->status == HF_HOLD_HELD) {
        HF_JSON_KEY(json, "user_id"); string_or_null(json, hold->user_id);
    }
    if (hold->status != HF_HOLD_RELEASED) {
        HF_JSON_KEY(json, "expires_at"); hf_json_time(json, hold->expires_at_ms);
    }
}

static void order_create_write(hf_json_t *json, const hf_mutation_order_create_t *order) {
    if (order->hold_id != NULL) {
        HF_JSON_KEY(json, "reservation_id"); hf_json_string(json, order->hold_id);
    }
    HF_JSON_KEY(json, "order_id"); hf_json_string(json, order->order_id);
    HF_JSON_KEY(json, "user_id"); hf_json_string(json, order->user_id);
    if (order->hold_id == NULL) items_write(json, &order->items);
    HF_JSON_KEY(json, "total"); hf_json_int(json, order->total);
    HF_JSON_KEY(json, "payment_ref"); string_or_null(json, order->payment_ref);
}

static void delivery_write(hf_json_t *json, const hf_mutation_delivery_t *delivery) {
    HF_JSON_KEY(json, "reservation_id"); hf_json_string(json, delivery->reservation_id);
    HF_JSON_KEY(json, "payment_intent_id"); hf_json_string(json, delivery->payment_intent_id);
    HF_JSON_KEY(json, "payment_type");
    hf_json_string(json, hf_payment_type_name((uint8_t)delivery->type));
    HF_JSON_KEY(json, "amount"); hf_json_int(json, delivery->amount);
    HF_JSON_KEY(json, "result");
    hf_json_string(json, hf_payment_result_name((uint8_t)delivery->result));
    if (delivery->order_id) {
        HF_JSON_KEY(json, "order_id"); hf_json_string(json, delivery->order_id);
    }
    if (delivery->late) {
        HF_JSON_KEY(json, "late"); hf_json_bool(json, true);
    }
    if (delivery->refund_id) {
        HF_JSON_KEY(json, "refund_id"); hf_json_string(json, delivery->refund_id);
        HF_JSON_KEY(json, "reason");
        hf_json_string(json, hf_refund_reason_name((uint8_t)delivery->reason));
    }
}

void hf_history_data_write(hf_buffer_t *out, const hf_mutation_t *mutation) {
    hf_json_t json;
    hf_json_init(&json, out);
    hf_json_object_begin(&json);
    switch (mutation->type) {
    case HF_MUTATION_HOLD_CREATE: hold_create_write(&json, &mutation->as.hold_create); break;
    case HF_MUTATION_HOLD_UPDATE: hold_update_write(&json, &mutation->as.hold_update); break;
    case HF_MUTATION_ORDER_CREATE: order_create_write(&json, &mutation->as.order_create); break;
    case HF_MUTATION_ORDER_UPDATE:
        HF_JSON_KEY(&json, "order_id"); hf_json_string(&json, mutation->as.order_update.order_id);
        HF_JSON_KEY(&json, "user_id");
        string_or_null(&json, mutation->as.order_update.user_id);
        /* The refund a paid order's cancel owes, null for an order without payment. */
        HF_JSON_KEY(&json, "refund_id");
        string_or_null(&json, mutation->as.order_update.refund_id);
        break;
    case HF_MUTATION_DELIVERY: delivery_write(&json, &mutation->as.delivery); break;
    default: break; /* hf_history_entry_of made no entry of the others */
    }
    hf_json_object_end(&json);
}
