/* The PostgreSQL backend (backend.h): the same tables as SQLite's, in the meaning an operator
 * reads with psql as with sqlite3, written in group commits. Each batch the pipeline hands over
 * is one transaction whose statements go out in libpq's pipeline mode: BEGIN, the fence of the
 * units' leases (lease.c), every record's prepared statement and COMMIT, so a batch costs one
 * round trip, not one per row, and the next batch goes out behind it before its COMMIT has
 * answered (inflight.c: batches that overlap, and why the next cannot commit without it). It
 * is written and durable when its COMMIT returns (synchronous_commit on: durable is NULL). Each kind of record is queued by its row of QUEUES,
 * the backend's table of writes made from the list of kinds (core/mutation.h): a kind without
 * its queue_NAME fails to compile.
 *
 * A statement that must change a row (an update of a hold, an order, an event's sales) counts
 * the rows it changed inside the statement and raises when none did (holdfast_changed): in a
 * pipeline the batch cannot look at a count before its COMMIT is already on the wire.
 *
 * Bounded waits: every wait on the server has a deadline of HF_PG_WAIT_MS (a poll of the
 * socket), and connections have connect_timeout, keepalives and tcp_user_timeout, so while
 * PostgreSQL is unreachable a batch fails within 4 s and its changes answer 503 within 5. A connection that failed is dropped (the
 * server rolls back what it had open) and the next batch connects again.
 *
 * Threads: as backend.h says; the writer connection belongs to the writer thread after
 * start, the reader to the engine thread, the lease connection to the lease methods' caller. */
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "core/core.h"
#include "lib/limits.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "store/backend.h"
#include "store/fault.h"
#include "store/history.h"
#include "store/postgres/internal.h"
#include "store/records.h"
#include "store/rows.h"

/* Old idempotency keys are deleted once every this many batches, as SQLite's store does. */
#define PURGE_EVERY_BATCHES 1000u
/* ---- Connections and bounded waits ---- */

PGconn *hf_pg_connect(const char *url, char *error, size_t error_size) {
    /* Defaults first: the URL comes last, so what it says itself wins. */
    static const char *const keys[] = {
        "connect_timeout",     "keepalives",       "keepalives_idle",
        "keepalives_interval", "keepalives_count", "tcp_user_timeout",
        "application_name",    "dbname",           NULL};
    static const char user_timeout_ms[] = HF_PG_WAIT_TEXT "000"; /* the same wait, in ms */
    const char *values[] = {HF_PG_WAIT_TEXT, "1",        "2", "1", "3",
                            user_timeout_ms, "holdfast", url, NULL};
    PGconn *connection = PQconnectdbParams(keys, values, 1);
    if (connection == NULL || PQstatus(connection) != CONNECTION_OK) {
        const char *why = connection != NULL ? PQerrorMessage(connection) : "out of memory";
        size_t length = strlen(why);
        while (length > 0 && (why[length - 1] == '\n' || why[length - 1] == ' ')) length--;
        hf_store_error_write(error, error_size, "store: cannot connect to PostgreSQL: %.*s",
                             (int)length, why);
        PQfinish(connection);
        return NULL;
    }
    return connection;
}

void hf_pg_message_trim(char *text) {
    size_t length = strlen(text);
    while (length > 0 && (text[length - 1] == '\n' || text[length - 1] == ' '))
        text[--length] = '\0';
}

/* Waits until a result is ready or the deadline passes; false on a timeout or a broken
 * connection (error written). With wake_fd at 0 or above, also returns true, with *woken set,
 * as soon as wake_fd is readable first (the writer has another batch to send). */
bool hf_pg_input_wait(PGconn *connection, double deadline, int wake_fd, bool *woken, char *error,
                      size_t error_size) {
    while (PQisBusy(connection)) {
        double left_ms = (deadline - hf_clock_monotonic_seconds()) * 1000.0;
        if (left_ms <= 0) {
            hf_store_error_write(error, error_size, "store: PostgreSQL did not answer within %d ms",
                                 HF_PG_WAIT_MS);
            return false;
        }
        struct pollfd pollers[2] = {{.fd = PQsocket(connection), .events = POLLIN},
                                    {.fd = wake_fd, .events = POLLIN}};
        int ready = poll(pollers, wake_fd >= 0 ? 2 : 1, (int)left_ms + 1);
        if (ready < 0 || !PQconsumeInput(connection)) {
            char why[256];
            snprintf(why, sizeof why, "%s", PQerrorMessage(connection));
            hf_pg_message_trim(why);
            hf_store_error_write(error, error_size, "store: the connection to PostgreSQL broke: %s",
                                 why);
            return false;
        }
        if (wake_fd >= 0 && (pollers[1].revents & POLLIN) && PQisBusy(connection)) {
            *woken = true;
            return true;
        }
    }
    return true;
}

