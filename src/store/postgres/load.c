/* The PostgreSQL backend's reading side: every table back at start (or one unit's rows at a
 * takeover), in one repeatable-read transaction so the tables are seen at the same instant;
 * one hold the core has forgotten, an event's holds and a page of its history through the
 * engine thread's own connection. Rows are read as SQLite's store reads them (store/rows.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "store/backend.h"
#include "store/postgres/internal.h"
#include "store/rows.h"

/* A listing of an event's holds reads this many rows per round trip: a staff page is smaller,
 * and an event's holds are never all in memory at once. */
#define LIST_PAGE_ROWS 500

typedef struct load_context {
    const hf_store_loader_t *loader;
    hf_rows_items_t *items;
    char *error;
    size_t error_size;
} load_context_t;

#define ROW_UNREADABLE INT32_MIN

typedef int (*row_deliver_fn)(PGresult *result, int row, load_context_t *context);

static const char *text_at(PGresult *result, int row, int column) {
    return PQgetisnull(result, row, column) ? NULL : PQgetvalue(result, row, column);
}

static int64_t integer_at(PGresult *result, int row, int column) {
    return PQgetisnull(result, row, column) ? 0 : strtoll(PQgetvalue(result, row, column), NULL, 10);
}

static int unreadable(load_context_t *context, const char *table, const char *id,
                      const char *why) {
    hf_store_error_write(context->error, context->error_size, "store: %s row %s: %s", table,
                         id != NULL ? id : "(null)", why);
    return ROW_UNREADABLE;
}

static int status_read(const char *word, int status, load_context_t *context, const char *table,
                       const char *id) {
    if (status < 0) {
        char why[96];
        snprintf(why, sizeof why, "the unknown status \"%.40s\"", word != NULL ? word : "NULL");
        unreadable(context, table, id, why);
    }
    return status;
}

static int items_read(const char *text, hf_hold_request_t *request, load_context_t *context,
                      const char *table, const char *id) {
    char why[160];
    if (hf_rows_items_read(text, context->items, request, why, sizeof why) == 0) return 0;
    return unreadable(context, table, id, why);
}

static int event_deliver(PGresult *result, int row, load_context_t *context) {
    const char *id = text_at(result, row, 0);
    hf_event_definition_t definition;
    char why[160];
    int rc = 0;
    if (hf_rows_definition_read(text_at(result, row, 1), &definition, why, sizeof why) != 0)
        rc = unreadable(context, "events", id, why);
    else if (id == NULL || strcmp(definition.id, id) != 0)
        rc = unreadable(context, "events", id, "its definition names another event");
    if (rc == 0) {
        hf_stored_event_t event = {&definition, integer_at(result, row, 2),
                                   integer_at(result, row, 3) != 0};
        rc = context->loader->event(context->loader->context, &event);
    }
    hf_rows_definition_free(&definition);
    return rc;
}

#define SELECT_HOLDS \
    "SELECT id, event_id, user_id, status, items, total, created_at, expires_at, seq FROM holds"

static int hold_deliver(PGresult *result, int row, load_context_t *context) {
    hf_stored_hold_t hold = {.request = {.hold_id = text_at(result, row, 0),
                                         .event_id = text_at(result, row, 1),
                                         .user_id = text_at(result, row, 2),
                                         .ttl_ms = -1},
                             .total = integer_at(result, row, 5),
                             .created_at_ms = integer_at(result, row, 6),
                             .expires_at_ms = integer_at(result, row, 7)};
    const char *id = hold.request.hold_id;
    const char *word = text_at(result, row, 3);
    int status = status_read(word, hf_pg_hold_status(word), context, "holds", id);
    if (status < 0) return ROW_UNREADABLE;
    hold.status = (uint8_t)status;
    if (items_read(text_at(result, row, 4), &hold.request, context, "holds", id) != 0)
        return ROW_UNREADABLE;
    int rc = context->loader->hold(context->loader->context, &hold);
    hf_rows_items_free(context->items);
    return rc;
}

