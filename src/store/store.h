/* Durability, as the engine sees it. A batch collects copied mutation records on the engine
 * thread; the store's writer thread writes a whole batch in one transaction (group commit) and
 * hands it back at once; the batch becomes durable when the backend says so (SQLite: a little
 * later, when a sync of the log that started after its commit has finished, sqlite/sync.h;
 * PostgreSQL: when its COMMIT returns). The engine keeps applying commands into the next batch
 * meanwhile, and the store writes that one while the last is synced. At start the store reads
 * the tables back through a loader's callbacks, each kind of row decoded once for every
 * backend (decoder.h).
 *
 * The pipeline (pipeline.c) is written once: it picks a backend by the URL's scheme (backends.c),
 * runs the writer thread, hands batches over with their sequences (the engine numbers them),
 * handles a failed batch and keeps the statistics. Each backend implements backend.h's struct of
 * methods in store/NAME/ (SQLite's in store/sqlite/); a new one adds one row to backends.c.
 * What the store does with each kind of record (its copy into a batch, its unit, its history
 * entry) is the kind's row in the table of record kinds (records.h); each backend writes a
 * record through its own table of writes, indexed by kind the same way.
 *
 * Threads: hf_store_open, hf_store_load, hf_store_read_hold, hf_store_list_holds,
 * hf_store_read_history, hf_store_start, hf_store_idle, hf_store_ready, hf_store_batches_max,
 * hf_store_submit, hf_store_take_result, hf_store_durable, hf_store_stats, hf_store_close and
 * the batch functions are called from the engine thread only; the writer thread (hf-store)
 * writes the batches, and the backend may have threads of its own (SQLite's syncers and
 * checkpointer). The done callback runs on the store's threads and must only wake the engine
 * (uv_async_send).
 *
 * Ownership: a batch is the engine's until hf_store_submit, the store's until
 * hf_store_take_result returns it, cleared, for reuse. A stored row passed to a loader's
 * callback, and everything it points to, is borrowed for the length of the call.
 *
 * Written and durable: a batch is written once its transaction has committed (another
 * connection would read it); it is durable once it would survive a crash of the machine. Only
 * durable changes may be acknowledged: hf_store_take_result tells written, hf_store_durable
 * tells durable. */
#ifndef HF_STORE_H
#define HF_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/locks.h"
#include "core/core.h"
#include "core/jobs.h"
#include "lib/histogram.h"
#include "core/queue.h"
#include "core/dispatch/dispatch.h"

typedef struct hf_batch hf_batch_t;

hf_batch_t *hf_batch_create(void); /* owned by the caller */
void hf_batch_destroy(hf_batch_t *batch);
/* Deep-copies the record: the batch owns its copy until hf_batch_clear. */
void hf_batch_append(hf_batch_t *batch, const hf_mutation_t *mutation);
size_t hf_batch_count(const hf_batch_t *batch);
const hf_mutation_t *hf_batch_at(const hf_batch_t *batch, size_t index); /* borrowed */
void hf_batch_clear(hf_batch_t *batch);
/* Sink that appends to the batch given as context. */
void hf_batch_sink_emit(void *batch, const hf_mutation_t *mutation);

/* The unit of the records that belong to no event or fleet: refunds and payment deliveries
 * of holds no event has, and idempotency keys of requests about no unit. With leases it is a
 * unit like the others (one owner, fenced, taken over; API.md section 11). Its name has a
 * character no event or fleet id may have ([A-Za-z0-9_.]), so no id can take it. */
#define HF_STORE_UNIT_NONE "~none"

/* The unit (an event's id, or a fleet's for drivers and rides) a record belongs to, borrowed
 * from the record: an idempotency key's is the unit of the request that used it, a refund's
 * and a delivery's their hold's event; HF_STORE_UNIT_NONE when that is none. A backend with
 * leases fences each batch on the units of its records (backend.h). */
const char *hf_store_record_unit(const hf_mutation_t *mutation);
/* Collects the distinct units of the batch's records into units (at most capacity, in order
 * of first appearance, borrowed from the batch); returns how many there are, which may exceed
 * capacity (then only capacity were written). */
size_t hf_store_batch_units(const hf_batch_t *batch, const char **units, size_t capacity);