static bool input_wait(PGconn *connection, double deadline, char *error, size_t error_size) {
    return hf_pg_input_wait(connection, deadline, -1, NULL, error, error_size);
}

static void connection_drop(PGconn **connection) {
    PQfinish(*connection);
    *connection = NULL;
}

PGresult *hf_pg_exec(PGconn **connection, const char *sql, int count, const char *const *values,
                     char *error, size_t error_size) {
    if (*connection == NULL) {
        hf_store_error_write(error, error_size, "store: no connection to PostgreSQL");
        return NULL;
    }
    double deadline = hf_clock_monotonic_seconds() + HF_PG_WAIT_MS / 1000.0;
    /* Without parameters the simple protocol: it runs several statements in one text (the
     * schema); a connection in pipeline mode never comes here. */
    int sent = count == 0 ? PQsendQuery(*connection, sql)
                          : PQsendQueryParams(*connection, sql, count, NULL, values, NULL, NULL, 0);
    if (!sent) {
        char why[256];
        snprintf(why, sizeof why, "%s", PQerrorMessage(*connection));
        hf_pg_message_trim(why);
        hf_store_error_write(error, error_size, "store: cannot send to PostgreSQL: %s", why);
        connection_drop(connection);
        return NULL;
    }
    PGresult *kept = NULL;
    for (;;) {
        if (!input_wait(*connection, deadline, error, error_size)) {
            PQclear(kept);
            connection_drop(connection);
            return NULL;
        }
        PGresult *result = PQgetResult(*connection);
        if (result == NULL) break;
        if (kept == NULL) kept = result;
        else PQclear(result);
    }
    ExecStatusType status = kept != NULL ? PQresultStatus(kept) : PGRES_FATAL_ERROR;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return kept;
    char why[512];
    snprintf(why, sizeof why, "%s",
             kept != NULL ? PQresultErrorMessage(kept) : PQerrorMessage(*connection));
    hf_pg_message_trim(why);
    hf_store_error_write(error, error_size, "store: %s", why);
    PQclear(kept);
    if (PQstatus(*connection) != CONNECTION_OK) connection_drop(connection);
    return NULL;
}

static int exec_ok(PGconn **connection, const char *sql, char *error, size_t error_size) {
    PGresult *result = hf_pg_exec(connection, sql, 0, NULL, error, error_size);
    PQclear(result);
    return result != NULL ? 0 : -1;
}

/* ---- Prepared statements of the writer ---- */

typedef enum statement {
    STATEMENT_PURGE,
    STATEMENT_DELIVERY_PURGE,
    STATEMENT_ORDER_INSERT,
    STATEMENT_ORDER_ITEM_INSERT,
    STATEMENT_ORDER_UPDATE,
    STATEMENT_ORDER_ITEMS_DEACTIVATE,
    STATEMENT_IDEMPOTENCY_PUT,
    STATEMENT_DELIVERY_INSERT,
    STATEMENT_REFUND_PUT,
    STATEMENT_TICKET_INSERT,
    STATEMENT_TICKET_UPDATE,
    STATEMENT_NOTIFY_UPDATE,
    STATEMENT_WAITLIST_PUT,
    STATEMENT_COUNT
} statement_t;

static const char *const STATEMENT_NAMES[STATEMENT_COUNT] = {
    "hf_purge",        "hf_delivery_purge",         "hf_order_insert",    "hf_order_item_insert",
    "hf_order_update", "hf_order_items_deactivate", "hf_idempotency_put", "hf_delivery_insert",
    "hf_refund_put",   "hf_ticket_insert",          "hf_ticket_update",   "hf_notify_update",
    "hf_waitlist_put"};

/* The updates that must change a row count it inside the statement (see the top). */
#define CHANGED(update) \
    "WITH changed AS (" update " RETURNING 1)" \
    " SELECT holdfast_changed(count(*)) FROM changed"