static int order_deliver(PGresult *result, int row, load_context_t *context) {
    hf_stored_order_t order = {.order_id = text_at(result, row, 0),
                               .items = {.event_id = text_at(result, row, 1),
                                         .user_id = text_at(result, row, 2), .ttl_ms = -1},
                               .hold_id = text_at(result, row, 3),
                               .total = integer_at(result, row, 6),
                               .payment_ref = text_at(result, row, 7),
                               .created_at_ms = integer_at(result, row, 8)};
    const char *word = text_at(result, row, 4);
    int status = status_read(word, hf_pg_order_status(word), context, "orders", order.order_id);
    if (status < 0) return ROW_UNREADABLE;
    order.status = (uint8_t)status;
    if (items_read(text_at(result, row, 5), &order.items, context, "orders", order.order_id) != 0)
        return ROW_UNREADABLE;
    int rc = context->loader->order(context->loader->context, &order);
    hf_rows_items_free(context->items);
    return rc;
}

static int idempotency_deliver(PGresult *result, int row, load_context_t *context) {
    size_t length = 0;
    const char *escaped = text_at(result, row, 1);
    unsigned char *hash = escaped != NULL ? PQunescapeBytea((const unsigned char *)escaped, &length)
                                          : NULL;
    hf_stored_idempotency_t answer = {.key = text_at(result, row, 0), .hash = hash,
                                      .status = (int)integer_at(result, row, 2),
                                      .body = text_at(result, row, 3),
                                      .created_at_ms = integer_at(result, row, 4)};
    int rc;
    if (hash == NULL || length != 32) {
        char why[64];
        snprintf(why, sizeof why, "a hash of %zu bytes, not 32", length);
        rc = unreadable(context, "idempotency", answer.key, why);
    } else if (answer.key == NULL || answer.body == NULL) {
        rc = unreadable(context, "idempotency", answer.key, "its key or body is missing");
    } else {
        rc = context->loader->idempotency(context->loader->context, &answer);
    }
    PQfreemem(hash);
    return rc;
}

static bool payment_word_read(const char *word, bool (*parse)(const char *, uint8_t *),
                              uint8_t *out, load_context_t *context, const char *table,
                              const char *id) {
    if (parse(word, out)) return true;
    char why[96];
    snprintf(why, sizeof why, "the unknown word \"%.40s\"", word != NULL ? word : "NULL");
    unreadable(context, table, id, why);
    return false;
}

static int refund_deliver(PGresult *result, int row, load_context_t *context) {
    hf_stored_refund_t refund = {.refund_id = text_at(result, row, 0),
                                 .payment_intent_id = text_at(result, row, 1),
                                 .reservation_id = text_at(result, row, 2),
                                 .amount = integer_at(result, row, 3),
                                 .created_at_ms = integer_at(result, row, 6),
                                 .event_id = text_at(result, row, 7),
                                 .order_id = text_at(result, row, 8)};
    const char *id = refund.refund_id;
    if (!payment_word_read(text_at(result, row, 4), hf_refund_reason_parse, &refund.reason,
                           context, "refunds", id) ||
        !payment_word_read(text_at(result, row, 5), hf_refund_status_parse, &refund.status,
                           context, "refunds", id))
        return ROW_UNREADABLE;
    return context->loader->refund(context->loader->context, &refund);
}

static int delivery_deliver(PGresult *result, int row, load_context_t *context) {
    hf_stored_delivery_t delivery = {.payment_intent_id = text_at(result, row, 0),
                                     .late = integer_at(result, row, 4) != 0,
                                     .order_id = text_at(result, row, 5),
                                     .refund_id = text_at(result, row, 6),
                                     .at_ms = integer_at(result, row, 7)};
    const char *id = delivery.payment_intent_id;
    if (!payment_word_read(text_at(result, row, 1), hf_payment_type_parse, &delivery.type,
                           context, "deliveries", id) ||
        !payment_word_read(text_at(result, row, 2), hf_payment_result_parse, &delivery.result,
                           context, "deliveries", id))
        return ROW_UNREADABLE;
    if (delivery.result == HF_PAYMENT_REFUND_REQUIRED &&
        !payment_word_read(text_at(result, row, 3), hf_refund_reason_parse, &delivery.reason,
                           context, "deliveries", id))
        return ROW_UNREADABLE;
    return context->loader->delivery(context->loader->context, &delivery);
}

static int ticket_deliver(PGresult *result, int row, load_context_t *context) {
    hf_stored_ticket_t ticket = {.ticket_id = text_at(result, row, 0),
                                 .event_id = text_at(result, row, 1),
                                 .user_id = text_at(result, row, 2),
                                 .seq = (uint32_t)integer_at(result, row, 3),
                                 .admitted_at_ms = integer_at(result, row, 5)};
    if (!payment_word_read(text_at(result, row, 4), hf_ticket_status_parse, &ticket.status,
                           context, "tickets", ticket.ticket_id))
        return ROW_UNREADABLE;
    return context->loader->ticket(context->loader->context, &ticket);
}

