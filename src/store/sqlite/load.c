/* The SQLite backend's reading side (backend.h's load and read_hold): every table back at
 * start, in one read transaction, and one hold the core has forgotten, through a read-only
 * connection of the engine thread's own. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/backend.h"
#include "store/rows.h"
#include "store/sqlite/internal.h"

/* ---- Loading (before start) ---- */

/* What a step needs while it reads a table: the loader, the parsed lines of the current hold
 * or order (about 24 KiB, so one per load, not one per row) and where to write an error. */
typedef struct load_context {
    const hf_store_loader_t *loader;
    hf_rows_items_t *items;
    char *error;
    size_t error_size;
} load_context_t;

/* A row that cannot be read (a damaged column): the step wrote the error itself. */
#define ROW_UNREADABLE INT32_MIN

/* Reads the statement's current row into the kind's struct and hands it to the loader's
 * callback; returns the callback's answer, or ROW_UNREADABLE. */
typedef int (*row_deliver_fn)(sqlite3_stmt *statement, load_context_t *context);

typedef struct load_step {
    const char *table;
    const char *sql;
    row_deliver_fn deliver;
} load_step_t;

static const char *column_text(sqlite3_stmt *statement, int column) {
    return (const char *)sqlite3_column_text(statement, column);
}

static int unreadable(load_context_t *context, const char *table, const char *id,
                      const char *why) {
    hf_store_error_write(context->error, context->error_size, "store: %s row %s: %s", table,
                         id != NULL ? id : "(null)", why);
    return ROW_UNREADABLE;
}

/* A status column's word as the core's number; -1 (after writing the error) for an unknown
 * word. */
static int status_read(sqlite3_stmt *statement, int column, const hf_sqlite_status_words_t *kind,
                       load_context_t *context, const char *table, const char *id) {
    const char *word = column_text(statement, column);
    int status = hf_sqlite_status_number(kind, word);
    if (status < 0) {
        char why[96];
        snprintf(why, sizeof why, "the unknown status \"%.40s\"", word != NULL ? word : "NULL");
        unreadable(context, table, id, why);
    }
    return status;
}

/* A JSON column parsed into the current lines and pointed to by request. The parsed document
 * is freed as soon as the row's callback returns: a forgotten hold is read back in the middle
 * of a request, while jansson allocates from the request's arena (engine/arena.h), which is
 * taken back at the request's end. */
static int items_read(sqlite3_stmt *statement, int column, hf_hold_request_t *request,
                      load_context_t *context, const char *table, const char *id) {
    char why[160];
    if (hf_rows_items_read(column_text(statement, column), context->items, request, why,
                           sizeof why) == 0)
        return 0;
    return unreadable(context, table, id, why);
}

static int event_deliver(sqlite3_stmt *statement, load_context_t *context) {
    const char *id = column_text(statement, 0);
    hf_event_definition_t definition;
    char why[160];
    int result = 0;
    if (hf_rows_definition_read(column_text(statement, 1), &definition, why, sizeof why) != 0)
        result = unreadable(context, "events", id, why);
    else if (id == NULL || strcmp(definition.id, id) != 0)
        result = unreadable(context, "events", id, "its definition names another event");
    if (result == 0) {
        hf_stored_event_t event = {&definition, sqlite3_column_int64(statement, 2),
                                   sqlite3_column_int(statement, 3) != 0};
        result = context->loader->event(context->loader->context, &event);
    }
    hf_rows_definition_free(&definition);
    return result;
}

#define SELECT_HOLDS \
    "SELECT id, event_id, user_id, status, items, total, created_at, expires_at FROM holds"