static const char *const STATEMENT_SQL[STATEMENT_COUNT] = {
    [STATEMENT_PURGE] = "DELETE FROM idempotency WHERE created_at < $1::bigint",
    [STATEMENT_DELIVERY_PURGE] = "DELETE FROM deliveries WHERE received_at < $1::bigint",
    [STATEMENT_ORDER_INSERT] =
        "INSERT INTO orders(id, event_id, user_id, reservation_id, status, items, total,"
        " currency, payment_ref, created_at, replaces)"
        " VALUES($1, $2, $3, $4, $5, $6, $7::bigint, $8, $9, $10::bigint, $11)",
    [STATEMENT_ORDER_ITEM_INSERT] =
        "INSERT INTO order_items(order_id, event_id, seat_id, pool_id, quantity)"
        " VALUES($1, $2, $3, $4, $5::bigint)",
    [STATEMENT_ORDER_UPDATE] = CHANGED(
        "UPDATE orders SET status = $2, replaced_by = COALESCE($3, replaced_by) WHERE id = $1"),
    [STATEMENT_ORDER_ITEMS_DEACTIVATE] = "UPDATE order_items SET active = 0 WHERE order_id = $1",
    [STATEMENT_IDEMPOTENCY_PUT] =
        "INSERT INTO idempotency(key, hash, status, body, created_at, unit)"
        " VALUES($1, $2::bytea, $3::integer, $4, $5::bigint, $6) ON CONFLICT(unit, key)"
        " DO UPDATE SET"
        " hash = excluded.hash, status = excluded.status, body = excluded.body,"
        " created_at = excluded.created_at",
    [STATEMENT_DELIVERY_INSERT] =
        "INSERT INTO deliveries(payment_intent_id, type, event_id, reservation_id, amount,"
        " result, reason, late, order_id, refund_id, received_at)"
        " VALUES($1, $2, $3, $4, $5::bigint, $6, $7, $8::integer, $9, $10, $11::bigint)",
    [STATEMENT_REFUND_PUT] =
        "INSERT INTO refunds(id, payment_intent_id, reservation_id, amount, reason, status,"
        " created_at, order_id) VALUES($1, $2, $3, $4::bigint, $5, $6, $7::bigint, $8)"
        " ON CONFLICT(id) DO UPDATE SET status = excluded.status",
    [STATEMENT_TICKET_INSERT] =
        "INSERT INTO tickets(id, event_id, user_id, line_seq, status, created_at, admitted_at,"
        " updated_at) VALUES($1, $2, $3, $4::bigint, $5, $6::bigint, $7::bigint, $6::bigint)",
    [STATEMENT_TICKET_UPDATE] =
        "UPDATE tickets SET status = $2, admitted_at = $3::bigint, updated_at = $4::bigint"
        " WHERE id = $1",
    /* A notification's delivery state is its history entry's (engine/outbox.h). */
    [STATEMENT_NOTIFY_UPDATE] =
        "UPDATE history SET notify_status = $3::integer, notify_attempts = $4::integer,"
        " notify_last_status = $5::integer, notify_last_error = $6, notify_next_at = $7::bigint"
        " WHERE event_id = $1 AND seq = $2::bigint",
    /* A waitlist entry as it stands, as SQLite's store writes it. */
    [STATEMENT_WAITLIST_PUT] =
        "INSERT INTO waitlist(id, event_id, user_id, section, pool, quantity, sequence, status,"
        " hold_id, joined_at, updated_at) VALUES($1, $2, $3, $4, $5, $6::bigint, $7::bigint, $8,"
        " $9, $10::bigint, $11::bigint) ON CONFLICT(id) DO UPDATE SET status = excluded.status,"
        " hold_id = excluded.hold_id, updated_at = excluded.updated_at",
};

