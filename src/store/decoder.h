/* The one reader of stored rows: each kind of row (an event, a hold, an order, ...) is decoded
 * here, once, into the loader's structs (store.h), whatever backend read it. A backend keeps
 * its SQL, its connections and its threads; it hands each row over through a reader of two
 * functions (a column's text, a column's integer) that it implements once over its own result
 * (SQLite a statement, PostgreSQL a result and a row number), and its SELECTs give the columns
 * in the order below (the column enums; the column lists both backends' SELECTs use, where
 * their dialects agree). Status and other words are read through core/names.c's parse
 * functions (and those beside each domain's names), never spelled here.
 *
 * A load reads the kinds in the loader's order (store.h): hf_decoder_load runs it over a
 * backend's function that reads one kind's table. A damaged row (an unknown word, a hash of
 * the wrong size, a definition naming another event, JSON that does not parse) is refused
 * with a sentence that names its table and its id, before anything of it reaches the loader.
 *
 * Ownership: every string handed to a loader's callback is borrowed from the reader's row for
 * the length of the call. Threads: whichever thread reads the rows (the caller's). */
#ifndef HF_STORE_DECODER_H
#define HF_STORE_DECODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/rows.h"
#include "store/store.h"

/* One stored row, as a backend reads it. text: the column's text, NULL for SQL NULL, its
 * length in bytes in *length when length is not NULL; borrowed until the reader moves to
 * another row, except a real number's (a column of doubles), which is text of 17 significant
 * digits that may last only until the next call (the decoder parses it at once). integer: the
 * column's integer, 0 for SQL NULL. */
typedef struct hf_row_reader {
    const char *(*text)(void *row, int column, size_t *length);
    int64_t (*integer)(void *row, int column);
    void *row;
} hf_row_reader_t;

/* The kinds of stored rows, in the order a load hands them to the loader (store.h). The count
 * of finished holds is one row of one column, read before the holds. */
typedef enum hf_row_kind {
    HF_ROW_EVENT,
    HF_ROW_ALLOCATION, /* after its event, before the holds and orders it lends to */
    HF_ROW_CALENDAR,
    HF_ROW_CALENDAR_RESOURCE,
    HF_ROW_FINISHED_HOLDS,
    HF_ROW_HOLD,
    HF_ROW_ORDER,
    HF_ROW_IDEMPOTENCY,
    HF_ROW_REFUND,
    HF_ROW_JOB,
    HF_ROW_JOB_OFFER,
    HF_ROW_DELIVERY,
    HF_ROW_TICKET,
    HF_ROW_WAITLIST,
    HF_ROW_ORDER_LOCK, /* after the orders it locks */
    HF_ROW_DRIVER,
    HF_ROW_RIDE,
    HF_ROW_KIND_COUNT
} hf_row_kind_t;

/* ---- The columns of each kind, in the order every backend's SELECT gives them ---- */

#define HF_EVENT_COLUMNS "id, config, created_at, sales_open"
enum {
    HF_COLUMN_EVENT_ID,
    HF_COLUMN_EVENT_CONFIG,
    HF_COLUMN_EVENT_CREATED_AT,
    HF_COLUMN_EVENT_SALES_OPEN,
    HF_COLUMN_EVENT_COUNT,
};

/* An allocation (schema version 12): items is rows.h's JSON of its seats and pools. */
#define HF_ALLOCATION_COLUMNS "event_id, id, items, created_at"
enum {
    HF_COLUMN_ALLOCATION_EVENT_ID,
    HF_COLUMN_ALLOCATION_ID,
    HF_COLUMN_ALLOCATION_ITEMS,
    HF_COLUMN_ALLOCATION_CREATED_AT,
    HF_COLUMN_ALLOCATION_COUNT,
};

#define HF_CALENDAR_COLUMNS "id, definition, created_at, sales_open"
enum {
    HF_COLUMN_CALENDAR_ID,
    HF_COLUMN_CALENDAR_DEFINITION,
    HF_COLUMN_CALENDAR_CREATED_AT,
    HF_COLUMN_CALENDAR_SALES_OPEN,
    HF_COLUMN_CALENDAR_COUNT,
};

/* One resource of a calendar (calendar_resources, in the calendar's order of resources). */
#define HF_CALENDAR_RESOURCE_COLUMNS "calendar_resources.calendar_id, calendar_resources.definition"
enum {
    HF_COLUMN_CALENDAR_RESOURCE_CALENDAR_ID,
    HF_COLUMN_CALENDAR_RESOURCE_DEFINITION,
    HF_COLUMN_CALENDAR_RESOURCE_COUNT,
};

#define HF_FINISHED_HOLDS_COLUMNS "count(*)"
enum { HF_COLUMN_FINISHED_HOLDS_NUMBER, HF_COLUMN_FINISHED_HOLDS_COUNT };