/* A holds row as SELECT_HOLDS reads it. */
static int hold_deliver(sqlite3_stmt *statement, load_context_t *context) {
    hf_stored_hold_t hold = {.request = {.hold_id = column_text(statement, 0),
                                         .event_id = column_text(statement, 1),
                                         .user_id = column_text(statement, 2),
                                         .ttl_ms = -1},
                             .total = sqlite3_column_int64(statement, 5),
                             .created_at_ms = sqlite3_column_int64(statement, 6),
                             .expires_at_ms = sqlite3_column_int64(statement, 7)};
    const char *id = hold.request.hold_id;
    int status = status_read(statement, 3, &hf_sqlite_hold_status, context, "holds", id);
    if (status < 0) return ROW_UNREADABLE;
    hold.status = (uint8_t)status;
    if (items_read(statement, 4, &hold.request, context, "holds", id) != 0) return ROW_UNREADABLE;
    int result = context->loader->hold(context->loader->context, &hold);
    hf_rows_items_free(context->items);
    return result;
}

static int order_deliver(sqlite3_stmt *statement, load_context_t *context) {
    hf_stored_order_t order = {.order_id = column_text(statement, 0),
                               .items = {.event_id = column_text(statement, 1),
                                         .user_id = column_text(statement, 2), .ttl_ms = -1},
                               .hold_id = column_text(statement, 3),
                               .total = sqlite3_column_int64(statement, 6),
                               .payment_ref = column_text(statement, 7),
                               .created_at_ms = sqlite3_column_int64(statement, 8)};
    int status = status_read(statement, 4, &hf_sqlite_order_status, context, "orders",
                             order.order_id);
    if (status < 0) return ROW_UNREADABLE;
    order.status = (uint8_t)status;
    if (items_read(statement, 5, &order.items, context, "orders", order.order_id) != 0)
        return ROW_UNREADABLE;
    int result = context->loader->order(context->loader->context, &order);
    hf_rows_items_free(context->items);
    return result;
}

static int idempotency_deliver(sqlite3_stmt *statement, load_context_t *context) {
    hf_stored_idempotency_t answer = {.key = column_text(statement, 0),
                                      .hash = sqlite3_column_blob(statement, 1),
                                      .status = sqlite3_column_int(statement, 2),
                                      .body = column_text(statement, 3),
                                      .created_at_ms = sqlite3_column_int64(statement, 4)};
    if (sqlite3_column_bytes(statement, 1) != HF_SQLITE_HASH_SIZE) {
        char why[64];
        snprintf(why, sizeof why, "a hash of %d bytes, not %d", sqlite3_column_bytes(statement, 1),
                 HF_SQLITE_HASH_SIZE);
        return unreadable(context, "idempotency", answer.key, why);
    }
    if (answer.key == NULL || answer.body == NULL)
        return unreadable(context, "idempotency", answer.key, "its key or body is missing");
    return context->loader->idempotency(context->loader->context, &answer);
}

/* A payment word of the API (core.h's names) read back; false after writing the error. */
static bool payment_word_read(sqlite3_stmt *statement, int column,
                              bool (*parse)(const char *, uint8_t *), uint8_t *out,
                              load_context_t *context, const char *table, const char *id) {
    const char *word = column_text(statement, column);
    if (parse(word, out)) return true;
    char why[96];
    snprintf(why, sizeof why, "the unknown word \"%.40s\"", word != NULL ? word : "NULL");
    unreadable(context, table, id, why);
    return false;
}

static int refund_deliver(sqlite3_stmt *statement, load_context_t *context) {
    hf_stored_refund_t refund = {.refund_id = column_text(statement, 0),
                                 .payment_intent_id = column_text(statement, 1),
                                 .reservation_id = column_text(statement, 2),
                                 .amount = sqlite3_column_int64(statement, 3),
                                 .created_at_ms = sqlite3_column_int64(statement, 6),
                                 .event_id = column_text(statement, 7),
                                 .order_id = column_text(statement, 8)};
    const char *id = refund.refund_id;
    if (!payment_word_read(statement, 4, hf_refund_reason_parse, &refund.reason, context,
                           "refunds", id) ||
        !payment_word_read(statement, 5, hf_refund_status_parse, &refund.status, context,
                           "refunds", id))
        return ROW_UNREADABLE;
    return context->loader->refund(context->loader->context, &refund);
}