/* Connects the writer, prepares its statements and enters pipeline mode. */
static int writer_connect(hf_pg_store_t *store, char *error, size_t error_size) {
    if (store->writer != NULL && PQstatus(store->writer) == CONNECTION_OK && store->writer_ready)
        return 0;
    /* A new connection would not answer for the batches sent on the old one. */
    if (store->sent_count > 0) {
        hf_store_error_write(error, error_size,
                             "store: the connection to PostgreSQL broke with a batch in flight");
        return -1;
    }
    connection_drop(&store->writer);
    store->writer_ready = false;
    store->queued = store->tags_read = 0;
    store->writer = hf_pg_connect(store->url, error, error_size);
    if (store->writer == NULL) return -1;
    /* A lock wait (a takeover's, an operator's) ends the batch with the server's own error;
     * a long statement does not (a big batch's rows), the wait for results bounds silence.
     * Custom plans: a generic plan made while a table was small (a fresh store) would keep
     * scanning it whole once it has grown; planning a batch's few statements costs little. */
    if (exec_ok(&store->writer,
                "SET lock_timeout = " HF_PG_WAIT_TEXT "000;"
                " SET plan_cache_mode = force_custom_plan",
                error, error_size) != 0)
        return -1;
    for (int i = 0; i < STATEMENT_COUNT; i++) {
        PGresult *result = PQprepare(store->writer, STATEMENT_NAMES[i], STATEMENT_SQL[i], 0, NULL);
        bool ok = PQresultStatus(result) == PGRES_COMMAND_OK;
        if (!ok) {
            char why[512];
            snprintf(why, sizeof why, "%s", PQresultErrorMessage(result));
            hf_pg_message_trim(why);
            hf_store_error_write(error, error_size, "store: cannot prepare \"%s\": %s",
                                 STATEMENT_SQL[i], why);
        }
        PQclear(result);
        if (!ok) {
            connection_drop(&store->writer);
            return -1;
        }
    }
    if (hf_pg_runs_prepare(store->writer, error, error_size) != 0 ||
        hf_pg_dispatch_prepare(store->writer, error, error_size) != 0 ||
        hf_pg_events_prepare(store->writer, error, error_size) != 0 ||
        hf_pg_jobs_prepare(store->writer, error, error_size) != 0 ||
        hf_pg_calendars_prepare(store->writer, error, error_size) != 0 ||
        hf_pg_allocations_prepare(store->writer, error, error_size) != 0 ||
        hf_pg_order_locks_prepare(store->writer, error, error_size) != 0) {
        connection_drop(&store->writer);
        return -1;
    }
    if (!PQenterPipelineMode(store->writer)) {
        hf_store_error_write(error, error_size, "store: cannot enter pipeline mode");
        connection_drop(&store->writer);
        return -1;
    }
    atomic_store(&store->writer_pid, PQbackendPID(store->writer));
    store->writer_ready = true;
    return 0;
}

/* ---- Opening ---- */

static int schema_check(hf_pg_store_t *store, char *error, size_t error_size) {
    PGresult *result = hf_pg_exec(&store->writer,
                                  "SELECT value FROM meta WHERE key = 'schema_version'", 0, NULL,
                                  error, error_size);
    if (result == NULL) return -1;
    const char *version = PQntuples(result) == 1 ? PQgetvalue(result, 0, 0) : "";
    int rc = 0;
    if (strcmp(version, HF_PG_SCHEMA_VERSION) != 0) {
        hf_store_error_write(error, error_size,
                             "store: the database has schema version \"%s\"; this server writes "
                             "version %s",
                             version, HF_PG_SCHEMA_VERSION);
        rc = -1;
    }
    PQclear(result);
    return rc;
}

static void postgres_close(void *instance);

/* A password in the URL (user:password@ or ?password=) is a secret the log redacts wherever it
 * would appear (the start line names the store). Registered by the first open only, which
 * runs before any thread starts (lib/log.h). */
static void password_redact(const char *url) {
    static bool registered;
    if (registered) return;
    registered = true;
    PQconninfoOption *options = PQconninfoParse(url, NULL);
    for (PQconninfoOption *option = options; option != NULL && option->keyword != NULL; option++)
        if (strcmp(option->keyword, "password") == 0 && option->val != NULL)
            hf_log_secret_add(option->val);
    PQconninfoFree(options);
}

static int postgres_open(void **instance, const char *url, char *error, size_t error_size) {
    *instance = NULL;
    password_redact(url);
    hf_pg_store_t *store = calloc(1, sizeof *store);
    if (store == NULL) abort();
    store->url = strdup(url);
    if (store->url == NULL) abort();
    pthread_mutex_init(&store->lease_mutex, NULL);
    hf_map_init(&store->epochs);
    store->writer = hf_pg_connect(url, error, error_size);
    if (store->writer == NULL) goto fail;
    /* Notices (CREATE ... IF NOT EXISTS on a second start) are not the operator's business. */
    if (exec_ok(&store->writer, "SET client_min_messages = warning", error, error_size) != 0 ||
        exec_ok(&store->writer, hf_pg_schema, error, error_size) != 0 ||
        schema_check(store, error, error_size) != 0)
        goto fail;
    *instance = store;
    return 0;
fail:
    postgres_close(store);
    return -1;
}

