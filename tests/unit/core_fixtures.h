/* Shared helpers of the core's unit tests and simulation: a mutation sink that records what the
 * core emits, a small builder of event definitions, and the look-ups and checks the tests of
 * the core make on it (an event, a seat, a hold that must be there; hf_core_check; no record).
 * Header-only (static functions) so each test binary stays a single translation unit; include
 * it after cmocka.h. */
#ifndef HF_TESTS_CORE_FIXTURES_H
#define HF_TESTS_CORE_FIXTURES_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "engine/errors.h"

/* The API's code of a core error ("seats_unavailable"), for messages: the engine's table
 * names the core's errors. */
static inline const char *fx_error_code(hf_error_t error) {
    return error == HF_OK ? "ok" : hf_errors_entry(hf_errors_from_core(error))->code;
}

/* ---- Recording sink ---- */

#define FX_TYPES ((int)HF_RECORD_KIND_LIMIT)
#define FX_TEXT_SIZE 160

/* A copy of one mutation record: the fields the tests look at. */
typedef struct fx_record {
    int type;
    int64_t at_ms;
    char event_id[HF_ID_SIZE_MAX + 1];
    char seat_id[HF_SEAT_ID_SIZE_MAX + 1];
    char pool_id[HF_ID_SIZE_MAX + 1];
    char hold_id[HF_SERVER_ID_SIZE + 8];
    char order_id[HF_SERVER_ID_SIZE + 8];
    char user_id[HF_USER_ID_SIZE_MAX + 1];
    bool has_order_id;
    int64_t total;
    int64_t expires_at_ms;
    uint32_t version;
    uint32_t quantity;
    int status;
    int64_t available, held, sold; /* HF_MUTATION_POOL */
    /* HF_MUTATION_DELIVERY (event_id: the named hold's event; hold_id: the reservation_id as
     * delivered; status: the result) and HF_MUTATION_REFUND (hold_id: its reservation_id). */
    char payment_intent_id[FX_TEXT_SIZE];
    char refund_id[HF_SERVER_ID_SIZE + 8];
    int64_t amount, created_at_ms;
    int payment_type, reason;
    bool late;
} fx_record_t;

/* Keeps the first `capacity` records; counts all of them by type. */
typedef struct fx_sink {
    fx_record_t *records;
    size_t count; /* records kept */
    size_t capacity;
    size_t total; /* records emitted */
    size_t by_type[FX_TYPES];
} fx_sink_t;

static inline void fx_copy(char *out, size_t size, const char *text) {
    if (text == NULL) {
        out[0] = '\0';
        return;
    }
    snprintf(out, size, "%s", text);
}

/* fx_record_fill for orders' records. */
static inline void fx_order_record_fill(fx_record_t *record, const hf_mutation_t *mutation) {
    switch (mutation->type) {
    case HF_MUTATION_ORDER_CREATE: {
        const hf_mutation_order_create_t *order = &mutation->as.order_create;
        fx_copy(record->event_id, sizeof record->event_id, order->event_id);
        fx_copy(record->order_id, sizeof record->order_id, order->order_id);
        fx_copy(record->hold_id, sizeof record->hold_id, order->hold_id);
        fx_copy(record->user_id, sizeof record->user_id, order->user_id);
        record->has_order_id = true;
        record->total = order->total;
        record->status = order->status;
        break;
    }
    case HF_MUTATION_ORDER_ITEM: {
        const hf_mutation_order_item_t *item = &mutation->as.order_item;
        fx_copy(record->event_id, sizeof record->event_id, item->event_id);
        fx_copy(record->order_id, sizeof record->order_id, item->order_id);
        fx_copy(record->seat_id, sizeof record->seat_id, item->seat_id);
        fx_copy(record->pool_id, sizeof record->pool_id, item->pool_id);
        record->has_order_id = true;
        record->quantity = item->quantity;
        break;
    }
    case HF_MUTATION_ORDER_UPDATE: {
        const hf_mutation_order_update_t *order = &mutation->as.order_update;
        fx_copy(record->event_id, sizeof record->event_id, order->event_id);
        fx_copy(record->order_id, sizeof record->order_id, order->order_id);
        fx_copy(record->user_id, sizeof record->user_id, order->user_id);
        record->has_order_id = true;
        record->status = order->status;
        break;
    }
    default: break;
    }
}

