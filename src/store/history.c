/* Entries of an event's audit history, derived from the batch's records (store/history.h): the
 * type and data functions of the kinds that make entries, which their rows in the table of
 * record kinds name (records.c). */
#include "store/history.h"

#include "core/core.h"
#include "core/jobs.h"
#include "lib/json.h"
#include "store/records.h"
#include "store/rows.h"

/* Each record's entry is its kind's row (records.h): the kinds that make entries have their
 * type and data functions below, the others none. The core names the event of every record
 * it emits; a record without one (a test's partial record) has no history to go in. */
bool hf_history_entry_of(const hf_mutation_t *mutation, const char **type, const char **event_id) {
    const hf_record_row_t *row = hf_record_row(mutation->type);
    *type = NULL;
    *event_id = NULL;
    if (row->history_type == NULL) return false;
    *event_id = hf_record_text(mutation, row->unit);
    if (*event_id != NULL) *type = row->history_type(mutation);
    return *type != NULL;
}

/* ---- The kinds that make entries: the type word, then the data ---- */

const char *hf_history_type_hold_create(const hf_mutation_t *mutation) { return "hold"; }

/* A hold update says what happened by the status it leaves: held is an extension. A
 * confirmation is told by the order it creates (commit, below), which alone carries the
 * payment reference, so the hold's own record of it makes no entry. */
const char *hf_history_type_hold_update(const hf_mutation_t *mutation) {
    switch (mutation->as.hold_update.status) {
    case HF_HOLD_HELD: return "extend";
    case HF_HOLD_RELEASED: return "release";
    case HF_HOLD_EXPIRED: return "expiry";
    default: return NULL;
    }
}

/* A waitlist entry's offer and its end (API.md section 14). */
const char *hf_history_type_waitlist(const hf_mutation_t *mutation) {
    switch (mutation->as.waitlist.status) {
    case HF_WAITLIST_OFFERED: return "waitlist_offer";
    case HF_WAITLIST_FULFILLED: return "waitlist_fulfilled";
    case HF_WAITLIST_LAPSED: return "waitlist_lapsed";
    default: return NULL;
    }
}

/* An exchange's new order is told as the exchange (API.md section 13), in its own unit. */
const char *hf_history_type_order_create(const hf_mutation_t *mutation) {
    if (mutation->as.order_create.replaces != NULL) return "exchange";
    return mutation->as.order_create.hold_id != NULL ? "commit" : "booking";
}

/* An exchanged order makes an entry only when its replacement is in another unit: in the
 * same one, the new order's exchange entry tells it. */
const char *hf_history_type_order_update(const hf_mutation_t *mutation) {
    const hf_mutation_order_update_t *order = &mutation->as.order_update;
    if (order->status == HF_ORDER_EXCHANGED) return order->replaced_elsewhere ? "exchange" : NULL;
    return order->status == HF_ORDER_CANCELLED ? "cancel" : NULL;
}

/* A payment webhook's delivery and what it decided; the commit it made, if any, is its order's
 * own entry. A delivery for an unknown hold names no event. */
const char *hf_history_type_delivery(const hf_mutation_t *mutation) { return "payment"; }

const char *hf_history_type_event_update(const hf_mutation_t *mutation) { return "event_update"; }

static void string_or_null(hf_json_t *json, const char *text) {
    if (text != NULL && *text != '\0') hf_json_string(json, text);
    else hf_json_null(json);
}

/* An entry names its hold (reservation_id) or its order (order_id) and no more of it: the
 * user, seats, pools and a calendar's items are the hold's or the order's row, which a read
 * joins (store.h, hf_stored_history_t; the API renders the joined ones, never a row's own).
 * So the history repeats none of them, and an entry's row is about half as long. */
void hf_history_data_hold_create(hf_json_t *json, const hf_mutation_t *mutation) {
    const hf_mutation_hold_create_t *hold = &mutation->as.hold_create;
    HF_JSON_KEY(json, "reservation_id");
    hf_json_string(json, hold->hold_id);
    HF_JSON_KEY(json, "total");
    hf_json_int(json, hold->total);
    HF_JSON_KEY(json, "expires_at");
    hf_json_time(json, hold->expires_at_ms);
}

