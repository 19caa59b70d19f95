/* The store's backend interface, in the manner of SQLite's sqlite3_io_methods: a versioned
 * struct of function pointers that one storage engine fills in, and an opaque instance (void *)
 * that its open returns and every other method takes. The generic pipeline (pipeline.c: the writer
 * thread, the hand-off of batches, sequences, statistics, the failure of a batch and the
 * HOLDFAST_FAULT_FAIL_BATCH seam) is written once and calls a backend only through this struct.
 *
 * Adding a backend: its files go in store/NAME/ (the Makefile finds them), it defines one
 * const hf_store_backend_t, and backends.c gets one row naming its URL scheme. SQLite's is
 * store/sqlite/ ("sqlite:PATH"); PostgreSQL's is store/postgres/ ("postgres://" or
 * "postgresql://", the URL handed to libpq as it is).
 *
 * Threads and order. open, load, read_hold, list_holds and read_history run on the engine's
 * thread (open and load before start); start runs there once, just before the pipeline starts
 * its writer thread; after it,
 * batch_write, batch_commit, batch_send, batch_finish and batch_abort run on the writer thread
 * (hf-store) alone, in the order of the batches' sequences: one batch at a time, or, for a
 * backend that overlaps them (batches_in_flight_max above 1), up to that many sent and not yet
 * finished; durable and stats run on the engine's
 * thread at any time after open, concurrently with the writer, so what they read must be the
 * backend's own synchronised state; close runs last, after the writer has stopped.
 *
 * Batches and rows. A batch is lent to batch_write for that call only: the pipeline owns it and
 * hands it back to the engine after batch_commit or batch_abort. The records' strings stay valid
 * until then, so a backend may bind them without copying. A backend reads rows back through
 * the store's one decoder (decoder.h): it runs its own SQL, whose SELECTs give each kind's
 * columns in the decoder's order, and implements the decoder's two-function reader over its
 * own results once; the decoder fills the loader's structs. A row passed to a loader callback
 * borrows the backend's memory for the length of the callback.
 *
 * Written and durable. A batch is written once batch_commit returned 0: its transaction is
 * committed and another connection would read it. It is durable once it survives a crash of
 * the machine. A backend whose commit returns only when the batch is durable (PostgreSQL with
 * synchronous_commit on) leaves durable NULL: the pipeline then counts every written batch
 * durable. A backend that makes written batches durable later (SQLite: the log's syncer
 * fdatasyncs the write-ahead log on threads of its own) is told each written sequence by
 * batch_commit, calls done(context) from start whenever more became durable, and answers
 * durable with the highest sequence up to which every batch is durable.
 *
 * Errors: a method that fails returns non-zero and writes a sentence that begins with "store: "
 * into error (hf_store_error_write). */
#ifndef HF_STORE_BACKEND_H
#define HF_STORE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* Raised when a method is added or changes meaning; hf_store_open refuses another version. */
#define HF_STORE_BACKEND_VERSION 10