static int delivery_deliver(sqlite3_stmt *statement, load_context_t *context) {
    hf_stored_delivery_t delivery = {.payment_intent_id = column_text(statement, 0),
                                     .late = sqlite3_column_int(statement, 4) != 0,
                                     .order_id = column_text(statement, 5),
                                     .refund_id = column_text(statement, 6),
                                     .at_ms = sqlite3_column_int64(statement, 7)};
    const char *id = delivery.payment_intent_id;
    if (!payment_word_read(statement, 1, hf_payment_type_parse, &delivery.type, context,
                           "deliveries", id) ||
        !payment_word_read(statement, 2, hf_payment_result_parse, &delivery.result, context,
                           "deliveries", id))
        return ROW_UNREADABLE;
    if (delivery.result == HF_PAYMENT_REFUND_REQUIRED &&
        !payment_word_read(statement, 3, hf_refund_reason_parse, &delivery.reason, context,
                           "deliveries", id))
        return ROW_UNREADABLE;
    return context->loader->delivery(context->loader->context, &delivery);
}

static int ticket_deliver(sqlite3_stmt *statement, load_context_t *context) {
    hf_stored_ticket_t ticket = {.ticket_id = column_text(statement, 0),
                                 .event_id = column_text(statement, 1),
                                 .user_id = column_text(statement, 2),
                                 .seq = (uint32_t)sqlite3_column_int64(statement, 3),
                                 .admitted_at_ms = sqlite3_column_int64(statement, 5)};
    if (!payment_word_read(statement, 4, hf_ticket_status_parse, &ticket.status, context,
                           "tickets", ticket.ticket_id))
        return ROW_UNREADABLE;
    return context->loader->ticket(context->loader->context, &ticket);
}

static const load_step_t LOAD_EVENTS = {
    "events", "SELECT id, config, created_at, sales_open FROM events ORDER BY seq", event_deliver};
static const load_step_t LOAD_HOLDS = {"holds", SELECT_HOLDS " ORDER BY seq", hold_deliver};
/* One hold the core has forgotten (hf_store_read_hold). */
static const load_step_t READ_HOLD = {"holds", SELECT_HOLDS " WHERE id = ?1", hold_deliver};
/* An event's holds after a seq, oldest first, whose status is one of ?3's words (",held,"), or
 * any when ?3 is empty: a range scan of the index holds_event (event_id, seq). */
static const load_step_t LIST_HOLDS = {
    "holds",
    SELECT_HOLDS " WHERE event_id = ?1 AND seq > ?2"
    " AND (?3 = '' OR instr(?3, ',' || status || ',') > 0) ORDER BY seq",
    hold_deliver};
static const char FIND_HOLD_SEQ[] = "SELECT seq FROM holds WHERE id = ?1 AND event_id = ?2";
static const load_step_t LOAD_ORDERS = {
    "orders",
    "SELECT id, event_id, user_id, reservation_id, status, items, total, payment_ref,"
    " created_at FROM orders ORDER BY seq",
    order_deliver};
static const load_step_t LOAD_IDEMPOTENCY = {
    "idempotency",
    "SELECT key, hash, status, body, created_at FROM idempotency WHERE created_at >= ?1"
    " ORDER BY created_at, key",
    idempotency_deliver};

static const load_step_t LOAD_REFUNDS = {
    "refunds",
    "SELECT id, payment_intent_id, reservation_id, amount, reason, status, created_at,"
    " (SELECT event_id FROM holds WHERE holds.id = refunds.reservation_id), order_id"
    " FROM refunds ORDER BY seq",
    refund_deliver};
static const load_step_t LOAD_DELIVERIES = {
    "deliveries",
    "SELECT payment_intent_id, type, result, reason, late, order_id, refund_id, received_at"
    " FROM deliveries WHERE received_at >= ?1 ORDER BY seq",
    delivery_deliver};