int hf_pg_load(void *instance, const hf_store_loader_t *loader, char *error, size_t error_size) {
    hf_pg_store_t *store = instance;
    return hf_pg_tables_load(&(hf_pg_source_t){&store->writer, NULL}, NULL, loader, error,
                             error_size);
}

static int postgres_start(void *instance, hf_store_done_fn done, void *context, char *error,
                          size_t error_size) {
    hf_pg_store_t *store = instance;
    /* The load's connection becomes the writer's, in pipeline mode from now on. */
    connection_drop(&store->writer);
    return writer_connect(store, error, error_size);
}

/* ---- Writing a batch (the writer thread) ---- */

/* Every query is followed by a flush request, so the server sends each result as soon as it
 * has it: the batch's wait is a bound on silence (HF_PG_WAIT_MS without a result), not on the
 * batch's whole work, which grows with its size (a burst of expiries writes thousands of rows). */
void hf_pg_tag_push(hf_pg_store_t *store, int32_t tag) {
    if (store->queued == store->tags_capacity) {
        store->tags_capacity = store->tags_capacity ? 2 * store->tags_capacity : 256;
        store->tags = realloc(store->tags, store->tags_capacity * sizeof *store->tags);
        if (store->tags == NULL) abort();
    }
    store->tags[store->queued++] = tag;
}

static void tag_push(hf_pg_store_t *store, int32_t tag) {
    PQsendFlushRequest(store->writer);
    hf_pg_tag_push(store, tag);
}

/* Queues one prepared statement; libpq copies the values into its buffer at once. A value
 * whose length is given (the hash) goes as binary. */
static bool queue_prepared(hf_pg_store_t *store, statement_t id, int count,
                           const char *const *values, const int *lengths, int32_t tag) {
    int formats[12] = {0};
    for (int i = 0; lengths != NULL && i < count; i++) formats[i] = lengths[i] > 0;
    if (!PQsendQueryPrepared(store->writer, STATEMENT_NAMES[id], count, values, lengths, formats,
                             0))
        return false;
    tag_push(store, tag);
    return true;
}

bool hf_pg_queue_named(hf_pg_store_t *store, const char *name, int count, const char *const *values,
                       int32_t tag) {
    if (!PQsendQueryPrepared(store->writer, name, count, values, NULL, NULL, 0)) return false;
    tag_push(store, tag);
    return true;
}

bool hf_pg_queue_text(hf_pg_store_t *store, const char *sql, int count, const char *const *values,
                      int32_t tag) {
    if (!PQsendQueryParams(store->writer, sql, count, NULL, values, NULL, NULL, 0)) return false;
    tag_push(store, tag);
    return true;
}

bool hf_pg_queue_fence(hf_pg_store_t *store, const char *const *values) {
    return hf_pg_queue_text(store, "SELECT holdfast_fence($1::text[], $2, $3::bigint[])", 3, values,
                            TAG_FENCE);
}

typedef char number_t[24];

static const char *number(number_t out, int64_t value) {
    snprintf(out, sizeof(number_t), "%" PRId64, value);
    return out;
}

static bool queue_order_create(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag) {
    number_t a, b;
    const hf_mutation_order_create_t *o = &m->as.order_create;
    hf_buffer_reset(&store->text);
    hf_rows_lines_write(&store->text, o->target, &o->items, &o->uses);
    hf_buffer_append_char(&store->text, '\0');
    const char *values[] = {o->order_id,
                            o->event_id,
                            o->user_id,
                            o->hold_id,
                            hf_pg_order_word(o->status),
                            store->text.data,
                            number(a, o->total),
                            o->currency,
                            o->payment_ref,
                            number(b, m->at_ms),
                            o->replaces};
    if (!queue_prepared(store, STATEMENT_ORDER_INSERT, 11, values, NULL, tag)) return false;
    if (o->target != HF_TARGET_CALENDAR) return true;
    return hf_pg_calendar_uses_queue(store, o->order_id, o->event_id, &o->uses, tag);
}