void hf_history_data_hold_update(hf_json_t *json, const hf_mutation_t *mutation) {
    const hf_mutation_hold_update_t *hold = &mutation->as.hold_update;
    HF_JSON_KEY(json, "reservation_id");
    hf_json_string(json, hold->hold_id);
    if (hold->status != HF_HOLD_RELEASED) {
        HF_JSON_KEY(json, "expires_at");
        hf_json_time(json, hold->expires_at_ms);
    }
}

void hf_history_data_waitlist(hf_json_t *json, const hf_mutation_t *mutation) {
    const hf_mutation_waitlist_t *entry = &mutation->as.waitlist;
    HF_JSON_KEY(json, "waitlist_id");
    hf_json_string(json, entry->waitlist_id);
    HF_JSON_KEY(json, "user_id");
    hf_json_string(json, entry->user_id);
    HF_JSON_KEY(json, "reservation_id");
    string_or_null(json, entry->hold_id);
    HF_JSON_KEY(json, "quantity");
    hf_json_int(json, entry->quantity);
}

void hf_history_data_order_create(hf_json_t *json, const hf_mutation_t *mutation) {
    const hf_mutation_order_create_t *order = &mutation->as.order_create;
    if (order->hold_id != NULL) {
        HF_JSON_KEY(json, "reservation_id");
        hf_json_string(json, order->hold_id);
    }
    HF_JSON_KEY(json, "order_id");
    hf_json_string(json, order->order_id);
    HF_JSON_KEY(json, "total");
    hf_json_int(json, order->total);
    HF_JSON_KEY(json, "payment_ref");
    string_or_null(json, order->payment_ref);
    if (order->replaces != NULL) {
        HF_JSON_KEY(json, "replaces");
        hf_json_string(json, order->replaces);
    }
}

void hf_history_data_order_update(hf_json_t *json, const hf_mutation_t *mutation) {
    const hf_mutation_order_update_t *order = &mutation->as.order_update;
    HF_JSON_KEY(json, "order_id");
    hf_json_string(json, order->order_id);
    if (order->status == HF_ORDER_EXCHANGED) {
        HF_JSON_KEY(json, "replaced_by");
        string_or_null(json, order->replaced_by);
        return;
    }
    /* The refund a paid order's cancel owes, null for an order without payment. */
    HF_JSON_KEY(json, "refund_id");
    string_or_null(json, order->refund_id);
}

void hf_history_data_delivery(hf_json_t *json, const hf_mutation_t *mutation) {
    const hf_mutation_delivery_t *delivery = &mutation->as.delivery;
    HF_JSON_KEY(json, "reservation_id");
    hf_json_string(json, delivery->reservation_id);
    HF_JSON_KEY(json, "payment_intent_id");
    hf_json_string(json, delivery->payment_intent_id);
    HF_JSON_KEY(json, "payment_type");
    hf_json_string(json, hf_payment_type_name((uint8_t)delivery->type));
    HF_JSON_KEY(json, "amount");
    hf_json_int(json, delivery->amount);
    HF_JSON_KEY(json, "result");
    hf_json_string(json, hf_payment_result_name((uint8_t)delivery->result));
    if (delivery->order_id) {
        HF_JSON_KEY(json, "order_id");
        hf_json_string(json, delivery->order_id);
    }
    if (delivery->late) {
        HF_JSON_KEY(json, "late");
        hf_json_bool(json, true);
    }
    if (delivery->refund_id) {
        HF_JSON_KEY(json, "refund_id");
        hf_json_string(json, delivery->refund_id);
        HF_JSON_KEY(json, "reason");
        hf_json_string(json, hf_refund_reason_name((uint8_t)delivery->reason));
    }
}