/* One node and one lease as a backend with leases lists them (backend.h's lease_list). */
typedef struct hf_stored_node {
    const char *node_id, *address;
    int64_t heartbeat_at_ms; /* the database's clock */
} hf_stored_node_t;
typedef struct hf_stored_lease {
    const char *unit, *node_id;
    uint64_t epoch;
    int64_t expires_at_ms; /* the database's clock */
    bool live;             /* not yet expired by the database's clock */
} hf_stored_lease_t;
typedef int (*hf_store_node_fn)(void *context, const hf_stored_node_t *node);
typedef int (*hf_store_lease_fn)(void *context, const hf_stored_lease_t *lease);

/* ---- Loading (before hf_store_start, on the calling thread) ---- */

/* What the store hands back at start, one struct per kind of row, in the core's own shapes: the
 * store reads its JSON columns itself (store/rows.h), so a loader only hands them on. Every
 * pointer is borrowed for the length of the callback. */
typedef struct hf_stored_event {
    const hf_event_definition_t *definition;
    int64_t created_at_ms;
    bool sales_open; /* false once staff closed its sales */
} hf_stored_event_t;

/* A calendar as stored: its settings (definition.resources none: they come as
 * calendar_resource calls, in order, after every calendar). */
typedef struct hf_stored_calendar {
    const hf_calendar_definition_t *definition;
    int64_t created_at_ms;
    bool sales_open;
} hf_stored_calendar_t;

/* A stored answer to a request with an Idempotency-Key. */
typedef struct hf_stored_idempotency {
    const char *key;     /* the scope: method, path and key */
    const uint8_t *hash; /* SHA-256 of the request body, 32 bytes */
    int status;
    const char *body;
    int64_t created_at_ms;
} hf_stored_idempotency_t;

typedef struct hf_store_loader {
    /* Called in this order: every event by creation, every hold by creation, every order by
     * creation, every idempotency key younger than keep_since_ms. A callback returning
     * non-zero aborts the load with that value; a callback left NULL skips its table. Seats
     * are not stored: their states and versions follow from the holds and orders. */
    int (*event)(void *context, const hf_stored_event_t *event);
    int (*hold)(void *context, const hf_stored_hold_t *hold);
    int (*order)(void *context, const hf_stored_order_t *order);
    int (*idempotency)(void *context, const hf_stored_idempotency_t *answer);
    int64_t keep_since_ms;
    void *context;
    /* Called once before the first hold (when not NULL) with how many holds are released or
     * expired: a loader that keeps only the newest of them knows how many come first. */
    int (*finished_holds)(void *context, uint64_t count);
    /* After the idempotency keys: every refund by creation, then every payment delivery
     * received at or after deliveries_since_ms, in the order they were received. */
    int (*refund)(void *context, const hf_stored_refund_t *refund);
    int (*delivery)(void *context, const hf_stored_delivery_t *delivery);
    int64_t deliveries_since_ms;
    /* Then every waiting room's ticket, in join order. */
    int (*ticket)(void *context, const hf_stored_ticket_t *ticket);
    /* Last: every driver, then every ride in the order they were created (dispatch). */
    int (*driver)(void *context, const hf_stored_driver_t *driver);
    int (*ride)(void *context, const hf_stored_ride_t *ride);
    /* Calendars (core/calendars.h): every calendar after the events, then every resource of
     * every calendar (in the calendars' order, each calendar's in its own); their holds and
     * orders come among the holds and orders, in the same order of creation, to
     * calendar_hold and calendar_order (a loader without them skips them). */
    int (*calendar)(void *context, const hf_stored_calendar_t *calendar);
    int (*calendar_resource)(void *context, const char *calendar_id,
                             const hf_resource_definition_t *resource);
    int (*calendar_hold)(void *context, const hf_stored_calendar_hold_t *hold);
    int (*calendar_order)(void *context, const hf_stored_calendar_order_t *order);
    /* Allocations (core/allocations.h): every one after the events, before the holds. */
    int (*allocation)(void *context, const hf_stored_allocation_t *allocation);
    /* Cancel jobs (core/jobs.h), after the refunds: every job by creation, then what each did
     * with each order, in the order it went. */
    int (*job)(void *context, const hf_stored_job_t *job);
    int (*job_offer)(void *context, const hf_stored_job_offer_t *offer);
    /* Every waitlist entry, by event and join number, after the tickets (and so after the
     * holds: an offer's hold is held). */
    int (*waitlist)(void *context, const hf_stored_waitlist_t *entry);
    /* Every order's lock by an exchange hold of another unit (core/locks.h), after the orders. */
    int (*order_lock)(void *context, const hf_stored_order_lock_t *lock);
} hf_store_loader_t;