static bool queue_order_item(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag) {
    number_t a;
    const hf_mutation_order_item_t *o = &m->as.order_item;
    uint32_t quantity = o->seat_id != NULL && o->quantity == 0 ? 1 : o->quantity;
    const char *values[] = {o->order_id, o->event_id, o->seat_id, o->pool_id, number(a, quantity)};
    return queue_prepared(store, STATEMENT_ORDER_ITEM_INSERT, 5, values, NULL, tag);
}

static bool queue_order_update(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag) {
    const hf_mutation_order_update_t *o = &m->as.order_update;
    const char *values[] = {o->order_id, hf_pg_order_word(o->status), o->replaced_by};
    if (!queue_prepared(store, STATEMENT_ORDER_UPDATE, 3, values, NULL, tag)) return false;
    if (o->status == HF_ORDER_CONFIRMED) return true;
    /* A cancelled or exchanged order's seats leave the unique index, so they can be sold
     * again (an exchange's new order, whose rows come after this record, among others). */
    return queue_prepared(store, STATEMENT_ORDER_ITEMS_DEACTIVATE, 1, values, NULL, tag);
}

static bool queue_idempotency(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag) {
    const hf_mutation_idempotency_t *m = &mutation->as.idempotency;
    number_t a, b;
    /* A missing hash goes as NULL, which NOT NULL turns into a named failure. */
    const char *values[] = {m->key,  (const char *)m->hash,      number(a, m->status),
                            m->body, number(b, mutation->at_ms), hf_store_record_unit(mutation)};
    int lengths[] = {0, m->hash != NULL ? 32 : 0, 0, 0, 0, 0};
    return queue_prepared(store, STATEMENT_IDEMPOTENCY_PUT, 6, values, lengths, tag);
}

static bool queue_delivery(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag) {
    const hf_mutation_delivery_t *m = &mutation->as.delivery;
    number_t a, b;
    bool refunded = m->result == HF_PAYMENT_REFUND_REQUIRED;
    const char *values[] = {
        m->payment_intent_id,
        hf_record_word(hf_payment_type_name, m->type, HF_PAYMENT_FAILED),
        m->event_id,
        m->reservation_id,
        number(a, m->amount),
        hf_record_word(hf_payment_result_name, m->result, HF_PAYMENT_RECORDED),
        refunded ? hf_record_word(hf_refund_reason_name, m->reason, HF_REFUND_REASON_LAST) : NULL,
        m->late ? "1" : "0",
        m->order_id,
        m->refund_id,
        number(b, mutation->at_ms)};
    return queue_prepared(store, STATEMENT_DELIVERY_INSERT, 11, values, NULL, tag);
}

static bool queue_refund(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag) {
    const hf_mutation_refund_t *m = &mutation->as.refund;
    number_t a, b;
    const char *values[] = {m->refund_id,
                            m->payment_intent_id,
                            m->reservation_id,
                            number(a, m->amount),
                            hf_record_word(hf_refund_reason_name, m->reason, HF_REFUND_REASON_LAST),
                            hf_record_word(hf_refund_status_name, m->status, HF_REFUND_COMPLETED),
                            number(b, m->created_at_ms),
                            m->order_id};
    return queue_prepared(store, STATEMENT_REFUND_PUT, 8, values, NULL, tag);
}

/* A ticket's join (a new row) or its new status, as SQLite's store writes them. */
static bool queue_ticket_create(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag) {
    const hf_mutation_ticket_t *m = &mutation->as.ticket;
    number_t a, b, c;
    const char *values[] = {m->ticket_id,
                            m->event_id,
                            m->user_id,
                            number(a, m->seq),
                            hf_record_word(hf_ticket_status_name, m->status, HF_TICKET_ABANDONED),
                            number(b, mutation->at_ms),
                            m->admitted_at_ms ? number(c, m->admitted_at_ms) : NULL};
    return queue_prepared(store, STATEMENT_TICKET_INSERT, 7, values, NULL, tag);
}

static bool queue_ticket_update(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag) {
    const hf_mutation_ticket_t *m = &mutation->as.ticket;
    number_t a, c;
    const char *values[] = {
        m->ticket_id, hf_record_word(hf_ticket_status_name, m->status, HF_TICKET_ABANDONED),
        m->admitted_at_ms ? number(c, m->admitted_at_ms) : NULL, number(a, mutation->at_ms)};
    return queue_prepared(store, STATEMENT_TICKET_UPDATE, 4, values, NULL, tag);
}