/* The sections changed or added: a price only when it changed, the rows appended. */
static void sections_changed_write(hf_json_t *json, const hf_event_definition_t *changes) {
    HF_JSON_KEY(json, "sections");
    hf_json_array_begin(json);
    for (uint32_t s = 0; s < changes->section_count; s++) {
        const hf_section_definition_t *section = &changes->sections[s];
        hf_json_object_begin(json);
        HF_JSON_KEY(json, "id");
        hf_json_string(json, section->id);
        if (section->price >= 0) {
            HF_JSON_KEY(json, "price");
            hf_json_int(json, section->price);
        }
        if (section->row_count > 0) {
            HF_JSON_KEY(json, "rows");
            hf_json_array_begin(json);
            for (uint32_t r = 0; r < section->row_count; r++) {
                hf_json_object_begin(json);
                HF_JSON_KEY(json, "id");
                hf_json_string(json, section->rows[r].id);
                HF_JSON_KEY(json, "seats");
                hf_json_int(json, section->rows[r].seats);
                hf_json_object_end(json);
            }
            hf_json_array_end(json);
        }
        hf_json_object_end(json);
    }
    hf_json_array_end(json);
}

static void pools_changed_write(hf_json_t *json, const hf_event_definition_t *changes) {
    HF_JSON_KEY(json, "pools");
    hf_json_array_begin(json);
    for (uint32_t p = 0; p < changes->pool_count; p++) {
        const hf_pool_definition_t *pool = &changes->pools[p];
        hf_json_object_begin(json);
        HF_JSON_KEY(json, "id");
        hf_json_string(json, pool->id);
        if (pool->capacity >= 0) {
            HF_JSON_KEY(json, "capacity");
            hf_json_int(json, pool->capacity);
        }
        if (pool->price >= 0) {
            HF_JSON_KEY(json, "price");
            hf_json_int(json, pool->price);
        }
        hf_json_object_end(json);
    }
    hf_json_array_end(json);
}

/* The names of what changed, then each changed member with its new value, as PATCH takes it. */
void hf_history_data_event_update(hf_json_t *json, const hf_mutation_t *mutation) {
    const hf_mutation_event_update_t *update = &mutation->as.event_update;
    static const struct {
        uint32_t bit;
        const char *name;
    } MEMBERS[] = {{HF_EVENT_MEMBER_NAME, "name"},
                   {HF_EVENT_MEMBER_HOLD_TTL, "hold_ttl_s"},
                   {HF_EVENT_MEMBER_MAX_HOLD, "max_hold_s"},
                   {HF_EVENT_MEMBER_MAX_SEATS_PER_USER, "max_seats_per_user"},
                   {HF_EVENT_MEMBER_MAX_SEATS_PER_HOLD, "max_seats_per_hold"},
                   {HF_EVENT_MEMBER_WAITING_ROOM, "waiting_room"},
                   {HF_EVENT_MEMBER_WAITLIST, "waitlist"},
                   {HF_EVENT_MEMBER_SECTIONS, "sections"},
                   {HF_EVENT_MEMBER_POOLS, "pools"}};
    const hf_event_definition_t *changes = update->changes;
    HF_JSON_KEY(json, "changed");
    hf_json_array_begin(json);
    for (size_t i = 0; i < sizeof MEMBERS / sizeof MEMBERS[0]; i++)
        if (update->members & MEMBERS[i].bit) hf_json_string(json, MEMBERS[i].name);
    hf_json_array_end(json);
    uint32_t members = update->members;
    if (members & HF_EVENT_MEMBER_NAME) {
        HF_JSON_KEY(json, "name");
        hf_json_string(json, changes->name);
    }
    if (members & HF_EVENT_MEMBER_HOLD_TTL) {
        HF_JSON_KEY(json, "hold_ttl_s");
        hf_json_seconds(json, changes->hold_ttl_ms);
    }
    if (members & HF_EVENT_MEMBER_MAX_HOLD) {
        HF_JSON_KEY(json, "max_hold_s");
        hf_json_seconds(json, changes->max_hold_ms);
    }
    if (members & HF_EVENT_MEMBER_MAX_SEATS_PER_USER) {
        HF_JSON_KEY(json, "max_seats_per_user");
        hf_json_int(json, changes->max_seats_per_user);
    }
    if (members & HF_EVENT_MEMBER_MAX_SEATS_PER_HOLD) {
        HF_JSON_KEY(json, "max_seats_per_hold");
        hf_json_int(json, changes->max_seats_per_hold);
    }
    if (members & HF_EVENT_MEMBER_WAITING_ROOM) {
        HF_JSON_KEY(json, "waiting_room");
        hf_rows_room_render(json, &changes->waiting_room, changes->waiting_room.admit_per_s > 0);
    }
    if (members & HF_EVENT_MEMBER_WAITLIST) {
        HF_JSON_KEY(json, "waitlist");
        hf_json_object_begin(json);
        HF_JSON_KEY(json, "enabled");
        hf_json_bool(json, changes->waitlist.enabled);
        HF_JSON_KEY(json, "offer_ttl_s");
        hf_json_int(json, changes->waitlist.offer_ttl_ms / 1000);
        hf_json_object_end(json);
    }
    if (members & HF_EVENT_MEMBER_SECTIONS) sections_changed_write(json, changes);
    if (members & HF_EVENT_MEMBER_POOLS) pools_changed_write(json, changes);
}

