/* Restore (restore.h): the state is read back from the store's tables into the core. */
#include "engine/restore.h"

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
    hf_progress_t *progress; /* NULL: none shown */
} restore_t;

static void tick(restore_t *restore) {
    if (restore->progress) hf_progress_add(restore->progress, 1);
}

/* The API's code of a core error, for messages. */
static const char *core_code(hf_error_t error) {
    return hf_errors_entry(hf_errors_from_core(error))->code;
}

static int fail(restore_t *restore, const char *what, const char *id, hf_error_t error) {
    snprintf(restore->error, restore->error_size, "%s %s cannot be restored: %s", what,
             id ? id : "(null)", core_code(error));
    return -1;
}

static int restore_event(void *context, const hf_stored_event_t *event) {
    restore_t *restore = context;
    hf_error_t error = hf_core_restore_event(restore->context->core, event->definition,
                                             event->created_at_ms);
    if (!error)
        error = hf_core_restore_sales(restore->context->core, event->definition->id,
                                      event->sales_open);
    return error ? fail(restore, "event", event->definition->id, error) : 0;
}

static int restore_allocation(void *context, const hf_stored_allocation_t *allocation) {
    restore_t *restore = context;
    hf_error_t error = hf_core_restore_allocation(restore->context->core, allocation);
    return error ? fail(restore, "allocation", allocation->allocation_id, error) : 0;
}

static int restore_calendar(void *context, const hf_stored_calendar_t *calendar) {
    restore_t *restore = context;
    hf_core_t *core = restore->context->core;
    hf_error_t error = hf_core_restore_calendar(core, calendar->definition,
                                                calendar->created_at_ms);
    if (!error)
        error = hf_core_restore_calendar_sales(core, calendar->definition->id,
                                               calendar->sales_open);
    return error ? fail(restore, "calendar", calendar->definition->id, error) : 0;
}

/* Each resource is appended to its calendar as a definition of its own. */
static int restore_calendar_resource(void *context, const char *calendar_id,
                                     const hf_resource_definition_t *resource) {
    restore_t *restore = context;
    hf_calendar_definition_t definition = {.resource_count = 1, .resources = resource};
    snprintf(definition.id, sizeof definition.id, "%s", calendar_id ? calendar_id : "");
    hf_error_t error = hf_core_restore_calendar(restore->context->core, &definition, 0);
    return error ? fail(restore, "resource of calendar", calendar_id, error) : 0;
}

/* A finished calendar hold older than the newest kept is not kept: it has nothing to count. */
static int restore_calendar_hold(void *context, const hf_stored_calendar_hold_t *hold) {
    restore_t *restore = context;
    tick(restore);
    bool finished = hold->status == HF_HOLD_RELEASED || hold->status == HF_HOLD_EXPIRED;
    if (finished && restore->finished_to_skip > 0) {
        restore->finished_to_skip--;
        return 0;
    }
    hf_error_t error = hf_core_restore_calendar_hold(restore->context->core, hold);
    return error ? fail(restore, "hold", hold->request.hold_id, error) : 0;
}

static int restore_calendar_order(void *context, const hf_stored_calendar_order_t *order) {
    restore_t *restore = context;
    tick(restore);
    hf_error_t error = hf_core_restore_calendar_order(restore->context->core, order);
    return error ? fail(restore, "order", order->order_id, error) : 0;
}

static int restore_finished_count(void *context, uint64_t count) {
    restore_t *restore = context;
    uint64_t keep = restore->finished_holds_max;
    restore->finished_to_skip = count > keep ? count - keep : 0;
    return 0;
}

static int restore_hold(void *context, const hf_stored_hold_t *hold) {
    restore_t *restore = context;
    tick(restore);
    bool finished = hold->status == HF_HOLD_RELEASED || hold->status == HF_HOLD_EXPIRED;
    bool skip = finished && restore->finished_to_skip > 0;
    if (skip) restore->finished_to_skip--;
    hf_error_t error = skip ? hf_core_restore_forgotten_hold(restore->context->core, hold)
                            : hf_core_restore_hold(restore->context->core, hold);
    return error ? fail(restore, "hold", hold->request.hold_id, error) : 0;
}

static int restore_order(void *context, const hf_stored_order_t *order) {
    restore_t *restore = context;
    tick(restore);
    hf_error_t error = hf_core_restore_order(restore->context->core, order);
    return error ? fail(restore, "order", order->order_id, error) : 0;
}

static int restore_idempotency(void *context, const hf_stored_idempotency_t *answer) {
    restore_t *restore = context;
    /* A unit's load (a takeover) reads the unit's keys; with several nodes a key is kept per
     * unit, so another unit's may have it already: the one known first stays. */
    if (hf_idempotency_find(restore->context->idempotency, answer->key, strlen(answer->key)))
        return 0;
    hf_idempotency_put(restore->context->idempotency, answer->key, strlen(answer->key),
                       answer->hash, answer->status, answer->body, strlen(answer->body),
                       answer->created_at_ms);
    return 0;
}