static bool queue_waitlist(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag) {
    const hf_mutation_waitlist_t *m = &mutation->as.waitlist;
    number_t a, b, c, d;
    const char *values[] = {
        m->waitlist_id,
        m->event_id,
        m->user_id,
        m->section,
        m->pool,
        number(a, m->quantity),
        number(b, m->sequence),
        hf_record_word(hf_waitlist_status_name, m->status, HF_WAITLIST_CANCELLED),
        m->hold_id,
        number(c, m->joined_at_ms),
        number(d, mutation->at_ms)};
    return queue_prepared(store, STATEMENT_WAITLIST_PUT, 11, values, NULL, tag);
}

static bool queue_notify(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag) {
    const hf_mutation_notify_t *m = &mutation->as.notify;
    number_t a, b, c, d, e;
    const char *values[] = {m->unit,
                            number(a, m->seq),
                            number(b, m->status),
                            number(c, m->attempts),
                            m->last_status != 0 ? number(d, m->last_status) : NULL,
                            m->last_error,
                            number(e, m->next_attempt_ms)};
    return queue_prepared(store, STATEMENT_NOTIFY_UPDATE, 7, values, NULL, tag);
}

/* Seats and pools follow from holds and orders: nothing to write (as SQLite's store). */
static bool queue_seat(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag) { return true; }
static bool queue_pool(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag) { return true; }
/* Spans follow from holds and orders, as seats do. */
static bool queue_calendar_change(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag) {
    return true;
}

/* The writes of the other files: events (events.c), holds in runs (runs.c), drivers and rides
 * (dispatch.c). */
#define queue_calendar_create hf_pg_calendar_create_queue
#define queue_calendar_resources hf_pg_calendar_resources_queue
#define queue_calendar_sales hf_pg_calendar_sales_queue
#define queue_event_create hf_pg_event_create_queue
#define queue_event_sales hf_pg_event_sales_queue
#define queue_event_update hf_pg_event_update_queue
#define queue_event_delete hf_pg_event_delete_queue
#define queue_hold_create hf_pg_run_hold_insert
#define queue_hold_update hf_pg_run_hold_update
#define queue_event_cancel hf_pg_event_cancel_queue
#define queue_job hf_pg_job_queue
#define queue_job_offer hf_pg_job_offer_queue
#define queue_driver hf_pg_driver_queue
#define queue_ride hf_pg_ride_queue
#define queue_allocation hf_pg_allocation_queue
#define queue_order_lock hf_pg_order_lock_queue

/* The backend's table of writes: queue_NAME for each kind of the list (core/mutation.h), so a
 * kind without its write here fails to compile. */
typedef bool (*queue_fn)(hf_pg_store_t *store, const hf_mutation_t *mutation, int32_t tag);
#define QUEUE(KIND, value, lower, member) [HF_MUTATION_##KIND] = queue_##lower,
static const queue_fn QUEUES[HF_RECORD_KIND_LIMIT] = {HF_RECORD_KINDS(QUEUE)};

static bool record_queue(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag) {
    /* Any other kind ends the open run of hold rows: the batch's order is kept. */
    if (m->type != HF_MUTATION_HOLD_CREATE && m->type != HF_MUTATION_HOLD_UPDATE &&
        !hf_pg_run_flush(store, &store->run))
        return false;
    queue_fn queue = (size_t)m->type < HF_RECORD_KIND_LIMIT ? QUEUES[m->type] : NULL;
    return queue != NULL && queue(store, m, tag);
}

/* Old keys and deliveries, as SQLite's store purges them (from the batch's newest time). */
static bool purge_queue(hf_pg_store_t *store, const hf_batch_t *batch) {
    if (store->batches_since_purge++ % PURGE_EVERY_BATCHES != 0) return true;
    int64_t newest_ms = 0;
    for (size_t i = 0; i < hf_batch_count(batch); i++)
        if (hf_batch_at(batch, i)->at_ms > newest_ms) newest_ms = hf_batch_at(batch, i)->at_ms;
    if (newest_ms > HF_IDEMPOTENCY_KEEP_MS) {
        number_t a;
        const char *values[] = {number(a, newest_ms - HF_IDEMPOTENCY_KEEP_MS)};
        if (!queue_prepared(store, STATEMENT_PURGE, 1, values, NULL, TAG_PURGE)) return false;
    }
    if (newest_ms > HF_WEBHOOK_DEDUP_KEEP_MS) {
        number_t b;
        const char *values[] = {number(b, newest_ms - HF_WEBHOOK_DEDUP_KEEP_MS)};
        if (!queue_prepared(store, STATEMENT_DELIVERY_PURGE, 1, values, NULL, TAG_PURGE))
            return false;
    }
    return true;
}