void hf_history_data_write(hf_buffer_t *out, const hf_mutation_t *mutation) {
    const hf_record_row_t *row = hf_record_row(mutation->type);
    hf_json_t json;
    hf_json_init(&json, out);
    hf_json_object_begin(&json);
    /* hf_history_entry_of made no entry of a kind without data. */
    if (row->history_data != NULL) row->history_data(&json, mutation);
    hf_json_object_end(&json);
}

/* An allocation's creation and its releases; a released item that came free later is told by
 * the hold's or order's own entry. */
const char *hf_history_type_allocation(const hf_mutation_t *mutation) {
    switch (mutation->as.allocation.change) {
    case HF_ALLOCATION_CREATED: return "allocation";
    case HF_ALLOCATION_RELEASED: return "allocation_release";
    default: return NULL;
    }
}

/* The allocation as it stands after the change: its seats (released ones, still held or sold,
 * under released_seats) and its pools' units (released_units: those given to the public once
 * they come free). */
void hf_history_data_allocation(hf_json_t *json, const hf_mutation_t *mutation) {
    const hf_mutation_allocation_t *allocation = &mutation->as.allocation;
    HF_JSON_KEY(json, "allocation");
    hf_json_string(json, allocation->allocation_id);
    for (int released = 0; released <= 1; released++) {
        hf_json_key(json, released ? "released_seats" : "seats");
        hf_json_array_begin(json);
        for (uint32_t i = 0; i < allocation->seat_count; i++)
            if (allocation->seats[i].released == (released == 1))
                hf_json_string(json, allocation->seats[i].seat_id);
        hf_json_array_end(json);
    }
    for (int released = 0; released <= 1; released++) {
        hf_json_key(json, released ? "released_units" : "pools");
        hf_json_object_begin(json);
        for (uint32_t i = 0; i < allocation->pool_count; i++) {
            const hf_mutation_allocation_pool_t *pool = &allocation->pools[i];
            hf_json_key(json, pool->pool_id);
            hf_json_int(json,
                        released ? pool->release_pending : pool->units - pool->release_pending);
        }
        hf_json_object_end(json);
    }
}

/* A cancel job (core/jobs.h): the event's cancel is an entry, and so is the job's end (the
 * step that went through its last order; the steps before tell their orders only). */
const char *hf_history_type_event_cancel(const hf_mutation_t *mutation) { return "event_cancel"; }

const char *hf_history_type_job(const hf_mutation_t *mutation) {
    return mutation->as.job.finished ? "job_done" : NULL;
}

static void job_write(hf_json_t *json, const hf_mutation_job_t *job) {
    HF_JSON_KEY(json, "job_id");
    hf_json_string(json, job->job_id);
    HF_JSON_KEY(json, "rebook_to");
    string_or_null(json, job->rebook_to);
    HF_JSON_KEY(json, "orders");
    hf_json_int(json, job->orders);
}

void hf_history_data_event_cancel(hf_json_t *json, const hf_mutation_t *mutation) {
    job_write(json, &mutation->as.job);
}

void hf_history_data_job(hf_json_t *json, const hf_mutation_t *mutation) {
    const hf_mutation_job_t *job = &mutation->as.job;
    job_write(json, job);
    HF_JSON_KEY(json, "offered");
    hf_json_int(json, job->offered);
    HF_JSON_KEY(json, "accepted");
    hf_json_int(json, job->accepted);
    HF_JSON_KEY(json, "refunded");
    hf_json_int(json, job->refunded);
}