static int restore_refund(void *context, const hf_stored_refund_t *refund) {
    restore_t *restore = context;
    tick(restore);
    hf_error_t error = hf_core_restore_refund(restore->context->core, refund);
    return error ? fail(restore, "refund", refund->refund_id, error) : 0;
}

static int restore_job(void *context, const hf_stored_job_t *job) {
    restore_t *restore = context;
    hf_error_t error = hf_core_restore_job(restore->context->core, job);
    return error ? fail(restore, "job", job->job_id, error) : 0;
}

static int restore_job_offer(void *context, const hf_stored_job_offer_t *offer) {
    restore_t *restore = context;
    tick(restore);
    hf_error_t error = hf_core_restore_job_offer(restore->context->core, offer);
    return error ? fail(restore, "job offer of", offer->order_id, error) : 0;
}

static int restore_delivery(void *context, const hf_stored_delivery_t *delivery) {
    restore_t *restore = context;
    hf_error_t error = hf_core_restore_delivery(restore->context->core, delivery);
    return error ? fail(restore, "delivery of", delivery->payment_intent_id, error) : 0;
}

/* A waiting room's ticket: a waiting one's abandonment clock starts again now. */
static int restore_ticket(void *context, const hf_stored_ticket_t *ticket) {
    restore_t *restore = context;
    hf_error_t error = hf_core_restore_ticket(restore->context->core, ticket,
                                              hf_context_now_ms(restore->context));
    return error ? fail(restore, "ticket", ticket->ticket_id, error) : 0;
}

/* An order's lock by an exchange of another unit (core/locks.h), after its order. */
static int restore_order_lock(void *context, const hf_stored_order_lock_t *lock) {
    restore_t *restore = context;
    hf_core_order_lock_restore(restore->context->core, lock);
    return 0;
}

static int restore_waitlist(void *context, const hf_stored_waitlist_t *entry) {
    restore_t *restore = context;
    hf_error_t error = hf_core_restore_waitlist(restore->context->core, entry);
    return error ? fail(restore, "waitlist entry", entry->waitlist_id, error) : 0;
}

static int restore_driver(void *context, const hf_stored_driver_t *driver) {
    restore_t *restore = context;
    hf_error_t error = hf_dispatch_restore_driver(restore->context->core, driver);
    return error ? fail(restore, "driver", driver->driver_id, error) : 0;
}

static int restore_ride(void *context, const hf_stored_ride_t *ride) {
    restore_t *restore = context;
    hf_error_t error = hf_dispatch_restore_ride(restore->context->core, ride);
    return error ? fail(restore, "ride", ride->ride_id, error) : 0;
}

int hf_restore_load(hf_context_t *context, hf_store_t *store, uint64_t finished_holds_max,
                    char *error, size_t error_size) {
    return hf_restore_load_progress(context, store, finished_holds_max, NULL, error, error_size);
}

/* The loader of every restore: callbacks into restore's core, keys and deliveries kept as
 * at run time from now_ms. */
static hf_store_loader_t restore_loader(restore_t *restore, int64_t now_ms) {
    return (hf_store_loader_t){.event = restore_event,
                               .finished_holds = restore_finished_count,
                               .hold = restore_hold,
                               .order = restore_order,
                               .idempotency = restore_idempotency,
                               .refund = restore_refund,
                               .job = restore_job,
                               .job_offer = restore_job_offer,
                               .delivery = restore_delivery,
                               .ticket = restore_ticket,
                               .waitlist = restore_waitlist,
                               .order_lock = restore_order_lock,
                               .driver = restore_driver,
                               .ride = restore_ride,
                               .calendar = restore_calendar,
                               .calendar_resource = restore_calendar_resource,
                               .calendar_hold = restore_calendar_hold,
                               .calendar_order = restore_calendar_order,
                               .allocation = restore_allocation,
                               .keep_since_ms = now_ms - HF_IDEMPOTENCY_KEEP_MS,
                               .deliveries_since_ms = now_ms - HF_WEBHOOK_DEDUP_KEEP_MS,
                               .context = restore};
}

/* Loads every unit (unit NULL), one (a takeover, cluster/cluster.h), or one unit's rows
 * fetched before (rows not NULL; freed). */
