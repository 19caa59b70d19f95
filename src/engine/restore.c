/* Restore (restore.h): the state is read back from the store's tables into the core. */
#include "engine/restore.h"

#include "engine/decode.h"
#include "engine/errors.h"
#include "engine/idempotency.h"
#include "lib/log.h"

#include <stdio.h>
#include <string.h>

typedef struct restore {
    hf_context_t *context;
    uint64_t finished_holds_max;
    char *error;
    size_t error_size;
    /* Released and expired holds still to come that are older than the newest
     * finished_holds_max: only their seats' versions are counted, so a restart after millions
     * of holds needs no more memory than the server had while running. */
    uint64_t finished_to_skip;
    hf_hold_items_t items;       /* the row being restored's, borrowed from its parsed JSON */
} restore_t;

/* The API's code of a core error, for messages. */
static const char *core_code(hf_error_t error) {
    return hf_errors_entry(hf_errors_from_core(error))->code;
}

static int fail(restore_t *restore, const char *what, const char *id, const char *why) {
    snprintf(restore->error, restore->error_size, "%s %s cannot be restored: %s", what,
             id ? id : "(null)", why);
    return -1;
}

static int restore_event(void *context, const hf_stored_row_t *row) {
    restore_t *restore = context;
    json_t *config = json_loads(row->text ? row->text : "", JSON_REJECT_DUPLICATES, NULL);
    if (!config) return fail(restore, "event", row->event_id, "its config is not JSON");
    hf_event_definition_t definition;
    const char *field, *message;
    bool ok = hf_decode_definition(config, &definition, &field, &message);
    hf_error_t error = ok ? hf_core_restore_event(restore->context->core, &definition, row->at_ms)
                          : HF_ERROR_INVALID_REQUEST;
    hf_decode_definition_free(&definition);
    json_decref(config);
    return error ? fail(restore, "event", row->event_id, core_code(error)) : 0;
}

/* Parses a row's items JSON into request, its arrays in room; returns the parsed document to
 * free, or NULL. */
static json_t *items_parse(const hf_stored_row_t *row, hf_hold_request_t *request,
                           hf_hold_items_t *room) {
    json_t *items = json_loads(row->text ? row->text : "", JSON_REJECT_DUPLICATES, NULL);
    const char *field;
    if (!items) return NULL;
    if (!json_is_object(items) ||
        !hf_decode_items(items, request, room->seat_ids, room->pools, &field)) {
        json_decref(items);
        return NULL;
    }
    request->event_id = row->event_id;
    request->user_id = row->user_id;
    return items;
}

static int restore_finished_count(void *context, uint64_t count) {
    restore_t *restore = context;
    uint64_t keep = restore->finished_holds_max;
    restore->finished_to_skip = count > keep ? count - keep : 0;
    return 0;
}

/* A holds row as the core takes it; returns the parsed items to free, or NULL. */
static json_t *stored_hold_parse(const hf_stored_row_t *row, hf_stored_hold_t *hold,
                                 hf_hold_items_t *room) {
    *hold = (hf_stored_hold_t){.status = (uint8_t)row->status, .created_at_ms = row->at_ms,
                               .expires_at_ms = row->expires_at_ms, .total = row->total};
    json_t *items = items_parse(row, &hold->request, room);
    hold->request.hold_id = row->hold_id;
    return items;
}

static int restore_hold(void *context, const hf_stored_row_t *row) {
    restore_t *restore = context;
    hf_stored_hold_t hold;
    json_t *items = stored_hold_parse(row, &hold, &restore->items);
    if (!items) return fail(restore, "hold", row->hold_id, "its items are not valid");
    bool finished = hold.status == HF_HOLD_RELEASED || hold.status == HF_HOLD_EXPIRED;
    bool skip = finished && restore->finished_to_skip > 0;
    if (skip) restore->finished_to_skip--;
    hf_error_t error = skip ? hf_core_restore_forgotten_hold(restore->context->core, &hold)
                            : hf_core_restore_hold(restore->context->core, &hold);
    json_decref(items);
    return error ? fail(restore, "hold", row->hold_id, core_code(error)) : 0;
}