/* Each table's query for every row and for one unit's ($1: the unit). The holds of a unit
 * name its refunds and deliveries (their reservation_id). */
typedef struct load_step {
    const char *table;
    const char *all;
    const char *unit;
    row_deliver_fn deliver;
} load_step_t;

#define OF_UNIT_HOLDS "reservation_id IN (SELECT id FROM holds WHERE event_id = $2)"

static const load_step_t LOAD_EVENTS = {
    "events", "SELECT id, config, created_at, sales_open FROM events ORDER BY seq",
    "SELECT id, config, created_at, sales_open FROM events WHERE id = $1", event_deliver};
static const load_step_t LOAD_HOLDS = {"holds", SELECT_HOLDS " ORDER BY seq",
                                       SELECT_HOLDS " WHERE event_id = $1 ORDER BY seq",
                                       hold_deliver};
#define SELECT_ORDERS \
    "SELECT id, event_id, user_id, reservation_id, status, items, total, payment_ref," \
    " created_at FROM orders"
static const load_step_t LOAD_ORDERS = {"orders", SELECT_ORDERS " ORDER BY seq",
                                        SELECT_ORDERS " WHERE event_id = $1 ORDER BY seq",
                                        order_deliver};
/* A key belongs to the unit of the request that used it (store.h's HF_STORE_UNIT_NONE for
 * none): a unit's load reads only its own. */
#define SELECT_KEYS \
    "SELECT key, hash, status, body, created_at FROM idempotency" \
    " WHERE created_at >= $1::bigint"
static const load_step_t LOAD_IDEMPOTENCY = {
    "idempotency", SELECT_KEYS " ORDER BY created_at, key",
    SELECT_KEYS " AND unit = $2 ORDER BY created_at, key", idempotency_deliver};
/* A cancelled order's refund (order_id) is its event's, with or without a hold. */
#define SELECT_REFUNDS \
    "SELECT id, payment_intent_id, reservation_id, amount, reason, status, created_at," \
    " (SELECT event_id FROM holds WHERE holds.id = refunds.reservation_id), order_id" \
    " FROM refunds"
static const load_step_t LOAD_REFUNDS = {
    "refunds", SELECT_REFUNDS " ORDER BY seq",
    SELECT_REFUNDS " WHERE reservation_id IN (SELECT id FROM holds WHERE event_id = $1)"
    " OR order_id IN (SELECT id FROM orders WHERE event_id = $1)"
    /* The records of no unit: webhooks' refunds of holds no event has. */
    " OR ($1 = '" HF_STORE_UNIT_NONE "' AND order_id IS NULL"
    " AND reservation_id NOT IN (SELECT id FROM holds))"
    " ORDER BY seq",
    refund_deliver};
#define SELECT_DELIVERIES \
    "SELECT payment_intent_id, type, result, reason, late, order_id, refund_id, received_at" \
    " FROM deliveries WHERE received_at >= $1::bigint"
static const load_step_t LOAD_DELIVERIES = {
    "deliveries", SELECT_DELIVERIES " ORDER BY seq",
    SELECT_DELIVERIES " AND (" OF_UNIT_HOLDS
    /* The records of no unit: deliveries for holds no event has (repeats answered alike). */
    " OR ($2 = '" HF_STORE_UNIT_NONE "' AND (reservation_id IS NULL"
    " OR reservation_id NOT IN (SELECT id FROM holds))))"
    " ORDER BY seq", delivery_deliver};

#define SELECT_TICKETS \
    "SELECT id, event_id, user_id, line_seq, status, COALESCE(admitted_at, 0) FROM tickets"
static const load_step_t LOAD_TICKETS = {"tickets", SELECT_TICKETS " ORDER BY seq",
                                         SELECT_TICKETS " WHERE event_id = $1 ORDER BY seq",
                                         ticket_deliver};