static const load_step_t LOAD_TICKETS = {
    "tickets",
    "SELECT id, event_id, user_id, line_seq, status, COALESCE(admitted_at, 0) FROM tickets"
    " ORDER BY seq",
    ticket_deliver};

/* One ticket the core has forgotten (hf_store_read_ticket). */
static const load_step_t READ_TICKET = {
    "tickets",
    "SELECT id, event_id, user_id, line_seq, status, COALESCE(admitted_at, 0) FROM tickets"
    " WHERE id = ?1",
    ticket_deliver};

/* Every row of the step's table to the loader, in order; the first column names a row in an
 * error message. */
static int load_table(hf_sqlite_store_t *store, const load_step_t *step, load_context_t *context) {
    sqlite3_stmt *statement = NULL;
    int result = -1;
    if (sqlite3_prepare_v2(store->database, step->sql, -1, &statement, NULL) != SQLITE_OK) {
        hf_store_error_write(context->error, context->error_size, "store: reading %s failed: %s",
                             step->table, sqlite3_errmsg(store->database));
        goto fail;
    }
    if (sqlite3_bind_parameter_count(statement) > 0)
        sqlite3_bind_int64(statement, 1, step == &LOAD_DELIVERIES
                                             ? context->loader->deliveries_since_ms
                                             : context->loader->keep_since_ms);
    int rc;
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
        result = step->deliver(statement, context);
        if (result == ROW_UNREADABLE) goto fail;
        if (result != 0) {
            const char *subject = column_text(statement, 0);
            hf_store_error_write(context->error, context->error_size,
                                 "store: loading %s stopped at %s (%d)", step->table,
                                 subject != NULL ? subject : "a row", result);
            goto fail;
        }
        result = -1;
    }
    if (rc != SQLITE_DONE) {
        hf_store_error_write(context->error, context->error_size, "store: reading %s failed: %s",
                             step->table, sqlite3_errmsg(store->database));
        goto fail;
    }
    result = 0;
fail:
    sqlite3_finalize(statement);
    return result == ROW_UNREADABLE ? -1 : result;
}

static int finished_holds_count(hf_sqlite_store_t *store, const hf_store_loader_t *loader,
                                char *error, size_t error_size) {
    char word[32];
    if (hf_sqlite_word_query(store->database,
                   "SELECT count(*) FROM holds WHERE status IN ('released', 'expired')", word,
                   sizeof word) != SQLITE_OK) {
        hf_store_error_write(error, error_size, "store: counting finished holds failed: %s",
                             sqlite3_errmsg(store->database));
        return -1;
    }
    return loader->finished_holds(loader->context, strtoull(word, NULL, 10));
}