/* seq: where a listing resumes. */
#define HF_HOLD_COLUMNS \
    "id, event_id, user_id, status, items, total, created_at, expires_at, seq, exchange_for"
enum {
    HF_COLUMN_HOLD_ID,
    HF_COLUMN_HOLD_EVENT_ID,
    HF_COLUMN_HOLD_USER_ID,
    HF_COLUMN_HOLD_STATUS,
    HF_COLUMN_HOLD_ITEMS,
    HF_COLUMN_HOLD_TOTAL,
    HF_COLUMN_HOLD_CREATED_AT,
    HF_COLUMN_HOLD_EXPIRES_AT,
    HF_COLUMN_HOLD_SEQ,
    HF_COLUMN_HOLD_EXCHANGE_FOR, /* an exchange hold's old order (schema version 10) */
    HF_COLUMN_HOLD_COUNT,
};

#define HF_ORDER_COLUMNS \
    "id, event_id, user_id, reservation_id, status, items, total, payment_ref, created_at," \
    " replaces, replaced_by"
enum {
    HF_COLUMN_ORDER_ID,
    HF_COLUMN_ORDER_EVENT_ID,
    HF_COLUMN_ORDER_USER_ID,
    HF_COLUMN_ORDER_RESERVATION_ID,
    HF_COLUMN_ORDER_STATUS,
    HF_COLUMN_ORDER_ITEMS,
    HF_COLUMN_ORDER_TOTAL,
    HF_COLUMN_ORDER_PAYMENT_REF,
    HF_COLUMN_ORDER_CREATED_AT,
    HF_COLUMN_ORDER_REPLACES, /* exchanges (schema version 10) */
    HF_COLUMN_ORDER_REPLACED_BY,
    HF_COLUMN_ORDER_COUNT,
};

/* The hash travels as hexadecimal text (either case): HASH_HEX is the backend's expression
 * of it (SQLite's hex(hash), PostgreSQL's encode(hash, 'hex')). */
#define HF_IDEMPOTENCY_COLUMNS(HASH_HEX) "key, " HASH_HEX ", status, body, created_at"
enum {
    HF_COLUMN_IDEMPOTENCY_KEY,
    HF_COLUMN_IDEMPOTENCY_HASH,
    HF_COLUMN_IDEMPOTENCY_STATUS,
    HF_COLUMN_IDEMPOTENCY_BODY,
    HF_COLUMN_IDEMPOTENCY_CREATED_AT,
    HF_COLUMN_IDEMPOTENCY_COUNT,
};

/* A refund's event is its hold's (NULL when none). */
#define HF_REFUND_COLUMNS \
    "id, payment_intent_id, reservation_id, amount, reason, status, created_at," \
    " (SELECT event_id FROM holds WHERE holds.id = refunds.reservation_id), order_id"
enum {
    HF_COLUMN_REFUND_ID,
    HF_COLUMN_REFUND_PAYMENT_INTENT_ID,
    HF_COLUMN_REFUND_RESERVATION_ID,
    HF_COLUMN_REFUND_AMOUNT,
    HF_COLUMN_REFUND_REASON,
    HF_COLUMN_REFUND_STATUS,
    HF_COLUMN_REFUND_CREATED_AT,
    HF_COLUMN_REFUND_EVENT_ID,
    HF_COLUMN_REFUND_ORDER_ID,
    HF_COLUMN_REFUND_COUNT,
};

/* Cancel jobs (schema version 11), after the orders and refunds they went through. */
#define HF_JOB_COLUMNS \
    "id, event_id, rebook_to, offer_ttl_ms, orders, cursor, offered, accepted, refunded," \
    " status, created_at"
enum {
    HF_COLUMN_JOB_ID,
    HF_COLUMN_JOB_EVENT_ID,
    HF_COLUMN_JOB_REBOOK_TO,
    HF_COLUMN_JOB_OFFER_TTL_MS,
    HF_COLUMN_JOB_ORDERS,
    HF_COLUMN_JOB_CURSOR,
    HF_COLUMN_JOB_OFFERED,
    HF_COLUMN_JOB_ACCEPTED,
    HF_COLUMN_JOB_REFUNDED,
    HF_COLUMN_JOB_STATUS,
    HF_COLUMN_JOB_CREATED_AT,
    HF_COLUMN_JOB_COUNT,
};

/* What a job did with each order, in the order it went (seq). */
#define HF_JOB_OFFER_COLUMNS \
    "job_offers.job_id, job_offers.order_id, job_offers.reservation_id, job_offers.status," \
    " job_offers.expires_at"