typedef struct hf_store hf_store_t;

typedef void (*hf_store_done_fn)(void *context);

/* url: "sqlite:PATH" (backends.c lists the schemes). Creates the schema when missing. On
 * failure returns non-zero and writes a sentence into error. */
int hf_store_open(hf_store_t **out, const char *url, char *error, size_t error_size);
int hf_store_load(hf_store_t *store, const hf_store_loader_t *loader, char *error,
                  size_t error_size);
/* Reads the hold with this id (one the core has forgotten, see hf_core_evict) and passes it to
 * loader->hold; *found tells whether there was one. Engine thread only, after hf_store_load:
 * it reads what is committed through a read-only connection of its own. Returns 0, or -1 (or
 * the callback's non-zero value) with a sentence in error. */
int hf_store_read_hold(hf_store_t *store, const char *hold_id, const hf_store_loader_t *loader,
                       bool *found, char *error, size_t error_size);
/* As hf_store_read_hold, for a waiting-room ticket the core has forgotten (a finished one):
 * passed to loader->ticket. */
int hf_store_read_ticket(hf_store_t *store, const char *ticket_id, const hf_store_loader_t *loader,
                         bool *found, char *error, size_t error_size);
/* What hf_store_list_holds reads: the holds of event_id created after the hold after_id (NULL:
 * from the first), oldest first, whose stored status is one of statuses (bits 1 << status of
 * hf_hold_status_t; 0: any). */
typedef struct hf_store_hold_query {
    const char *event_id;
    const char *after_id;
    unsigned statuses;
} hf_store_hold_query_t;

/* A loader's hold callback returns this to end a listing early: not an error. */
#define HF_STORE_LIST_STOP 1

/* Passes each hold the query names to loader->hold, as committed, until the callback returns
 * HF_STORE_LIST_STOP (or another non-zero value: an error) or none is left. *after_found is
 * false when after_id is not a hold of the event (nothing is then listed). Engine thread only,
 * after hf_store_load, through the read-only connection hf_store_read_hold uses. Returns 0, or
 * -1 (or the callback's error) with a sentence in error. */
int hf_store_list_holds(hf_store_t *store, const hf_store_hold_query_t *query,
                        const hf_store_loader_t *loader, bool *after_found, char *error,
                        size_t error_size);
/* As hf_store_read_hold, for a ride the core has forgotten (a finished one, see
 * hf_dispatch_revive_ride): passed to loader->ride. */
int hf_store_read_ride(hf_store_t *store, const char *ride_id, const hf_store_loader_t *loader,
                       bool *found, char *error, size_t error_size);
/* What hf_store_list_rides reads: the rides of fleet_id created after the ride after_id (NULL:
 * from the first), oldest first, whose stored status is one of statuses (bits 1 << status of
 * hf_ride_status_t; 0: any). */
typedef struct hf_store_ride_query {
    const char *fleet_id;
    const char *after_id;
    unsigned statuses;
} hf_store_ride_query_t;

/* As hf_store_list_holds, for a fleet's rides: each to loader->ride, as committed, until the
 * callback returns HF_STORE_LIST_STOP; *after_found false when after_id is no ride of the
 * fleet. A range scan of the rides' (fleet_id, seq) index. */
int hf_store_list_rides(hf_store_t *store, const hf_store_ride_query_t *query,
                        const hf_store_loader_t *loader, bool *after_found, char *error,
                        size_t error_size);
/* What hf_store_read_history reads: the entries of event_id's audit history (store/history.h)
 * whose seq is above after_seq, oldest first, at most limit of them. */
typedef struct hf_store_history_query {
    const char *event_id;
    int64_t after_seq;
    uint32_t limit;
} hf_store_history_query_t;