static int load_table(hf_pg_source_t *source, const load_step_t *step, const char *unit,
                      load_context_t *context) {
    char since[24];
    const char *values[2];
    int count = 0;
    if (step == &LOAD_IDEMPOTENCY || step == &LOAD_DELIVERIES) {
        int64_t ms = step == &LOAD_DELIVERIES ? context->loader->deliveries_since_ms
                                              : context->loader->keep_since_ms;
        snprintf(since, sizeof since, "%" PRId64, ms);
        values[count++] = since;
        if (unit != NULL) values[count++] = unit;
    } else if (unit != NULL) {
        values[count++] = unit;
    }
    char error[256];
    PGresult *result = hf_pg_source_exec(source, unit != NULL ? step->unit : step->all, count,
                                         values, error, sizeof error);
    if (result == NULL) {
        hf_store_error_write(context->error, context->error_size, "store: reading %s failed: %s",
                             step->table, error);
        return -1;
    }
    if (hf_pg_source_keeps(source, result)) return 0;
    int rc = 0;
    for (int row = 0; rc == 0 && row < PQntuples(result); row++) {
        rc = step->deliver(result, row, context);
        if (rc != 0 && rc != ROW_UNREADABLE) {
            const char *subject = text_at(result, row, 0);
            hf_store_error_write(context->error, context->error_size,
                                 "store: loading %s stopped at %s (%d)", step->table,
                                 subject != NULL ? subject : "a row", rc);
        }
    }
    PQclear(result);
    return rc == ROW_UNREADABLE ? -1 : rc;
}

static int finished_holds_count(hf_pg_source_t *source, const char *unit,
                                const hf_store_loader_t *loader, char *error, size_t error_size) {
    const char *values[] = {unit};
    PGresult *result = hf_pg_source_exec(
        source,
        unit != NULL ? "SELECT count(*) FROM holds WHERE event_id = $1 AND status IN"
                       " ('released', 'expired')"
                     : "SELECT count(*) FROM holds WHERE status IN ('released', 'expired')",
        unit != NULL ? 1 : 0, values, error, error_size);
    if (result == NULL) return -1;
    if (hf_pg_source_keeps(source, result)) return 0;
    uint64_t count = strtoull(PQgetvalue(result, 0, 0), NULL, 10);
    PQclear(result);
    return loader->finished_holds(loader->context, count);
}

int hf_pg_tables_load(hf_pg_source_t *source, const char *unit, const hf_store_loader_t *loader,
                      char *error, size_t error_size) {
    /* A delivery runs no statement: its transaction was the fetch's. */
    PGconn **connection = source->connection;
    static const char BEGIN[] = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
    PGresult *begun =
        connection == NULL ? NULL : hf_pg_exec(connection, BEGIN, 0, NULL, error, error_size);
    if (connection != NULL && begun == NULL) return -1;
    PQclear(begun);
    hf_rows_items_t *items = calloc(1, sizeof *items);
    if (items == NULL) abort();
    load_context_t context = {loader, items, error, error_size};
    int result = loader->event ? load_table(source, &LOAD_EVENTS, unit, &context) : 0;
    if (result == 0 && loader->finished_holds != NULL)
        result = finished_holds_count(source, unit, loader, error, error_size);
    if (result == 0 && loader->hold) result = load_table(source, &LOAD_HOLDS, unit, &context);
    if (result == 0 && loader->order)
        result = load_table(source, &LOAD_ORDERS, unit, &context);
    if (result == 0 && loader->idempotency)
        result = load_table(source, &LOAD_IDEMPOTENCY, unit, &context);
    if (result == 0 && loader->refund)
        result = load_table(source, &LOAD_REFUNDS, unit, &context);
    if (result == 0 && loader->delivery)
        result = load_table(source, &LOAD_DELIVERIES, unit, &context);
    if (result == 0 && loader->ticket)
        result = load_table(source, &LOAD_TICKETS, unit, &context);
    if (result == 0) result = hf_pg_dispatch_load(source, unit, loader, error, error_size);
    free(items);
    if (connection != NULL) {
        char ignored[128];
        PQclear(hf_pg_exec(connection, "COMMIT", 0, NULL, ignored, sizeof ignored));
    }
    return result;
}

/* ---- A unit's rows fetched on one thread, delivered on another ---- */

PGresult *hf_pg_source_exec(hf_pg_source_t *source, const char *sql, int count,
                            const char *const *values, char *error, size_t error_size) {
    if (source->connection != NULL)
        return hf_pg_exec(source->connection, sql, count, values, error, error_size);
    hf_pg_kept_t *kept = source->kept;
    if (kept->next >= kept->count) {
        hf_store_error_write(error, error_size, "store: fewer results kept than read back");
        return NULL;
    }
    PGresult *result = kept->results[kept->next];
    kept->results[kept->next++] = NULL; /* the caller's to clear now */
    return result;
}

