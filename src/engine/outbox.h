/* The outbox of notifications (API.md section 15): every audit-history entry is a
 * notification, and the history is the outbox. The store appends each entry in the
 * transaction of its change (store/history.h) with its delivery state in columns of its own
 * (pending, attempts, the last answer, the next attempt), so a change is never acknowledged
 * without its notification and nothing is written twice; a NOTIFY record (core/mutation.h) in
 * a later batch updates that state after each attempt. docs/DESIGN.md, "Notifications", says
 * why and what follows.
 *
 * Delivery, on the loop: a window of at most HF_NOTIFY_WINDOW_MAX pending notifications is
 * read from the store, unit by unit, in seq order, through the loop's read connection (as a
 * page of history is read: a range scan of the pending entries' index), only for units that
 * have entries not read yet (the engine tells the outbox of each entry it appends,
 * hf_outbox_appended). Due ones are POSTed, signed as section 7 says, at most
 * HF_NOTIFY_IN_FLIGHT_MAX at a time (outbox_http.h); a 2xx marks one delivered, anything else
 * schedules the next attempt (notification.h) until its 3 days are up. Past the backlog's
 * bound the oldest pending are marked failed. A unit is delivered by the node whose core has
 * it (its owner, cluster.h): a unit lost drops its notifications from the window, and the next
 * owner reads the unit's pending ones from the store.
 *
 * Threads: the loop's. Ownership: the engine owns the outbox (context->outbox). */
#ifndef HF_ENGINE_OUTBOX_H
#define HF_ENGINE_OUTBOX_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "core/mutation.h"
#include "engine/context.h"
#include "engine/notification.h"
#include "lib/buffer.h"
#include "store/store.h"

/* Writes a history entry's JSON object as GET .../history shows it (api/history.h's
 * hf_history_entry_write, handed down by cmd/main.c); false for a damaged row. calendar_unit is
 * the hf_calendar_unit_t of the entry's calendar, whose items are spans in that unit, or -1 for
 * an event's entry. */
typedef bool (*hf_outbox_entry_write_fn)(hf_buffer_t *out, const hf_stored_history_t *entry,
                                         int calendar_unit);

typedef struct hf_outbox_config {
    const char *url;    /* NULL: notifications are kept (the history) but not sent */
    const char *secret; /* signs each attempt; required with url */
    const char *ca_file;
    int64_t backlog_max;
    hf_outbox_entry_write_fn entry_write;
} hf_outbox_config_t;

typedef struct hf_outbox hf_outbox_t;

/* The figures of /metrics (API.md section 15). pending is this node's (its units'); the
 * others count since the start. */
typedef struct hf_outbox_stats {
    int64_t pending;
    uint64_t delivered, failed;
    uint64_t attempts_succeeded, attempts_failed, dropped;
} hf_outbox_stats_t;

/* NULL with a sentence in error when libcurl cannot be set up. Strings of config are
 * borrowed for the outbox's life. */
hf_outbox_t *hf_outbox_create(uv_loop_t *loop, hf_context_t *context,
                              const hf_outbox_config_t *config, char *error, size_t error_size);
/* Starts the timer (once the store is loaded and the server listens). */
void hf_outbox_start(hf_outbox_t *outbox);
/* The engine appended mutation to the open batch: when it makes a history entry, its unit has
 * one more notification to read once the batch is written. */
void hf_outbox_appended(hf_outbox_t *outbox, const hf_mutation_t *mutation);
/* Stops delivering (deliveries in flight are abandoned: they stay pending in the store and
 * are sent again at the next start) and closes the loop's handles. */
void hf_outbox_stop(hf_outbox_t *outbox);
/* After the loop returned; NULL is accepted. */
void hf_outbox_free(hf_outbox_t *outbox);

void hf_outbox_stats(const hf_outbox_t *outbox, hf_outbox_stats_t *stats);

/* The state of a notification the window holds, overlaying what the store has (attempts in
 * flight are not yet there); false when the window does not hold (unit, seq). */
bool hf_outbox_overlay(const hf_outbox_t *outbox, const char *unit, int64_t seq,
                       hf_stored_history_t *entry);

/* The result of a retry by hand (POST /v1/notifications/{id}/retry). */
typedef enum hf_outbox_retry_result {
    HF_OUTBOX_RETRY_DUE,       /* pending and due at once; *entry is it */
    HF_OUTBOX_RETRY_DELIVERED, /* already delivered: nothing changes */
    HF_OUTBOX_RETRY_NOT_FOUND,
    HF_OUTBOX_RETRY_FAILED, /* the store could not be read: error says why */
} hf_outbox_retry_result_t;

/* Shows a notification as it now stands (borrowed for the call). */
typedef void (*hf_outbox_shown_fn)(void *context, const hf_stored_history_t *entry);

/* Makes (unit, seq) due at once: a pending one's next attempt is now, a failed one is pending
 * again (its attempts kept). The change is a NOTIFY record in the open batch, so its answer
 * waits for it like any change. shown(context, entry) is called with the notification as it
 * now stands when the result is DUE. */
hf_outbox_retry_result_t hf_outbox_retry(hf_outbox_t *outbox, const char *unit, int64_t seq,
                                         int64_t now_ms, hf_outbox_shown_fn shown, void *context,
                                         char *error, size_t error_size);

#endif