static int restore_order(void *context, const hf_stored_row_t *row) {
    restore_t *restore = context;
    hf_stored_order_t order = {.order_id = row->order_id, .hold_id = row->hold_id,
                               .status = (uint8_t)row->status, .created_at_ms = row->at_ms,
                               .total = row->total, .payment_ref = row->payment_ref};
    json_t *items = items_parse(row, &order.items, &restore->items);
    if (!items) return fail(restore, "order", row->order_id, "its items are not valid");
    hf_error_t error = hf_core_restore_order(restore->context->core, &order);
    json_decref(items);
    return error ? fail(restore, "order", row->order_id, core_code(error)) : 0;
}

static int restore_idempotency(void *context, const hf_stored_row_t *row) {
    restore_t *restore = context;
    if (!row->key || !row->hash || !row->text) return fail(restore, "idempotency key", row->key, "incomplete");
    hf_idempotency_put(restore->context->idempotency, row->key, strlen(row->key), row->hash,
                       row->status, row->text, strlen(row->text), row->at_ms);
    return 0;
}

int hf_restore_load(hf_context_t *context, hf_store_t *store, uint64_t finished_holds_max,
                    char *error, size_t error_size) {
    restore_t restore = {.context = context, .finished_holds_max = finished_holds_max,
                         .error = error, .error_size = error_size};
    hf_store_loader_t loader = {
        .event = restore_event, .finished_holds = restore_finished_count,
        .hold = restore_hold, .order = restore_order,
        .idempotency = restore_idempotency,
        .keep_since_ms = hf_context_now_ms(context) - HF_IDEMPOTENCY_KEEP_MS, .context = &restore};
    if (hf_store_load(store, &loader, error, error_size) != 0) return -1;
    const char *fault = hf_core_check(context->core, INT64_MIN);
    if (fault) {
        snprintf(error, error_size, "restored state is inconsistent: %s", fault);
        return -1;
    }
    /* Everything loaded is durable: keep only the most recent finished holds, as at run time. */
    hf_core_evict(context->core, UINT64_MAX);
    return 0;
}

/* ---- taking back a forgotten hold ---- */

typedef struct revive {
    hf_context_t *context;
    uint32_t index;
    hf_error_t error;
    hf_hold_items_t items;       /* the hold's, borrowed from its parsed JSON */
} revive_t;

static int revive_hold(void *context, const hf_stored_row_t *row) {
    revive_t *revive = context;
    hf_stored_hold_t hold;
    json_t *items = stored_hold_parse(row, &hold, &revive->items);
    if (!items) {
        revive->error = HF_ERROR_INVALID_REQUEST;
        return -1;
    }
    revive->error = hf_core_revive_hold(revive->context->core, &hold, &revive->index);
    json_decref(items);
    return revive->error ? -1 : 0;
}

bool hf_restore_hold_revive(hf_context_t *context, const char *hold_id, uint32_t *index) {
    /* Only what could be a hold id of this server goes to the store: a lookup of anything
     * else answers 404 from memory, as it did before holds were ever forgotten. */
    if (!context->store || strncmp(hold_id, "res_", 4) != 0 || strlen(hold_id) > HF_SERVER_ID_SIZE)
        return false;
    revive_t revive = {.context = context, .error = HF_OK};
    hf_store_loader_t loader = {.hold = revive_hold, .context = &revive};
    bool found = false;
    char error[512] = "";
    if (hf_store_read_hold(context->store, hold_id, &loader, &found, error, sizeof error) != 0) {
        /* A held or confirmed hold is never forgotten: one in the store but not in memory is
         * one whose creation was never acknowledged (its batch failed), so it stays unknown. */
        hf_log(HF_LOG_WARNING, "hold %s not taken back from the store: %s (%s)", hold_id, error,
               revive.error ? core_code(revive.error) : "read failed");
        return false;
    }
    if (!found) return false;
    *index = revive.index;
    return true;
}