bool hf_pg_source_keeps(hf_pg_source_t *source, PGresult *result) {
    hf_pg_kept_t *kept = source->kept;
    if (source->connection == NULL || kept == NULL) return false;
    if (kept->count == kept->capacity) {
        kept->capacity = kept->capacity ? 2 * kept->capacity : 16;
        kept->results = realloc(kept->results, kept->capacity * sizeof *kept->results);
        if (kept->results == NULL) abort();
    }
    kept->results[kept->count++] = result;
    return true;
}

void hf_pg_kept_free(hf_pg_kept_t *kept) {
    if (kept == NULL) return;
    for (size_t i = 0; i < kept->count; i++) PQclear(kept->results[i]);
    free(kept->results);
    free(kept);
}

/* ---- The engine thread's reads ---- */

int hf_pg_reader_open(hf_pg_store_t *store, char *error, size_t error_size) {
    if (store->read_items == NULL) {
        store->read_items = calloc(1, sizeof *store->read_items);
        if (store->read_items == NULL) abort();
    }
    if (store->reader != NULL && PQstatus(store->reader) == CONNECTION_OK) return 0;
    PQfinish(store->reader);
    store->reader = hf_pg_connect(store->url, error, error_size);
    return store->reader != NULL ? 0 : -1;
}

/* One forgotten row read back by its id on the reader connection (a hold's or a ticket's:
 * what names it, its SELECT and its delivery). */
static int row_read(hf_pg_store_t *store, const char *what, const char *select, const char *id,
                    row_deliver_fn deliver, const hf_store_loader_t *loader, bool *found,
                    char *error, size_t error_size) {
    *found = false;
    if (hf_pg_reader_open(store, error, error_size) != 0) return -1;
    const char *values[] = {id};
    PGresult *result = hf_pg_exec(&store->reader, select, 1, values, error, error_size);
    if (result == NULL) return -1;
    load_context_t context = {loader, store->read_items, error, error_size};
    int rc = 0;
    if (PQntuples(result) == 1) {
        *found = true;
        rc = deliver(result, 0, &context);
        if (rc == ROW_UNREADABLE) rc = -1;
        else if (rc != 0)
            hf_store_error_write(error, error_size, "store: %s %s could not be taken back (%d)",
                                 what, id, rc);
    }
    PQclear(result);
    return rc;
}

int hf_pg_hold_read(void *instance, const char *hold_id, const hf_store_loader_t *loader,
                    bool *found, char *error, size_t error_size) {
    return row_read(instance, "hold", SELECT_HOLDS " WHERE id = $1", hold_id, hold_deliver,
                    loader, found, error, error_size);
}

int hf_pg_ticket_read(void *instance, const char *ticket_id, const hf_store_loader_t *loader,
                      bool *found, char *error, size_t error_size) {
    return row_read(instance, "ticket", SELECT_TICKETS " WHERE id = $1", ticket_id,
                    ticket_deliver, loader, found, error, error_size);
}

static void status_words(unsigned mask, char *out, size_t out_size) {
    static const char *const words[] = {"held", "confirmed", "released", "expired"};
    size_t length = 0;
    out[0] = '\0';
    for (int i = 0; mask != 0 && i < 4; i++) {
        if (!(mask & (1u << i))) continue;
        length += (size_t)snprintf(out + length, out_size - length, "%s%s,", length ? "" : ",",
                                   words[i]);
    }
}

/* The seq a listing resumes after (0 from the first); false when after_id is no hold of the
 * event, or on an error (*rc -1). */
static bool resume_seq(hf_pg_store_t *store, const hf_store_hold_query_t *query, int64_t *seq,
                       int *rc, char *error, size_t error_size) {
    *seq = 0;
    *rc = 0;
    if (query->after_id == NULL) return true;
    const char *values[] = {query->after_id, query->event_id};
    PGresult *result = hf_pg_exec(&store->reader,
                                  "SELECT seq FROM holds WHERE id = $1 AND event_id = $2", 2,
                                  values, error, error_size);
    if (result == NULL) {
        *rc = -1;
        return false;
    }
    bool found = PQntuples(result) == 1;
    if (found) *seq = integer_at(result, 0, 0);
    PQclear(result);
    return found;
}