/* One entry as stored: data is its JSON object of the entry's own fields (store/history.h),
 * data_length bytes long. An entry about a hold or an order (its data names a reservation_id
 * or an order_id) has a subject, joined at read time: the hold it names or else the order,
 * whose reservation_id (the entry's own, else the order's hold: NULL for a booking), user_id
 * and items (the stored row's JSON {"seats":[...],"pools":{...}}) the entry carries; these are
 * NULL when the store has no such hold or order. Borrowed for the length of the callback. */
typedef struct hf_stored_history {
    int64_t seq;
    const char *type;
    int64_t at_ms;
    const char *data;
    size_t data_length;
    bool has_subject;
    const char *reservation_id, *user_id, *items;
    /* Its notification's delivery state (API.md section 15; the columns a NOTIFY record
     * writes): the unit is the entry's event, status 0 pending, 1 delivered, 2 failed;
     * last_status 0 and last_error NULL while none, next_attempt_ms 0 before the first try. */
    const char *unit;
    int notify_status;
    uint32_t notify_attempts;
    int notify_last_status;
    const char *notify_last_error;
    int64_t notify_next_attempt_ms;
} hf_stored_history_t;

typedef int (*hf_store_history_fn)(void *context, const hf_stored_history_t *entry);

/* Passes the entries the query names to entry, as committed, until it returns
 * HF_STORE_LIST_STOP (or another non-zero value: an error) or none is left. Engine thread
 * only, after hf_store_load, through the read-only connection hf_store_read_hold uses: one
 * range scan of the history's primary key, each row joined with its hold or order by their
 * unique ids, so an old page costs what a new one does and nothing of the history is kept in
 * memory. Returns 0, or -1 (or the callback's error) with a
 * sentence in error. */
int hf_store_read_history(hf_store_t *store, const hf_store_history_query_t *query,
                          hf_store_history_fn entry, void *context, char *error, size_t error_size);
/* What hf_store_read_outbox reads: the history is the outbox of notifications (engine/outbox.h).
 * With unit set, that unit's pending entries whose seq is above after_seq (the notifier's
 * read, a range scan of the pending entries' partial index); with unit NULL, the entries of
 * every unit after (after_unit, after_seq) in (unit, seq) order: the pending ones alone when
 * status is 0 (the same index), every one when it is negative (the staff's listing). At most
 * limit of them. */
typedef struct hf_store_outbox_query {
    const char *unit;
    const char *after_unit; /* "" to start from the first unit */
    int64_t after_seq;
    int status;
    uint32_t limit;
} hf_store_outbox_query_t;

/* As hf_store_read_history, for the query above (same thread, connection and callbacks). */
int hf_store_read_outbox(hf_store_t *store, const hf_store_outbox_query_t *query,
                         hf_store_history_fn entry, void *context, char *error, size_t error_size);
/* The number of unit's pending notifications and the last seq of its history, as committed
 * (same thread and connection). */
int hf_store_outbox_pending(hf_store_t *store, const char *unit, int64_t *pending,
                            int64_t *last_seq, char *error, size_t error_size);
/* Starts the store's writer thread and the log syncer's threads. done is called after each
 * batch is written and after each sync. */
int hf_store_start(hf_store_t *store, hf_store_done_fn done, void *context);
/* True when the store holds no batch: none submitted and not yet taken back. */
bool hf_store_idle(const hf_store_t *store);
/* True when hf_store_submit may be called with a batch of that many mutations: the store is
 * idle, or it holds fewer batches than hf_store_batches_max, no failure waits to be taken
 * back, and the batch is at least as large as the last one submitted. A store that does not
 * overlap batches (SQLite) is ready exactly when it is idle. */
bool hf_store_ready(const hf_store_t *store, size_t mutations);
/* How many batches the store takes at once: 1, or the backend's overlap (PostgreSQL: up to
 * HF_STORE_BATCHES_OVERLAP_MAX, backend.h). */
unsigned hf_store_batches_max(const hf_store_t *store);
/* Hands over a batch; the store owns it until hf_store_take_result returns it. Results come
 * back in the order of the sequences; a batch submitted behind one that failed fails too. */
void hf_store_submit(hf_store_t *store, hf_batch_t *batch, uint64_t sequence);
/* After done: returns the oldest finished batch (cleared, to reuse) or NULL when none is;
 * several may be finished, so the caller takes until NULL;
 * *sequence is the batch's sequence, *ok false when its transaction failed (then nothing of
 * it is durable and error holds the reason, and every batch before it is already durable or
 * hf_store_durable reports the failed sync). Written is not durable: see hf_store_durable. */