static int restore_units(hf_context_t *context, hf_store_t *store, const char *unit, void *rows,
                         int64_t rows_now_ms, uint64_t finished_holds_max, hf_progress_t *progress,
                         char *error, size_t error_size) {
    /* The row's own reason, kept apart: the store writes its "loading stopped at" over
     * error when a callback fails. */
    char reason[256] = "";
    restore_t restore = {.context = context,
                         .finished_holds_max = finished_holds_max,
                         .error = reason,
                         .error_size = sizeof reason,
                         .progress = progress};
    int64_t now_ms = rows ? rows_now_ms : hf_context_now_ms(context);
    hf_store_loader_t loader = restore_loader(&restore, now_ms);
    int loaded = rows   ? hf_store_unit_deliver(store, rows, &loader, error, error_size)
                 : unit ? hf_store_unit_load(store, unit, &loader, error, error_size)
                        : hf_store_load(store, &loader, error, error_size);
    if (loaded != 0) {
        if (reason[0]) snprintf(error, error_size, "%s", reason);
        return -1;
    }
    hf_core_restore_finish(context->core);
    const char *fault = hf_core_check(context->core, INT64_MIN);
    if (!fault) fault = hf_dispatch_check(context->core);
    if (fault) {
        snprintf(error, error_size, "restored state is inconsistent: %s", fault);
        return -1;
    }
    /* Everything loaded is durable: keep only the most recent finished holds, as at run time. */
    hf_core_evict(context->core, unit || rows ? context->durable_changes : UINT64_MAX);
    return 0;
}

int hf_restore_load_progress(hf_context_t *context, hf_store_t *store, uint64_t finished_holds_max,
                             hf_progress_t *progress, char *error, size_t error_size) {
    return restore_units(context, store, NULL, NULL, 0, finished_holds_max, progress, error,
                         error_size);
}

int hf_restore_load_unit(hf_context_t *context, hf_store_t *store, const char *unit,
                         uint64_t finished_holds_max, char *error, size_t error_size) {
    return restore_units(context, store, unit, NULL, 0, finished_holds_max, NULL, error,
                         error_size);
}

int hf_restore_unit_fetch(hf_store_t *store, const char *unit, int64_t now_ms, void **rows,
                          char *error, size_t error_size) {
    /* Only which callbacks are set and the since values count here: none is called. */
    hf_store_loader_t loader = restore_loader(NULL, now_ms);
    return hf_store_unit_fetch(store, unit, &loader, rows, error, error_size);
}

int hf_restore_unit_deliver(hf_context_t *context, hf_store_t *store, void *rows, int64_t now_ms,
                            uint64_t finished_holds_max, char *error, size_t error_size) {
    if (!rows) {
        snprintf(error, error_size, "no rows were fetched");
        return -1;
    }
    return restore_units(context, store, NULL, rows, now_ms, finished_holds_max, NULL, error,
                         error_size);
}

/* ---- taking back a forgotten hold ---- */

typedef struct revive {
    hf_context_t *context;
    uint32_t index;
    hf_error_t error;
} revive_t;

static int revive_hold(void *context, const hf_stored_hold_t *hold) {
    revive_t *revive = context;
    revive->error = hf_core_revive_hold(revive->context->core, hold, &revive->index);
    return revive->error ? -1 : 0;
}

static int revive_calendar_hold(void *context, const hf_stored_calendar_hold_t *hold) {
    revive_t *revive = context;
    revive->error = hf_core_revive_calendar_hold(revive->context->core, hold, &revive->index);
    return revive->error ? -1 : 0;
}

static int revive_ticket(void *context, const hf_stored_ticket_t *ticket) {
    revive_t *revive = context;
    revive->error = hf_core_revive_ticket(revive->context->core, ticket, &revive->index);
    return revive->error ? -1 : 0;
}

bool hf_restore_ticket_revive(hf_context_t *context, const char *ticket_id, uint32_t *index) {
    /* As for holds: only what could be a ticket id of this server goes to the store. */
    if (!context->store || strncmp(ticket_id, "q_", 2) != 0 ||
        strlen(ticket_id) > HF_SERVER_ID_SIZE)
        return false;
    revive_t revive = {.context = context, .error = HF_OK};
    hf_store_loader_t loader = {.ticket = revive_ticket, .context = &revive};
    bool found = false;
    char error[512] = "";
    if (hf_store_read_ticket(context->store, ticket_id, &loader, &found, error, sizeof error) !=
        0) {
        /* A waiting or admitted ticket is never forgotten: one in the store but not in memory
         * is one whose join was never acknowledged, so it stays unknown. */
        hf_log(HF_LOG_WARNING, "ticket %s not taken back from the store: %s (%s)", ticket_id, error,
               revive.error ? core_code(revive.error) : "read failed");
        return false;
    }
    if (!found) return false;
    *index = revive.index;
    return true;
}

bool hf_restore_hold_revive(hf_context_t *context, const char *hold_id, uint32_t *index) {
    /* Only what could be a hold id of this server goes to the store: a lookup of anything
     * else answers 404 from memory, as it did before holds were ever forgotten. */
    if (!context->store || strncmp(hold_id, "res_", 4) != 0 || strlen(hold_id) > HF_SERVER_ID_SIZE)
        return false;
    revive_t revive = {.context = context, .error = HF_OK};
    hf_store_loader_t loader = {.hold = revive_hold,
                                .calendar_hold = revive_calendar_hold,
                                .context = &revive};
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