enum {
    HF_COLUMN_JOB_OFFER_JOB_ID,
    HF_COLUMN_JOB_OFFER_ORDER_ID,
    HF_COLUMN_JOB_OFFER_RESERVATION_ID,
    HF_COLUMN_JOB_OFFER_STATUS,
    HF_COLUMN_JOB_OFFER_EXPIRES_AT,
    HF_COLUMN_JOB_OFFER_COUNT,
};

#define HF_DELIVERY_COLUMNS \
    "payment_intent_id, type, result, reason, late, order_id, refund_id, received_at"
enum {
    HF_COLUMN_DELIVERY_PAYMENT_INTENT_ID,
    HF_COLUMN_DELIVERY_TYPE,
    HF_COLUMN_DELIVERY_RESULT,
    HF_COLUMN_DELIVERY_REASON,
    HF_COLUMN_DELIVERY_LATE,
    HF_COLUMN_DELIVERY_ORDER_ID,
    HF_COLUMN_DELIVERY_REFUND_ID,
    HF_COLUMN_DELIVERY_RECEIVED_AT,
    HF_COLUMN_DELIVERY_COUNT,
};

#define HF_TICKET_COLUMNS \
    "id, event_id, user_id, line_seq, status, COALESCE(admitted_at, 0), created_at"
enum {
    HF_COLUMN_TICKET_ID,
    HF_COLUMN_TICKET_EVENT_ID,
    HF_COLUMN_TICKET_USER_ID,
    HF_COLUMN_TICKET_LINE_SEQ,
    HF_COLUMN_TICKET_STATUS,
    HF_COLUMN_TICKET_ADMITTED_AT,
    HF_COLUMN_TICKET_CREATED_AT,
    HF_COLUMN_TICKET_COUNT,
};

#define HF_WAITLIST_COLUMNS \
    "id, event_id, user_id, section, pool, quantity, sequence, status, hold_id, joined_at," \
    " updated_at"
enum {
    HF_COLUMN_WAITLIST_ID,
    HF_COLUMN_WAITLIST_EVENT_ID,
    HF_COLUMN_WAITLIST_USER_ID,
    HF_COLUMN_WAITLIST_SECTION,
    HF_COLUMN_WAITLIST_POOL,
    HF_COLUMN_WAITLIST_QUANTITY,
    HF_COLUMN_WAITLIST_SEQUENCE,
    HF_COLUMN_WAITLIST_STATUS,
    HF_COLUMN_WAITLIST_HOLD_ID,
    HF_COLUMN_WAITLIST_JOINED_AT,
    HF_COLUMN_WAITLIST_UPDATED_AT,
    HF_COLUMN_WAITLIST_COUNT,
};

#define HF_ORDER_LOCK_COLUMNS "order_id, event_id, hold_id, hold_unit, locked_at"
enum {
    HF_COLUMN_ORDER_LOCK_ORDER_ID,
    HF_COLUMN_ORDER_LOCK_EVENT_ID,
    HF_COLUMN_ORDER_LOCK_HOLD_ID,
    HF_COLUMN_ORDER_LOCK_HOLD_UNIT,
    HF_COLUMN_ORDER_LOCK_LOCKED_AT,
    HF_COLUMN_ORDER_LOCK_COUNT,
};

#define HF_DRIVER_COLUMNS "fleet_id, driver_id, lat, lng, rating, available"
enum {
    HF_COLUMN_DRIVER_FLEET_ID,
    HF_COLUMN_DRIVER_DRIVER_ID,
    HF_COLUMN_DRIVER_LAT,
    HF_COLUMN_DRIVER_LNG,
    HF_COLUMN_DRIVER_RATING,
    HF_COLUMN_DRIVER_AVAILABLE,
    HF_COLUMN_DRIVER_COUNT,
};

/* seq: where a listing resumes. */
#define HF_RIDE_COLUMNS \
    "id, fleet_id, rider_id, lat, lng, radius_m, offer_ttl_ms, status, created_at," \
    " offer_driver_id, offer_distance_m, offer_expires_at, driver_id, declined, lapsed, seq"
enum {
    HF_COLUMN_RIDE_ID,
    HF_COLUMN_RIDE_FLEET_ID,
    HF_COLUMN_RIDE_RIDER_ID,
    HF_COLUMN_RIDE_LAT,
    HF_COLUMN_RIDE_LNG,
    HF_COLUMN_RIDE_RADIUS_M,
    HF_COLUMN_RIDE_OFFER_TTL_MS,
    HF_COLUMN_RIDE_STATUS,
    HF_COLUMN_RIDE_CREATED_AT,
    HF_COLUMN_RIDE_OFFER_DRIVER_ID,
    HF_COLUMN_RIDE_OFFER_DISTANCE_M,
    HF_COLUMN_RIDE_OFFER_EXPIRES_AT,
    HF_COLUMN_RIDE_DRIVER_ID,
    HF_COLUMN_RIDE_DECLINED,
    HF_COLUMN_RIDE_LAPSED,
    HF_COLUMN_RIDE_SEQ,
    HF_COLUMN_RIDE_COUNT,
};