int hf_pg_holds_list(void *instance, const hf_store_hold_query_t *query,
                     const hf_store_loader_t *loader, bool *after_found, char *error,
                     size_t error_size) {
    hf_pg_store_t *store = instance;
    if (hf_pg_reader_open(store, error, error_size) != 0) return -1;
    int64_t seq;
    int rc;
    *after_found = resume_seq(store, query, &seq, &rc, error, error_size);
    if (!*after_found) return rc;
    char words[64], after[24], limit[16];
    status_words(query->statuses, words, sizeof words);
    snprintf(limit, sizeof limit, "%d", LIST_PAGE_ROWS);
    load_context_t context = {loader, store->read_items, error, error_size};
    for (;;) {
        snprintf(after, sizeof after, "%" PRId64, seq);
        const char *values[] = {query->event_id, after, words, limit};
        PGresult *result = hf_pg_exec(
            &store->reader,
            SELECT_HOLDS " WHERE event_id = $1 AND seq > $2::bigint"
            " AND ($3 = '' OR strpos($3, ',' || status || ',') > 0) ORDER BY seq"
            " LIMIT $4::integer",
            4, values, error, error_size);
        if (result == NULL) return -1;
        int rows = PQntuples(result);
        for (int row = 0; rc == 0 && row < rows; row++) {
            rc = hold_deliver(result, row, &context);
            seq = integer_at(result, row, 8);
        }
        PQclear(result);
        if (rc == HF_STORE_LIST_STOP) return 0;
        if (rc == ROW_UNREADABLE) return -1;
        if (rc != 0) return rc;
        if (rows < LIST_PAGE_ROWS) return 0;
    }
}

/* A page of the history joined with what each entry is about, as SQLite's (sqlite/history.c):
 * the first $3 rows after $2, each joined with the hold its data names or else the order, by
 * their unique ids (the data's two ids are read once each, in the subquery). */
static const char READ_HISTORY[] =
    "SELECT s.seq, s.type, s.at, s.data, (s.rid IS NOT NULL OR s.oid IS NOT NULL)::int,"
    " COALESCE(s.rid, o.reservation_id), COALESCE(h.user_id, o.user_id),"
    " COALESCE(h.items, o.items)"
    " FROM (SELECT seq, type, at, data, data::json ->> 'reservation_id' AS rid,"
    "   data::json ->> 'order_id' AS oid FROM history"
    "   WHERE event_id = $1 AND seq > $2::bigint ORDER BY seq LIMIT $3::bigint) s"
    " LEFT JOIN holds h ON h.id = s.rid"
    " LEFT JOIN orders o ON s.rid IS NULL AND o.id = s.oid"
    " ORDER BY s.seq";

static int history_deliver(PGresult *result, int row, const hf_store_history_query_t *query,
                           hf_store_history_fn entry, void *context, char *error,
                           size_t error_size) {
    hf_stored_history_t item = {.seq = integer_at(result, row, 0),
                                .type = text_at(result, row, 1),
                                .at_ms = integer_at(result, row, 2),
                                .data = text_at(result, row, 3),
                                .data_length = (size_t)PQgetlength(result, row, 3),
                                .has_subject = integer_at(result, row, 4) != 0,
                                .reservation_id = text_at(result, row, 5),
                                .user_id = text_at(result, row, 6),
                                .items = text_at(result, row, 7)};
    /* A row's data is spliced into answers as it is: one that is not an object is refused. */
    if (item.type == NULL || item.data == NULL || item.data_length < 2 ||
        item.data[0] != '{' || item.data[item.data_length - 1] != '}') {
        hf_store_error_write(error, error_size, "store: history row %s/%" PRId64 " is damaged",
                             query->event_id, item.seq);
        return -1;
    }
    return entry(context, &item);
}

int hf_pg_history_read(void *instance, const hf_store_history_query_t *query,
                       hf_store_history_fn entry, void *context, char *error,
                       size_t error_size) {
    hf_pg_store_t *store = instance;
    if (hf_pg_reader_open(store, error, error_size) != 0) return -1;
    char after[24], limit[16];
    snprintf(after, sizeof after, "%" PRId64, query->after_seq);
    snprintf(limit, sizeof limit, "%" PRIu32, query->limit);
    const char *values[] = {query->event_id, after, limit};
    PGresult *result = hf_pg_exec(&store->reader, READ_HISTORY, 3, values, error, error_size);
    if (result == NULL) return -1;
    int rc = 0;
    for (int row = 0; rc == 0 && row < PQntuples(result); row++)
        rc = history_deliver(result, row, query, entry, context, error, error_size);
    PQclear(result);
    return rc == HF_STORE_LIST_STOP ? 0 : rc;
}