/* fx_record_fill for payments' records. */
static inline void fx_payment_record_fill(fx_record_t *record, const hf_mutation_t *mutation) {
    if (mutation->type == HF_MUTATION_DELIVERY) {
        const hf_mutation_delivery_t *delivery = &mutation->as.delivery;
        fx_copy(record->event_id, sizeof record->event_id, delivery->hold_event_id);
        fx_copy(record->payment_intent_id, sizeof record->payment_intent_id,
                delivery->payment_intent_id);
        fx_copy(record->hold_id, sizeof record->hold_id, delivery->reservation_id);
        fx_copy(record->order_id, sizeof record->order_id, delivery->order_id);
        fx_copy(record->refund_id, sizeof record->refund_id, delivery->refund_id);
        record->has_order_id = delivery->order_id != NULL;
        record->amount = delivery->amount;
        record->payment_type = delivery->type;
        record->status = delivery->result;
        record->reason = delivery->reason;
        record->late = delivery->late;
    } else if (mutation->type == HF_MUTATION_REFUND) {
        const hf_mutation_refund_t *refund = &mutation->as.refund;
        fx_copy(record->refund_id, sizeof record->refund_id, refund->refund_id);
        fx_copy(record->payment_intent_id, sizeof record->payment_intent_id,
                refund->payment_intent_id);
        fx_copy(record->hold_id, sizeof record->hold_id, refund->reservation_id);
        record->amount = refund->amount;
        record->reason = refund->reason;
        record->status = refund->status;
        record->created_at_ms = refund->created_at_ms;
    } else {
        fx_order_record_fill(record, mutation);
    }
}

/* The fields of each kind of record into the flat copy (absent ones stay empty). */
static inline void fx_record_fill(fx_record_t *record, const hf_mutation_t *mutation) {
    switch (mutation->type) {
    case HF_MUTATION_EVENT_CREATE:
        fx_copy(record->event_id, sizeof record->event_id, mutation->as.event_create.event_id);
        break;
    case HF_MUTATION_EVENT_SALES:
        fx_copy(record->event_id, sizeof record->event_id, mutation->as.event_sales.event_id);
        record->status = mutation->as.event_sales.sales_open;
        break;
    case HF_MUTATION_SEAT: {
        const hf_mutation_seat_t *seat = &mutation->as.seat;
        fx_copy(record->event_id, sizeof record->event_id, seat->event_id);
        fx_copy(record->seat_id, sizeof record->seat_id, seat->seat_id);
        record->status = seat->status;
        record->version = seat->version;
        break;
    }
    case HF_MUTATION_POOL: {
        const hf_mutation_pool_t *pool = &mutation->as.pool;
        fx_copy(record->event_id, sizeof record->event_id, pool->event_id);
        fx_copy(record->pool_id, sizeof record->pool_id, pool->pool_id);
        record->available = pool->available;
        record->held = pool->held;
        record->sold = pool->sold;
        break;
    }
    case HF_MUTATION_HOLD_CREATE: {
        const hf_mutation_hold_create_t *hold = &mutation->as.hold_create;
        fx_copy(record->event_id, sizeof record->event_id, hold->event_id);
        fx_copy(record->hold_id, sizeof record->hold_id, hold->hold_id);
        fx_copy(record->user_id, sizeof record->user_id, hold->user_id);
        record->total = hold->total;
        record->expires_at_ms = hold->expires_at_ms;
        record->status = hold->status;
        break;
    }
    case HF_MUTATION_HOLD_UPDATE: {
        const hf_mutation_hold_update_t *hold = &mutation->as.hold_update;
        fx_copy(record->event_id, sizeof record->event_id, hold->event_id);
        fx_copy(record->hold_id, sizeof record->hold_id, hold->hold_id);
        fx_copy(record->order_id, sizeof record->order_id, hold->order_id);
        fx_copy(record->user_id, sizeof record->user_id, hold->user_id);
        record->has_order_id = hold->order_id != NULL;
        record->expires_at_ms = hold->expires_at_ms;
        record->status = hold->status;
        break;
    }
    default: fx_payment_record_fill(record, mutation); break;
    }
}