/* A page of an event's history joined with its subject (store.h's hf_stored_history_t): the
 * backends' queries differ (the JSON functions do), their columns do not. has_subject is an
 * integer, 1 when the entry's data names a reservation_id or an order_id. */
enum {
    HF_COLUMN_HISTORY_SEQ,
    HF_COLUMN_HISTORY_TYPE,
    HF_COLUMN_HISTORY_AT,
    HF_COLUMN_HISTORY_DATA,
    HF_COLUMN_HISTORY_HAS_SUBJECT,
    HF_COLUMN_HISTORY_RESERVATION_ID,
    HF_COLUMN_HISTORY_USER_ID,
    HF_COLUMN_HISTORY_ITEMS,
    HF_COLUMN_HISTORY_UNIT,
    HF_COLUMN_HISTORY_NOTIFY_STATUS,
    HF_COLUMN_HISTORY_NOTIFY_ATTEMPTS,
    HF_COLUMN_HISTORY_NOTIFY_LAST_STATUS,
    HF_COLUMN_HISTORY_NOTIFY_LAST_ERROR,
    HF_COLUMN_HISTORY_NOTIFY_NEXT_AT,
    HF_COLUMN_HISTORY_COUNT,
};

/* ---- Decoding ---- */

/* What decoding needs while it reads rows: the loader, the parsed lines of the current hold or
 * order (hf_decoder_load makes them; a backend's own read keeps one, about 24 KiB) and where
 * a damaged row's sentence goes. */
typedef struct hf_decoder {
    const hf_store_loader_t *loader;
    hf_rows_items_t *items;
    char *error;
    size_t error_size;
} hf_decoder_t;

/* What hf_decoder_row answers for a damaged row, after writing its sentence: no callback's
 * value. */
#define HF_DECODER_UNREADABLE INT32_MIN

/* The table a kind is read from ("holds"), to name it in a sentence. */
const char *hf_decoder_table(hf_row_kind_t kind);
/* True when the loader takes the kind (its callback is set). */
bool hf_decoder_wants(const hf_store_loader_t *loader, hf_row_kind_t kind);
/* The time a kind is read from (its rows at or after it), or false for a kind read whole:
 * idempotency keys from loader->keep_since_ms, deliveries from deliveries_since_ms. */
bool hf_decoder_since(const hf_store_loader_t *loader, hf_row_kind_t kind, int64_t *since_ms);

/* Decodes the row as kind and hands it to the loader's callback: returns the callback's
 * value, or HF_DECODER_UNREADABLE with a sentence in decoder->error. The lines of a hold or
 * an order are freed once its callback returns. */
int hf_decoder_row(hf_decoder_t *decoder, hf_row_kind_t kind, const hf_row_reader_t *row);
/* hf_decoder_row as each use of it answers: 0 to go on; -1 for a damaged row (its sentence
 * written); or the callback's non-zero value, with a sentence naming the row in
 * decoder->error: "loading TABLE stopped at ID (VALUE)" for a load, "TABLE row ID could not
 * be taken back" for one forgotten row read by its id, and "listing TABLE stopped at ID" for
 * a listing, where HF_STORE_LIST_STOP is passed back with no sentence (the listing's end). */
int hf_decoder_load_row(hf_decoder_t *decoder, hf_row_kind_t kind, const hf_row_reader_t *row);
int hf_decoder_read_row(hf_decoder_t *decoder, hf_row_kind_t kind, const hf_row_reader_t *row);
int hf_decoder_list_row(hf_decoder_t *decoder, hf_row_kind_t kind, const hf_row_reader_t *row);

/* A backend's reading of one kind's table for a load (its SELECT, each row through
 * hf_decoder_load_row): 0, or the first non-zero value with a sentence in decoder->error. */
typedef int (*hf_decoder_table_fn)(void *backend, hf_row_kind_t kind, hf_decoder_t *decoder);
/* A whole load: every kind the loader takes, in its order, each through table. Returns 0, or
 * the first non-zero value with a sentence in error. */
int hf_decoder_load(hf_decoder_table_fn table, void *backend, const hf_store_loader_t *loader,
                    char *error, size_t error_size);

/* Decodes a page's row of the history (the columns above) and hands it to entry: returns
 * entry's value, or -1 with a sentence in error for a damaged row (no type, data that is no
 * JSON object: its data is spliced into answers as it is). */
int hf_decoder_history(const hf_row_reader_t *row, const char *event_id, hf_store_history_fn entry,
                       void *context, char *error, size_t error_size);

#endif