int hf_sqlite_tables_load(void *instance, const hf_store_loader_t *loader, char *error,
                          size_t error_size) {
    hf_sqlite_store_t *store = instance;
    /* One read transaction: the tables are seen at the same instant. */
    if (sqlite3_exec(store->database, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        hf_store_error_write(error, error_size, "store: cannot begin reading: %s",
                             sqlite3_errmsg(store->database));
        return -1;
    }
    hf_rows_items_t *items = calloc(1, sizeof *items);
    if (items == NULL) abort();
    load_context_t context = {loader, items, error, error_size};
    int result = loader->event ? load_table(store, &LOAD_EVENTS, &context) : 0;
    if (result == 0 && loader->finished_holds != NULL)
        result = finished_holds_count(store, loader, error, error_size);
    if (result == 0 && loader->hold) result = load_table(store, &LOAD_HOLDS, &context);
    if (result == 0 && loader->order) result = load_table(store, &LOAD_ORDERS, &context);
    if (result == 0 && loader->idempotency)
        result = load_table(store, &LOAD_IDEMPOTENCY, &context);
    if (result == 0 && loader->refund) result = load_table(store, &LOAD_REFUNDS, &context);
    if (result == 0 && loader->delivery) result = load_table(store, &LOAD_DELIVERIES, &context);
    if (result == 0 && loader->ticket) result = load_table(store, &LOAD_TICKETS, &context);
    if (result == 0) result = hf_sqlite_dispatch_load(store, loader, error, error_size);
    sqlite3_exec(store->database, "COMMIT", NULL, NULL, NULL);
    hf_rows_items_free(items);
    free(items);
    return result;
}

/* ---- Reading one forgotten hold (engine thread) ---- */

int hf_sqlite_reader_open(hf_sqlite_store_t *store, char *error, size_t error_size) {
    if (store->read_hold != NULL) return 0;
    if (store->read_items == NULL) store->read_items = calloc(1, sizeof *store->read_items);
    if (store->read_items == NULL) abort();
    const char *path = sqlite3_db_filename(store->database, "main");
    int rc = sqlite3_open_v2(path != NULL ? path : "", &store->reader,
                             SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(store->reader, HF_SQLITE_BUSY_TIMEOUT_MS);
        rc = sqlite3_prepare_v3(store->reader, READ_HOLD.sql, -1, SQLITE_PREPARE_PERSISTENT,
                                &store->read_hold, NULL);
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v3(store->reader, LIST_HOLDS.sql, -1, SQLITE_PREPARE_PERSISTENT,
                                &store->list_holds, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v3(store->reader, FIND_HOLD_SEQ, -1, SQLITE_PREPARE_PERSISTENT,
                                &store->find_hold_seq, NULL);
    if (rc == SQLITE_OK) return 0;
    hf_store_error_write(error, error_size, "store: cannot open a reader of %s: %s",
                         path != NULL ? path : "?",
                         store->reader != NULL ? sqlite3_errmsg(store->reader)
                                               : sqlite3_errstr(rc));
    sqlite3_finalize(store->read_hold);
    sqlite3_finalize(store->list_holds);
    sqlite3_finalize(store->find_hold_seq);
    store->read_hold = store->list_holds = store->find_hold_seq = NULL;
    sqlite3_close(store->reader);
    store->reader = NULL;
    return -1;
}

int hf_sqlite_hold_read(void *instance, const char *hold_id, const hf_store_loader_t *loader,
                        bool *found, char *error, size_t error_size) {
    hf_sqlite_store_t *store = instance;
    *found = false;
    if (hf_sqlite_reader_open(store, error, error_size) != 0) return -1;
    sqlite3_stmt *statement = store->read_hold;
    sqlite3_bind_text(statement, 1, hold_id, -1, SQLITE_STATIC);
    int result = 0;
    int rc = sqlite3_step(statement);
    if (rc == SQLITE_ROW) {
        *found = true;
        load_context_t context = {loader, store->read_items, error, error_size};
        result = READ_HOLD.deliver(statement, &context);
        if (result == ROW_UNREADABLE) {
            result = -1;
        } else if (result != 0) {
            hf_store_error_write(error, error_size,
                                 "store: hold %s could not be taken back (%d)", hold_id, result);
        }
    } else if (rc != SQLITE_DONE) {
        hf_store_error_write(error, error_size, "store: reading hold %s failed: %s", hold_id,
                             sqlite3_errmsg(store->reader));
        result = -1;
    }
    /* Reset at once: a statement left mid-read would keep its read transaction open and
     * stop checkpoints from recycling the log. */
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    return result;
}

/* ---- Reading one forgotten ticket (engine thread) ---- */

/* Prepared at each call: a forgotten ticket is read back rarely (a poll of a ticket that
 * finished long ago), and the reader's persistent statements stay those of holds. */
int hf_sqlite_ticket_read(void *instance, const char *ticket_id, const hf_store_loader_t *loader,
                          bool *found, char *error, size_t error_size) {
    hf_sqlite_store_t *store = instance;
    *found = false;
    if (hf_sqlite_reader_open(store, error, error_size) != 0) return -1;
    sqlite3_stmt *statement = NULL;
    int result = -1;
    int rc = sqlite3_prepare_v2(store->reader, READ_TICKET.sql, -1, &statement, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(statement, 1, ticket_id, -1, SQLITE_STATIC);
        rc = sqlite3_step(statement);
    }
    if (rc == SQLITE_ROW) {
        *found = true;
        load_context_t context = {loader, NULL, error, error_size};
        result = READ_TICKET.deliver(statement, &context);
        if (result != 0 && result != ROW_UNREADABLE)
            hf_store_error_write(error, error_size, "store: ticket %s could not be taken back (%d)",
                                 ticket_id, result);
        if (result != 0) result = -1;
    } else if (rc == SQLITE_DONE) {
        result = 0;
    } else {
        hf_store_error_write(error, error_size, "store: reading ticket %s failed: %s", ticket_id,
                             sqlite3_errmsg(store->reader));
    }
    sqlite3_finalize(statement);
    return result;
}

/* ---- Listing an event's holds (engine thread) ---- */

/* The words of the statuses in mask as LIST_HOLDS matches them: ",held,expired,", or "". */
static void status_words(unsigned mask, char *out, size_t out_size) {
    size_t length = 0;
    out[0] = '\0';
    for (int i = 0; mask != 0 && i < hf_sqlite_hold_status.count; i++) {
        if (!(mask & (1u << i))) continue;
        length += (size_t)snprintf(out + length, out_size - length, "%s%s,", length ? "" : ",",
                                   hf_sqlite_hold_status.words[i]);
    }
}

/* The seq a listing resumes after: 0 from the first; false when after_id is no hold of the
 * event (or on an error, then written). */
static bool resume_seq(hf_sqlite_store_t *store, const hf_store_hold_query_t *query,
                       int64_t *seq, int *result, char *error, size_t error_size) {
    *seq = 0;
    *result = 0;
    if (query->after_id == NULL) return true;
    sqlite3_stmt *statement = store->find_hold_seq;
    sqlite3_bind_text(statement, 1, query->after_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(statement, 2, query->event_id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(statement);
    if (rc == SQLITE_ROW) *seq = sqlite3_column_int64(statement, 0);
    else if (rc != SQLITE_DONE) {
        hf_store_error_write(error, error_size, "store: reading hold %s failed: %s",
                             query->after_id, sqlite3_errmsg(store->reader));
        *result = -1;
    }
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    return rc == SQLITE_ROW;
}

int hf_sqlite_holds_list(void *instance, const hf_store_hold_query_t *query,
                         const hf_store_loader_t *loader, bool *after_found, char *error,
                         size_t error_size) {
    hf_sqlite_store_t *store = instance;
    if (hf_sqlite_reader_open(store, error, error_size) != 0) return -1;
    int64_t seq;
    int result;
    *after_found = resume_seq(store, query, &seq, &result, error, error_size);
    if (!*after_found) return result;
    char words[64];
    status_words(query->statuses, words, sizeof words);
    sqlite3_stmt *statement = store->list_holds;
    sqlite3_bind_text(statement, 1, query->event_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(statement, 2, seq);
    sqlite3_bind_text(statement, 3, words, -1, SQLITE_STATIC);
    load_context_t context = {loader, store->read_items, error, error_size};
    int rc = SQLITE_DONE;
    while (result == 0 && (rc = sqlite3_step(statement)) == SQLITE_ROW)
        result = LIST_HOLDS.deliver(statement, &context);
    if (result == HF_STORE_LIST_STOP) {
        result = 0;
    } else if (result == ROW_UNREADABLE) {
        result = -1;
    } else if (result == 0 && rc != SQLITE_DONE) {
        hf_store_error_write(error, error_size, "store: listing the holds of %s failed: %s",
                             query->event_id, sqlite3_errmsg(store->reader));
        result = -1;
    }
    /* Reset at once, as hf_sqlite_hold_read does: an open read would hold back checkpoints. */
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    return result;
}