static inline void fx_sink_emit(void *context, const hf_mutation_t *mutation) {
    fx_sink_t *sink = context;
    sink->total++;
    if (mutation->type >= 0 && mutation->type < FX_TYPES) sink->by_type[mutation->type]++;
    if (sink->count >= sink->capacity) return;
    fx_record_t *record = &sink->records[sink->count++];
    memset(record, 0, sizeof *record);
    record->type = mutation->type;
    record->at_ms = mutation->at_ms;
    fx_record_fill(record, mutation);
}

static inline void fx_sink_init(fx_sink_t *sink, size_t capacity) {
    memset(sink, 0, sizeof *sink);
    sink->capacity = capacity;
    sink->records = calloc(capacity ? capacity : 1, sizeof *sink->records);
}

static inline void fx_sink_reset(fx_sink_t *sink) {
    sink->count = 0;
    sink->total = 0;
    memset(sink->by_type, 0, sizeof sink->by_type);
}

static inline void fx_sink_free(fx_sink_t *sink) {
    free(sink->records);
    sink->records = NULL;
}

static inline hf_mutation_sink_t fx_sink_of(fx_sink_t *sink) {
    hf_mutation_sink_t out = {.emit = fx_sink_emit, .context = sink};
    return out;
}

/* The kept record of a seat's change, last one first; NULL when none. */
static inline const fx_record_t *fx_sink_seat(const fx_sink_t *sink, const char *seat_id) {
    for (size_t i = sink->count; i-- > 0;) {
        if (sink->records[i].type == HF_MUTATION_SEAT &&
            strcmp(sink->records[i].seat_id, seat_id) == 0)
            return &sink->records[i];
    }
    return NULL;
}

static inline const fx_record_t *fx_sink_first(const fx_sink_t *sink, int type) {
    for (size_t i = 0; i < sink->count; i++)
        if (sink->records[i].type == type) return &sink->records[i];
    return NULL;
}

/* A core whose records go to sink, which keeps the first `capacity` of them. */
static inline hf_core_t *fx_core_create(fx_sink_t *sink, size_t capacity) {
    fx_sink_init(sink, capacity);
    hf_core_t *core = hf_core_create(fx_sink_of(sink));
    assert_non_null(core);
    return core;
}

static inline void fx_core_destroy(hf_core_t *core, fx_sink_t *sink) {
    hf_core_destroy(core);
    fx_sink_free(sink);
}

/* ---- Look-ups that fail the test when the thing is not there ---- */

static inline const hf_event_t *fx_event_of(const hf_core_t *core, const char *event_id) {
    const hf_event_t *event = hf_core_event(core, event_id, NULL);
    if (event == NULL) fail_msg("no event %s", event_id);
    return event;
}

static inline const hf_seat_t *fx_seat_of(const hf_core_t *core, const char *event_id,
                                          const char *seat_id) {
    const hf_event_t *event = fx_event_of(core, event_id);
    uint32_t index = UINT32_MAX;
    if (!hf_core_seat_find(event, seat_id, &index)) fail_msg("no seat %s", seat_id);
    assert_true(index < event->seat_count);
    return &event->seats[index];
}

/* The hold found by id, which must also be the one at the index the look-up answers. */
static inline const hf_hold_t *fx_hold_of(const hf_core_t *core, const char *hold_id) {
    uint32_t index = UINT32_MAX;
    const hf_hold_t *hold = hf_core_hold_find(core, hold_id, &index);
    if (hold == NULL) fail_msg("no hold %s", hold_id);
    assert_ptr_equal(hf_core_hold_at(core, index), hold);
    return hold;
}

/* ---- Checks ---- */