int hf_pg_send_failed(hf_pg_store_t *store, char *error, size_t error_size) {
    char why[256];
    snprintf(why, sizeof why, "%s", store->writer ? PQerrorMessage(store->writer) : "");
    hf_pg_message_trim(why);
    hf_store_error_write(error, error_size, "store: cannot send the batch to PostgreSQL: %s", why);
    connection_drop(&store->writer);
    store->writer_ready = false;
    return -1;
}

/* Queues BEGIN, the fence, the purge and every record; nothing is read back before commit. */
static int postgres_batch_write(void *instance, const hf_batch_t *batch, char *error,
                                size_t error_size) {
    hf_pg_store_t *store = instance;
    store->batch = batch;
    store->run.kind = store->history_run.kind = HF_PG_RUN_NONE;
    if (writer_connect(store, error, error_size) != 0) return -1;
    if (!hf_pg_queue_text(store, "BEGIN", 0, NULL, TAG_BEGIN))
        return hf_pg_send_failed(store, error, error_size);
    if (hf_pg_fence_write(store, batch, error, error_size) != 0) return -1;
    if (!purge_queue(store, batch)) return hf_pg_send_failed(store, error, error_size);
    for (size_t i = 0; i < hf_batch_count(batch); i++) {
        const hf_mutation_t *m = hf_batch_at(batch, i);
        if (!record_queue(store, m, (int32_t)i)) return hf_pg_send_failed(store, error, error_size);
        hf_pg_history_add(store, m);
    }
    /* The entries of the batch's history last, in one statement (runs.c). */
    if (!hf_pg_run_flush(store, &store->run) || !hf_pg_run_flush(store, &store->history_run))
        return hf_pg_send_failed(store, error, error_size);
    return 0;
}

static void postgres_close(void *instance) {
    hf_pg_store_t *store = instance;
    if (store == NULL) return;
    connection_drop(&store->writer);
    connection_drop(&store->reader);
    hf_pg_leases_close(store);
    if (store->read_items != NULL) hf_rows_items_free(store->read_items);
    free(store->read_items);
    hf_buffer_free(&store->text);
    hf_buffer_free(&store->history);
    hf_buffer_free(&store->fence);
    hf_pg_runs_free(store);
    free(store->tags);
    free(store->url);
    pthread_mutex_destroy(&store->lease_mutex);
    free(store);
}

const hf_store_backend_t hf_store_postgres_backend = {
    .version = HF_STORE_BACKEND_VERSION,
    .scheme = "postgres://",
    .open = postgres_open,
    .load = hf_pg_load,
    .read_hold = hf_pg_hold_read,
    .list_holds = hf_pg_holds_list,
    .read_history = hf_pg_history_read,
    .read_outbox = hf_pg_outbox_read,
    .outbox_pending = hf_pg_outbox_pending,
    .read_ticket = hf_pg_ticket_read,
    .start = postgres_start,
    .batch_write = postgres_batch_write,
    .batch_commit = hf_pg_batch_commit,
    .batch_abort = hf_pg_batch_abort,
    .batch_send = hf_pg_batch_send,
    .batch_finish = hf_pg_batch_finish,
    .batches_in_flight_max = HF_PG_SENT_MAX,
    .close = postgres_close,
    .lease_acquire = hf_pg_lease_acquire,
    .lease_renew = hf_pg_lease_renew,
    .lease_release = hf_pg_lease_release,
    .lease_list = hf_pg_lease_list,
    .load_unit = hf_pg_unit_load,
    .unit_find = hf_pg_unit_find,
    .unit_fetch = hf_pg_unit_fetch,
    .unit_deliver = hf_pg_unit_deliver,
    .unit_rows_free = hf_pg_unit_rows_free,
    .read_ride = hf_pg_ride_read,
    .list_rides = hf_pg_rides_list,
    .setting_claim = hf_pg_setting_claim,
};