hf_batch_t *hf_store_take_result(hf_store_t *store, uint64_t *sequence, bool *ok, char *error,
                                 size_t error_size);
/* Every batch up to *sequence is durable. Returns false once a sync of the log has failed
 * (error then holds the reason): nothing after *sequence will ever be durable, and what the
 * store reads back may not be what is on the disk. */
bool hf_store_durable(const hf_store_t *store, uint64_t *sequence, char *error, size_t error_size);
/* The setting key as the store keeps it (backend.h's setting_claim), proposed kept first when
 * there is none; *kept false (and 0 returned) when the store keeps no settings (SQLite). */
int hf_store_setting_claim(hf_store_t *store, const char *key, const char *proposed, char *value,
                           size_t value_size, bool *kept, char *error, size_t error_size);
/* Units and leases (backend.h's lease methods, API.md section 11), passed through to the
 * backend: call them from the engine's cluster (cluster/cluster.h) only, one thread at a time
 * (the backend serialises them on a connection of their own). hf_store_has_leases is false
 * for a backend without them (SQLite), whose callers must then call none of the others. */
bool hf_store_has_leases(const hf_store_t *store);
int hf_store_lease_acquire(hf_store_t *store, const char *node_id, const char *unit,
                           uint64_t *epoch, bool *acquired, char *error, size_t error_size);
int hf_store_lease_renew(hf_store_t *store, const char *node_id, const char *address,
                         size_t *renewed, char *error, size_t error_size);
int hf_store_lease_release(hf_store_t *store, const char *node_id, char *error, size_t error_size);
int hf_store_lease_list(hf_store_t *store, hf_store_node_fn node, hf_store_lease_fn lease,
                        void *context, char *error, size_t error_size);
int hf_store_unit_load(hf_store_t *store, const char *unit, const hf_store_loader_t *loader,
                       char *error, size_t error_size);
int hf_store_unit_find(hf_store_t *store, const char *kind, const char *id, char *unit,
                       size_t unit_size, bool *found, char *error, size_t error_size);
/* hf_store_unit_load in two halves (backend.h's unit_fetch and unit_deliver): the fetch on a
 * worker thread (the lease methods' rule: one at a time), the delivery on the engine's, with
 * a loader set as at the fetch; rows never delivered are freed with hf_store_unit_rows_free
 * (NULL accepted). */
int hf_store_unit_fetch(hf_store_t *store, const char *unit, const hf_store_loader_t *loader,
                        void **rows, char *error, size_t error_size);
int hf_store_unit_deliver(hf_store_t *store, void *rows, const hf_store_loader_t *loader,
                          char *error, size_t error_size);
void hf_store_unit_rows_free(hf_store_t *store, void *rows);
/* Stops the thread after the batch in flight, syncs what was written; then frees
 * everything. */
void hf_store_close(hf_store_t *store);

/* Batch statistics, read on the engine thread: GET /metrics shows them (engine/metrics.h),
 * and the unit tests read them. */
typedef struct hf_store_stats {
    uint64_t batches, mutations, failures;
    uint64_t last_batch_size;
    double last_commit_seconds; /* writing the batch up to its COMMIT; the sync comes after */
    /* Every written batch: its mutations (hf_store_batch_size_bounds) and the time from its
     * first write to its COMMIT, in nanoseconds (hf_histogram_seconds_bounds). Recorded by
     * the writer under the lock it already takes to hand the batch back. */
    hf_histogram_t batch_sizes, commit_durations;
    /* The backend's own figures (backend.h's stats), 0 where it has none. SQLite: writes to
     * write-ahead logs that SQLite asked for and that reached a file, since the process started
     * (sqlite/vfs.h). */
    uint64_t log_writes_asked, log_writes_made;
} hf_store_stats_t;
void hf_store_stats(const hf_store_t *store, hf_store_stats_t *stats);
/* Mutations per batch, from 1 to HF_STORE_BATCH_MUTATIONS_MAX. */
extern const hf_histogram_bounds_t hf_store_batch_size_bounds;

#endif