/* The core's own consistency check (hf_core_check) at `now`. */
static inline void fx_assert_consistent(const hf_core_t *core, hf_time_ms_t now) {
    const char *fault = hf_core_check(core, now);
    if (fault != NULL) fail_msg("hf_core_check: %s", fault);
}

/* Nothing emitted since the sink's last reset (an error emits no record). */
static inline void fx_assert_no_mutation(const fx_sink_t *sink) {
    if (sink->total != 0)
        fail_msg("expected no mutation, got %zu (first type %d)", sink->total,
                 sink->count ? sink->records[0].type : -1);
}

/* hf_core_hold with the request given; index and detail may be NULL when the test does not
 * look at them (detail is cleared first, as the engine does). */
static inline hf_error_t fx_hold(hf_core_t *core, const hf_hold_request_t *request,
                                 hf_time_ms_t now, uint32_t *index, hf_error_detail_t *detail) {
    static hf_error_detail_t scratch;
    uint32_t unused = UINT32_MAX;
    memset(detail ? detail : &scratch, 0, sizeof scratch);
    return hf_core_hold(core, request, now, index ? index : &unused, detail ? detail : &scratch);
}

/* ---- Event definition builder ---- */

#define FX_SECTIONS_MAX 8
#define FX_ROWS_MAX 8
#define FX_POOLS_MAX 4

typedef struct fx_event {
    hf_event_definition_t definition;
    hf_section_definition_t sections[FX_SECTIONS_MAX];
    hf_row_definition_t rows[FX_SECTIONS_MAX][FX_ROWS_MAX];
    hf_pool_definition_t pools[FX_POOLS_MAX];
} fx_event_t;

static inline void fx_event_init(fx_event_t *event, const char *id, int64_t hold_ttl_ms,
                                 int64_t max_hold_ms, uint32_t max_seats_per_user,
                                 uint32_t max_seats_per_hold) {
    memset(event, 0, sizeof *event);
    hf_event_definition_t *definition = &event->definition;
    snprintf(definition->id, sizeof definition->id, "%s", id);
    snprintf(definition->name, sizeof definition->name, "Event %s", id);
    snprintf(definition->currency, sizeof definition->currency, "USD");
    definition->hold_ttl_ms = hold_ttl_ms;
    definition->max_hold_ms = max_hold_ms;
    definition->max_seats_per_user = max_seats_per_user;
    definition->max_seats_per_hold = max_seats_per_hold;
    definition->sections = event->sections;
    definition->pools = event->pools;
}

/* Adds a section with rows named A, B, C... of `seats` seats each. */
static inline void fx_event_section(fx_event_t *event, const char *id, int64_t price, uint32_t rows,
                                    uint32_t seats) {
    hf_event_definition_t *definition = &event->definition;
    uint32_t s = definition->section_count++;
    hf_section_definition_t *section = &event->sections[s];
    snprintf(section->id, sizeof section->id, "%s", id);
    section->price = price;
    section->row_count = rows;
    section->rows = event->rows[s];
    for (uint32_t r = 0; r < rows; r++) {
        snprintf(event->rows[s][r].id, sizeof event->rows[s][r].id, "%c", (char)('A' + r));
        event->rows[s][r].seats = seats;
    }
}

static inline void fx_event_pool(fx_event_t *event, const char *id, int64_t capacity,
                                 int64_t price) {
    hf_event_definition_t *definition = &event->definition;
    hf_pool_definition_t *pool = &event->pools[definition->pool_count++];
    snprintf(pool->id, sizeof pool->id, "%s", id);
    pool->capacity = capacity;
    pool->price = price;
}

/* A request's seat list or pool list and its length, as two arguments. */
#define SEATS(...) \
    (const char *const[]){__VA_ARGS__}, \
        (uint32_t)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))
#define NO_SEATS NULL, 0
#define POOLS(...) \
    (const hf_pool_request_t[]){__VA_ARGS__}, \
        (uint32_t)(sizeof((const hf_pool_request_t[]){__VA_ARGS__}) / sizeof(hf_pool_request_t))
#define NO_POOLS NULL, 0

#endif