typedef struct hf_store_backend {
    int version;        /* HF_STORE_BACKEND_VERSION */
    const char *scheme; /* the URL prefix the backend was written for, as in "sqlite:" */

    /* Opens (and creates, when missing) the store that url names, scheme included; sets
     * *instance. On failure frees what it made and leaves *instance NULL. */
    int (*open)(void **instance, const char *url, char *error, size_t error_size);
    /* Reads every stored row back through the loader's callbacks, in their order (store.h). */
    int (*load)(void *instance, const hf_store_loader_t *loader, char *error, size_t error_size);
    /* Reads one hold by id, as committed, into loader->hold (hf_store_read_hold). It may run
     * while the writer writes, so it reads through a connection of its own. */
    int (*read_hold)(void *instance, const char *hold_id, const hf_store_loader_t *loader,
                     bool *found, char *error, size_t error_size);
    /* Lists an event's holds as committed (hf_store_list_holds), through the same connection
     * as read_hold; an index makes it a range scan in creation order. */
    int (*list_holds)(void *instance, const hf_store_hold_query_t *query,
                      const hf_store_loader_t *loader, bool *after_found, char *error,
                      size_t error_size);
    /* Reads an event's audit history as committed (hf_store_read_history), through the same
     * connection as read_hold: a range scan of the key (event_id, seq). batch_write appends
     * the entries of each batch's records (store/history.h) in the batch's transaction,
     * numbering them per event from the last seq stored. */
    int (*read_history)(void *instance, const hf_store_history_query_t *query,
                        hf_store_history_fn entry, void *context, char *error, size_t error_size);
    /* Reads one waiting-room ticket by id, as committed, into loader->ticket
     * (hf_store_read_ticket), through the same connection as read_hold. */
    int (*read_ticket)(void *instance, const char *ticket_id, const hf_store_loader_t *loader,
                       bool *found, char *error, size_t error_size);
    /* Prepares for batches and starts the backend's own threads, if any; done(context) is
     * for the durability side (above) and must only wake the engine. */
    int (*start)(void *instance, hf_store_done_fn done, void *context, char *error,
                 size_t error_size);
    /* Begins one transaction and writes every record of the batch into it. Whatever it
     * returns, the transaction stays open: batch_commit or batch_abort follows. */
    int (*batch_write)(void *instance, const hf_batch_t *batch, char *error, size_t error_size);
    /* Commits the transaction: from then on the batch with this sequence is written. */
    int (*batch_commit)(void *instance, uint64_t sequence, char *error, size_t error_size);
    /* The batch failed (error says why, already logged): rolls back what is still open; then,
     * before returning, lets every batch written before it become durable or be reported as
     * never durable, so that the engine, told of the failure, finds the durable state final. */
    void (*batch_abort)(void *instance, const char *error);
    /* Sets *sequence to the highest sequence up to which every batch is durable (0 before the
     * first); false once durability was lost for good (a failed fsync), with the reason in
     * error. NULL: every batch is durable as soon as it is written. */
    bool (*durable)(void *instance, uint64_t *sequence, char *error, size_t error_size);
    /* Adds the backend's own figures to stats (the fields store.h marks as the backend's);
     * NULL when it has none. */
    void (*stats)(void *instance, hf_store_stats_t *stats);
    /* Stops the backend's threads, makes what is written durable, frees everything. NULL is
     * accepted as instance (an open that failed). */
    void (*close)(void *instance);
    /* ---- Units and their leases (version 5; API.md section 11). A unit is an event or a
     * fleet, named by its id; one node at a time owns it through a lease row with a fencing
     * epoch. A backend without leases (SQLite: one node owns everything) leaves these NULL.
     * The lease methods use a connection of their own under a lock of their own: call them
     * from one thread (the cluster's lease timer, or the engine), never from the writer.
     * Every batch written after a node's first lease_acquire checks, in its own transaction,
     * that the node still holds each unit it writes (hf_store_record_unit) at the epoch
     * acquire returned; when it does not, the batch fails with an error that begins with
     * HF_STORE_LOST_LEASE and writes nothing. */

    /* Takes unit for node_id: inserts its lease, or takes it over when it lapsed (epoch + 1,
     * after ending the old owner's database session when it is still open); keeps the epoch
     * when node_id holds it already. *epoch is the lease's epoch when *acquired; false when
     * another node holds a live lease. */
    int (*lease_acquire)(void *instance, const char *node_id, const char *unit, uint64_t *epoch,
                         bool *acquired, char *error, size_t error_size);
    /* Extends every live lease of node_id by the lease's length from the database's clock,
     * records the node's heartbeat and address; *renewed counts the leases still held. A
     * lease found lapsed or taken is forgotten: batches for its unit then fail. */
    int (*lease_renew)(void *instance, const char *node_id, const char *address, size_t *renewed,
                       char *error, size_t error_size);
    /* Hands every lease of node_id back at once (a clean stop): they lapse now. */
    int (*lease_release)(void *instance, const char *node_id, char *error, size_t error_size);
    /* Every node (by id) and then every lease: events' units in the order the events were
     * created, then the others by unit; as the database has them now. */
    int (*lease_list)(void *instance, hf_store_node_fn node, hf_store_lease_fn lease, void *context,
                      char *error, size_t error_size);
    /* Reads one unit's rows back, as load does for all (the same callbacks, the same order):
     * an event with its holds, orders, refunds, deliveries, tickets and idempotency keys, or
     * a fleet with its drivers, rides and keys; the unit HF_STORE_UNIT_NONE reads the records
     * of no unit (refunds and deliveries of holds no event has, keys of requests about no
     * unit). For a takeover, on the lease methods' thread and connection. */
    int (*load_unit)(void *instance, const char *unit, const hf_store_loader_t *loader, char *error,
                     size_t error_size);
    /* The unit an id belongs to, from the database: kind is "hold", "order", "refund",
     * "ticket" or "ride". *found false when there is no such id. Same thread and connection
     * as load_unit. */
    int (*unit_find)(void *instance, const char *kind, const char *id, char *unit, size_t unit_size,
                     bool *found, char *error, size_t error_size);
    /* The setting key as the database keeps it, in value (value_size bytes): proposed is kept
     * first when there is none, so nodes starting at once agree on one value (the generated
     * token secret, API.md section 11). Any thread before start, on the lease connection.
     * NULL: the backend keeps no settings (SQLite: the data directory keeps them). */
    int (*setting_claim)(void *instance, const char *key, const char *proposed, char *value,
                         size_t value_size, char *error, size_t error_size);
    /* ---- A unit's load in two halves (version 7, cluster/jobs.h; version 7 also
     * dropped version 6's probe: with leases a failed batch is the cluster's to mend,
     * cluster/cluster.h): the round trips on a worker thread, the core's state on the engine's,
     * so the engine's thread never waits on the database for a takeover. unit_fetch runs load_unit's statements (the lease methods'
     * thread and connection) and keeps their rows in *rows (opaque) without calling loader's
     * callbacks: it only looks at which are set and at its since_ms values. unit_deliver then
     * passes those rows to loader (set as at the fetch) exactly as load_unit would have, on
     * any thread, with no I/O, and frees rows; unit_rows_free frees rows never delivered.
     * NULL when load_unit is (no leases). */
    int (*unit_fetch)(void *instance, const char *unit, const hf_store_loader_t *loader,
                      void **rows, char *error, size_t error_size);
    int (*unit_deliver)(void *instance, void *rows, const hf_store_loader_t *loader, char *error,
                        size_t error_size);
    void (*unit_rows_free)(void *rows);
    /* ---- Forgotten rides (version 8; core/dispatch/dispatch.h): one ride by id, and a page
     * of a fleet's rides in creation order, as committed, through the connection read_hold
     * uses (hf_store_read_ride, hf_store_list_rides). A driver's record with deleted set
     * deletes its row. */
    int (*read_ride)(void *instance, const char *ride_id, const hf_store_loader_t *loader,
                     bool *found, char *error, size_t error_size);
    int (*list_rides)(void *instance, const hf_store_ride_query_t *query,
                      const hf_store_loader_t *loader, bool *after_found, char *error,
                      size_t error_size);
    /* ---- The outbox of notifications (version 9; engine/outbox.h): the history's entries with
     * their delivery state (hf_store_read_outbox, hf_store_outbox_pending), through the
     * connection read_hold uses. A NOTIFY record updates its entry's state columns. */
    int (*read_outbox)(void *instance, const hf_store_outbox_query_t *query,
                       hf_store_history_fn entry, void *context, char *error, size_t error_size);
    int (*outbox_pending)(void *instance, const char *unit, int64_t *pending, int64_t *last_seq,
                          char *error, size_t error_size);
    /* ---- Batches that overlap (version 10; DESIGN.md, "Batches that overlap"). A backend
     * whose commit waits on a round trip and a flush elsewhere (PostgreSQL) sends a batch's
     * COMMIT without waiting (batch_send, after batch_write), and the pipeline writes and sends
     * the next batches while it waits, up to batches_in_flight_max sent and not finished; then
     * batch_finish waits for the oldest sent batch's outcome: 0 when it committed. Outcomes
     * come in the order of the sequences, and a batch fails whenever one sent before it
     * failed: the backend makes sure it cannot commit then (a backend that cannot promise
     * that must not overlap). batch_finish also returns, with *woken set and nothing decided,
     * as soon as wake_fd is readable (the pipeline has another batch to send); a deadline on
     * the backend's own silence still bounds it. batch_abort after a failed batch_write or
     * batch_finish drops every batch still sent, which then fail. batch_commit stays: send and
     * finish at once. A backend that does not overlap sets batches_in_flight_max to 0 or 1
     * and leaves the two NULL (SQLite: its sync already overlaps the next batch's write). */
    int (*batch_send)(void *instance, uint64_t sequence, char *error, size_t error_size);
    int (*batch_finish)(void *instance, uint64_t sequence, int wake_fd, bool *woken, char *error,
                        size_t error_size);
    unsigned batches_in_flight_max;
} hf_store_backend_t;

/* The beginning of the error of a batch refused because this node no longer holds the lease
 * of a unit it writes (or never held it): the engine recognises it with strncmp. */
#define HF_STORE_LOST_LEASE "store: lost lease"

/* The backend whose scheme begins url (backends.c), or NULL with a sentence in error: an
 * unknown scheme, or a known one whose backend this build does not have. */
const hf_store_backend_t *hf_store_backend_find(const char *url, char *error, size_t error_size);

/* Formats a sentence into error (when not NULL), as every method reports a failure. */
void hf_store_error_write(char *error, size_t error_size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* The SQLite backend (store/sqlite/sqlite.c), and the version of the schema it writes: an
 * older store is migrated at open, and `holdfast check` (cmd/check.c) checks this one. */
extern const hf_store_backend_t hf_store_sqlite_backend;
#define HF_STORE_SQLITE_SCHEMA_VERSION "13"
/* The PostgreSQL backend (store/postgres/postgres.c). */
extern const hf_store_backend_t hf_store_postgres_backend;

#endif
