/* The one reader of stored rows (store/decoder.h): each kind's columns into the loader's
 * structs, through a backend's reader. */
#include "store/decoder.h"

#include "core/jobs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/dispatch/dispatch.h"
#include "core/queue.h"
#include "store/backend.h"

/* ---- Columns ---- */

static const char *text(const hf_row_reader_t *row, int column) {
    return row->text(row->row, column, NULL);
}

static int64_t integer(const hf_row_reader_t *row, int column) {
    return row->integer(row->row, column);
}

/* A real number's column, read back exactly: its text has 17 significant digits (or is
 * PostgreSQL's shortest exact one). NULL reads as 0. */
static double real(const hf_row_reader_t *row, int column) {
    const char *value = text(row, column);
    return value != NULL ? strtod(value, NULL) : 0.0;
}

static int unreadable(hf_decoder_t *decoder, hf_row_kind_t kind, const char *id, const char *why) {
    hf_store_error_write(decoder->error, decoder->error_size, "store: %s row %s: %s",
                         hf_decoder_table(kind), id != NULL ? id : "(null)", why);
    return HF_DECODER_UNREADABLE;
}

/* A word column (a status, a reason, ...: what names it) read back through its parse; false
 * after writing the sentence. */
static bool word_read(hf_decoder_t *decoder, const hf_row_reader_t *row, int column,
                      bool (*parse)(const char *, uint8_t *), uint8_t *out, const char *what,
                      hf_row_kind_t kind, const char *id) {
    const char *word = text(row, column);
    if (parse(word, out)) return true;
    char why[96];
    snprintf(why, sizeof why, "the unknown %s \"%.40s\"", what, word != NULL ? word : "NULL");
    unreadable(decoder, kind, id, why);
    return false;
}

/* The lines of a hold or an order (its JSON column) parsed into decoder->items, which
 * request then points to; freed by the caller once the row's callback returns (or the row is
 * refused): a forgotten
 * hold is read back in the middle of a request, while jansson allocates from the request's
 * arena (engine/arena.h), which is taken back at the request's end. */
static bool items_read(hf_decoder_t *decoder, const hf_row_reader_t *row, int column,
                       hf_hold_request_t *request, hf_row_kind_t kind, const char *id) {
    char why[160];
    if (hf_rows_items_read(text(row, column), decoder->items, request, why, sizeof why) == 0)
        return true;
    unreadable(decoder, kind, id, why);
    return false;
}

/* ---- One function per kind ---- */

static int event_decode(hf_decoder_t *decoder, const hf_row_reader_t *row) {
    const char *id = text(row, HF_COLUMN_EVENT_ID);
    hf_event_definition_t definition;
    char why[160];
    int result = 0;
    if (hf_rows_definition_read(text(row, HF_COLUMN_EVENT_CONFIG), &definition, why, sizeof why) !=
        0)
        result = unreadable(decoder, HF_ROW_EVENT, id, why);
    else if (id == NULL || strcmp(definition.id, id) != 0)
        result = unreadable(decoder, HF_ROW_EVENT, id, "its definition names another event");
    if (result == 0) {
        hf_stored_event_t event = {&definition, integer(row, HF_COLUMN_EVENT_CREATED_AT),
                                   integer(row, HF_COLUMN_EVENT_SALES_OPEN) != 0};
        result = decoder->loader->event(decoder->loader->context, &event);
    }
    hf_rows_definition_free(&definition);
    return result;
}

static int allocation_decode(hf_decoder_t *decoder, const hf_row_reader_t *row) {
    const char *id = text(row, HF_COLUMN_ALLOCATION_ID);
    hf_rows_allocation_t *parsed = calloc(1, sizeof *parsed);
    if (parsed == NULL) abort();
    hf_stored_allocation_t allocation = {
        .event_id = text(row, HF_COLUMN_ALLOCATION_EVENT_ID),
        .allocation_id = id,
        .created_at_ms = integer(row, HF_COLUMN_ALLOCATION_CREATED_AT)};
    char why[160];
    int result;
    if (hf_rows_allocation_read(text(row, HF_COLUMN_ALLOCATION_ITEMS), parsed, &allocation, why,
                                sizeof why) != 0)
        result = unreadable(decoder, HF_ROW_ALLOCATION, id, why);
    else result = decoder->loader->allocation(decoder->loader->context, &allocation);
    hf_rows_allocation_free(parsed);
    free(parsed);
    return result;
}

static int calendar_decode(hf_decoder_t *decoder, const hf_row_reader_t *row) {
    const char *id = text(row, HF_COLUMN_CALENDAR_ID);
    hf_calendar_definition_t definition;
    char why[160];
    if (hf_rows_calendar_read(text(row, HF_COLUMN_CALENDAR_DEFINITION), &definition, why,
                              sizeof why) != 0)
        return unreadable(decoder, HF_ROW_CALENDAR, id, why);
    if (id == NULL || strcmp(definition.id, id) != 0)
        return unreadable(decoder, HF_ROW_CALENDAR, id, "its definition names another calendar");
    hf_stored_calendar_t calendar = {&definition, integer(row, HF_COLUMN_CALENDAR_CREATED_AT),
                                     integer(row, HF_COLUMN_CALENDAR_SALES_OPEN) != 0};
    return decoder->loader->calendar(decoder->loader->context, &calendar);
}

static int calendar_resource_decode(hf_decoder_t *decoder, const hf_row_reader_t *row) {
    const char *calendar_id = text(row, HF_COLUMN_CALENDAR_RESOURCE_CALENDAR_ID);
    hf_resource_definition_t resource;
    char why[160];
    if (hf_rows_resource_read(text(row, HF_COLUMN_CALENDAR_RESOURCE_DEFINITION), &resource, why,
                              sizeof why) != 0)
        return unreadable(decoder, HF_ROW_CALENDAR_RESOURCE, calendar_id, why);
    return decoder->loader->calendar_resource(decoder->loader->context, calendar_id, &resource);
}

static int finished_holds_decode(hf_decoder_t *decoder, const hf_row_reader_t *row) {
    int64_t count = integer(row, HF_COLUMN_FINISHED_HOLDS_NUMBER);
    return decoder->loader->finished_holds(decoder->loader->context, (uint64_t)count);
}

/* A calendar's hold (its items are uses): to calendar_hold, or skipped by a loader without. */
static int calendar_hold_decode(hf_decoder_t *decoder, const hf_row_reader_t *row) {
    hf_stored_calendar_hold_t hold = {
        .request = {.hold_id = text(row, HF_COLUMN_HOLD_ID),
                    .calendar_id = text(row, HF_COLUMN_HOLD_EVENT_ID),
                    .user_id = text(row, HF_COLUMN_HOLD_USER_ID),
                    .ttl_ms = -1,
                    .exchange_for = text(row, HF_COLUMN_HOLD_EXCHANGE_FOR)},
        .total = integer(row, HF_COLUMN_HOLD_TOTAL),
        .created_at_ms = integer(row, HF_COLUMN_HOLD_CREATED_AT),
        .expires_at_ms = integer(row, HF_COLUMN_HOLD_EXPIRES_AT)};
    const char *id = hold.request.hold_id;
    if (!decoder->loader->calendar_hold) return 0;
    if (!word_read(decoder, row, HF_COLUMN_HOLD_STATUS, hf_hold_status_parse, &hold.status,
                   "status", HF_ROW_HOLD, id))
        return HF_DECODER_UNREADABLE;
    hf_rows_uses_t uses = {NULL, {{0}}};
    char why[160];
    int result;
    if (hf_rows_uses_read(text(row, HF_COLUMN_HOLD_ITEMS), &uses, &hold.request, why, sizeof why) !=
        0)
        result = unreadable(decoder, HF_ROW_HOLD, id, why);
    else result = decoder->loader->calendar_hold(decoder->loader->context, &hold);
    hf_rows_uses_free(&uses);
    return result;
}

static int calendar_order_decode(hf_decoder_t *decoder, const hf_row_reader_t *row) {
    hf_stored_calendar_order_t order = {
        .order_id = text(row, HF_COLUMN_ORDER_ID),
        .items = {.calendar_id = text(row, HF_COLUMN_ORDER_EVENT_ID),
                  .user_id = text(row, HF_COLUMN_ORDER_USER_ID),
                  .ttl_ms = -1},
        .hold_id = text(row, HF_COLUMN_ORDER_RESERVATION_ID),
        .total = integer(row, HF_COLUMN_ORDER_TOTAL),
        .payment_ref = text(row, HF_COLUMN_ORDER_PAYMENT_REF),
        .created_at_ms = integer(row, HF_COLUMN_ORDER_CREATED_AT),
        .replaces = text(row, HF_COLUMN_ORDER_REPLACES),
        .replaced_by = text(row, HF_COLUMN_ORDER_REPLACED_BY)};
    const char *id = order.order_id;
    if (!decoder->loader->calendar_order) return 0;
    if (!word_read(decoder, row, HF_COLUMN_ORDER_STATUS, hf_order_status_parse, &order.status,
                   "status", HF_ROW_ORDER, id))
        return HF_DECODER_UNREADABLE;
    hf_rows_uses_t uses = {NULL, {{0}}};
    char why[160];
    int result;
    if (hf_rows_uses_read(text(row, HF_COLUMN_ORDER_ITEMS), &uses, &order.items, why, sizeof why) !=
        0)
        result = unreadable(decoder, HF_ROW_ORDER, id, why);
    else result = decoder->loader->calendar_order(decoder->loader->context, &order);
    hf_rows_uses_free(&uses);
    return result;
}

static int hold_decode(hf_decoder_t *decoder, const hf_row_reader_t *row) {
    if (hf_rows_lines_are_uses(text(row, HF_COLUMN_HOLD_ITEMS)))
        return calendar_hold_decode(decoder, row);
    if (!decoder->loader->hold) return 0;
    hf_stored_hold_t hold = {.request = {.hold_id = text(row, HF_COLUMN_HOLD_ID),
                                         .event_id = text(row, HF_COLUMN_HOLD_EVENT_ID),
                                         .user_id = text(row, HF_COLUMN_HOLD_USER_ID),
                                         .ttl_ms = -1,
                                         .exchange_for = text(row, HF_COLUMN_HOLD_EXCHANGE_FOR)},
                             .total = integer(row, HF_COLUMN_HOLD_TOTAL),
                             .created_at_ms = integer(row, HF_COLUMN_HOLD_CREATED_AT),
                             .expires_at_ms = integer(row, HF_COLUMN_HOLD_EXPIRES_AT)};
    const char *id = hold.request.hold_id;
    int result = HF_DECODER_UNREADABLE;
    if (word_read(decoder, row, HF_COLUMN_HOLD_STATUS, hf_hold_status_parse, &hold.status, "status",
                  HF_ROW_HOLD, id) &&
        items_read(decoder, row, HF_COLUMN_HOLD_ITEMS, &hold.request, HF_ROW_HOLD, id))
        result = decoder->loader->hold(decoder->loader->context, &hold);
    hf_rows_items_free(decoder->items);
    return result;
}

static int order_decode(hf_decoder_t *decoder, const hf_row_reader_t *row) {
    if (hf_rows_lines_are_uses(text(row, HF_COLUMN_ORDER_ITEMS)))
        return calendar_order_decode(decoder, row);
    if (!decoder->loader->order) return 0;
    hf_stored_order_t order = {.order_id = text(row, HF_COLUMN_ORDER_ID),
                               .items = {.event_id = text(row, HF_COLUMN_ORDER_EVENT_ID),
                                         .user_id = text(row, HF_COLUMN_ORDER_USER_ID),
                                         .ttl_ms = -1},
                               .hold_id = text(row, HF_COLUMN_ORDER_RESERVATION_ID),
                               .total = integer(row, HF_COLUMN_ORDER_TOTAL),
                               .payment_ref = text(row, HF_COLUMN_ORDER_PAYMENT_REF),
                               .created_at_ms = integer(row, HF_COLUMN_ORDER_CREATED_AT),
                               .replaces = text(row, HF_COLUMN_ORDER_REPLACES),
                               .replaced_by = text(row, HF_COLUMN_ORDER_REPLACED_BY)};
    const char *id = order.order_id;
    int result = HF_DECODER_UNREADABLE;
    if (word_read(decoder, row, HF_COLUMN_ORDER_STATUS, hf_order_status_parse, &order.status,
                  "status", HF_ROW_ORDER, id) &&
        items_read(decoder, row, HF_COLUMN_ORDER_ITEMS, &order.items, HF_ROW_ORDER, id))
        result = decoder->loader->order(decoder->loader->context, &order);
    hf_rows_items_free(decoder->items);
    return result;
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* A request body's SHA-256, as an idempotency key keeps it. */
#define HASH_SIZE 32

/* The hexadecimal text of a hash into its HASH_SIZE bytes; false when it is not that many
 * bytes of hexadecimal. */
static bool hash_read(const char *hex, size_t length, uint8_t *hash) {
    if (hex == NULL || length != 2 * HASH_SIZE) return false;
    for (size_t i = 0; i < HASH_SIZE; i++) {
        int high = hex_digit(hex[2 * i]), low = hex_digit(hex[2 * i + 1]);
        if (high < 0 || low < 0) return false;
        hash[i] = (uint8_t)(high << 4 | low);
    }
    return true;
}

static int idempotency_decode(hf_decoder_t *decoder, const hf_row_reader_t *row) {
    uint8_t hash[HASH_SIZE];
    size_t length = 0;
    const char *hex = row->text(row->row, HF_COLUMN_IDEMPOTENCY_HASH, &length);
    hf_stored_idempotency_t answer = {
        .key = text(row, HF_COLUMN_IDEMPOTENCY_KEY),
        .hash = hash,
        .status = (int)integer(row, HF_COLUMN_IDEMPOTENCY_STATUS),
        .body = text(row, HF_COLUMN_IDEMPOTENCY_BODY),
        .created_at_ms = integer(row, HF_COLUMN_IDEMPOTENCY_CREATED_AT)};
    if (!hash_read(hex, length, hash)) {
        char why[64];
        snprintf(why, sizeof why, "a hash of %zu hexadecimal digits, not %d",
                 hex != NULL ? length : 0, 2 * HASH_SIZE);
        return unreadable(decoder, HF_ROW_IDEMPOTENCY, answer.key, why);
    }
    if (answer.key == NULL || answer.body == NULL)
        return unreadable(decoder, HF_ROW_IDEMPOTENCY, answer.key, "its key or body is missing");
    return decoder->loader->idempotency(decoder->loader->context, &answer);
}

static int refund_decode(hf_decoder_t *decoder, const hf_row_reader_t *row) {
    hf_stored_refund_t refund = {.refund_id = text(row, HF_COLUMN_REFUND_ID),
                                 .payment_intent_id = text(row, HF_COLUMN_REFUND_PAYMENT_INTENT_ID),
                                 .reservation_id = text(row, HF_COLUMN_REFUND_RESERVATION_ID),
                                 .amount = integer(row, HF_COLUMN_REFUND_AMOUNT),
                                 .created_at_ms = integer(row, HF_COLUMN_REFUND_CREATED_AT),
                                 .event_id = text(row, HF_COLUMN_REFUND_EVENT_ID),
                                 .order_id = text(row, HF_COLUMN_REFUND_ORDER_ID)};
    const char *id = refund.refund_id;
    if (!word_read(decoder, row, HF_COLUMN_REFUND_REASON, hf_refund_reason_parse, &refund.reason,
                   "reason", HF_ROW_REFUND, id) ||
        !word_read(decoder, row, HF_COLUMN_REFUND_STATUS, hf_refund_status_parse, &refund.status,
                   "status", HF_ROW_REFUND, id))
        return HF_DECODER_UNREADABLE;
    return decoder->loader->refund(decoder->loader->context, &refund);
}

static int order_lock_decode(hf_decoder_t *decoder, const hf_row_reader_t *row) {
    hf_stored_order_lock_t lock = {.order_id = text(row, HF_COLUMN_ORDER_LOCK_ORDER_ID),
                                   .event_id = text(row, HF_COLUMN_ORDER_LOCK_EVENT_ID),
                                   .hold_id = text(row, HF_COLUMN_ORDER_LOCK_HOLD_ID),
                                   .hold_unit = text(row, HF_COLUMN_ORDER_LOCK_HOLD_UNIT),
                                   .locked_at_ms = integer(row, HF_COLUMN_ORDER_LOCK_LOCKED_AT)};
    return decoder->loader->order_lock(decoder->loader->context, &lock);
}

static int job_decode(hf_decoder_t *decoder, const hf_row_reader_t *row) {
    hf_stored_job_t job = {.job_id = text(row, HF_COLUMN_JOB_ID),
                           .event_id = text(row, HF_COLUMN_JOB_EVENT_ID),
                           .rebook_to = text(row, HF_COLUMN_JOB_REBOOK_TO),
                           .offer_ttl_ms = integer(row, HF_COLUMN_JOB_OFFER_TTL_MS),
                           .orders = (uint32_t)integer(row, HF_COLUMN_JOB_ORDERS),
                           .cursor = (uint32_t)integer(row, HF_COLUMN_JOB_CURSOR),
                           .offered = (uint32_t)integer(row, HF_COLUMN_JOB_OFFERED),
                           .accepted = (uint32_t)integer(row, HF_COLUMN_JOB_ACCEPTED),
                           .refunded = (uint32_t)integer(row, HF_COLUMN_JOB_REFUNDED),
                           .created_at_ms = integer(row, HF_COLUMN_JOB_CREATED_AT)};
    if (!word_read(decoder, row, HF_COLUMN_JOB_STATUS, hf_job_status_parse, &job.status, "status",
                   HF_ROW_JOB, job.job_id))
        return HF_DECODER_UNREADABLE;
    return decoder->loader->job(decoder->loader->context, &job);
}

static int job_offer_decode(hf_decoder_t *decoder, const hf_row_reader_t *row) {
    hf_stored_job_offer_t offer = {.job_id = text(row, HF_COLUMN_JOB_OFFER_JOB_ID),
                                   .order_id = text(row, HF_COLUMN_JOB_OFFER_ORDER_ID),
                                   .reservation_id = text(row, HF_COLUMN_JOB_OFFER_RESERVATION_ID),
                                   .expires_at_ms = integer(row, HF_COLUMN_JOB_OFFER_EXPIRES_AT)};
    if (!word_read(decoder, row, HF_COLUMN_JOB_OFFER_STATUS, hf_job_offer_status_parse,
                   &offer.status, "status", HF_ROW_JOB_OFFER, offer.order_id))
        return HF_DECODER_UNREADABLE;
    return decoder->loader->job_offer(decoder->loader->context, &offer);
}

static int delivery_decode(hf_decoder_t *decoder, const hf_row_reader_t *row) {
    hf_stored_delivery_t delivery = {
        .payment_intent_id = text(row, HF_COLUMN_DELIVERY_PAYMENT_INTENT_ID),
        .late = integer(row, HF_COLUMN_DELIVERY_LATE) != 0,
        .order_id = text(row, HF_COLUMN_DELIVERY_ORDER_ID),
        .refund_id = text(row, HF_COLUMN_DELIVERY_REFUND_ID),
        .at_ms = integer(row, HF_COLUMN_DELIVERY_RECEIVED_AT)};
    const char *id = delivery.payment_intent_id;
    if (!word_read(decoder, row, HF_COLUMN_DELIVERY_TYPE, hf_payment_type_parse, &delivery.type,
                   "type", HF_ROW_DELIVERY, id) ||
        !word_read(decoder, row, HF_COLUMN_DELIVERY_RESULT, hf_payment_result_parse,
                   &delivery.result, "result", HF_ROW_DELIVERY, id))
        return HF_DECODER_UNREADABLE;
    /* Only a refund's outcome has a reason. */
    if (delivery.result == HF_PAYMENT_REFUND_REQUIRED &&
        !word_read(decoder, row, HF_COLUMN_DELIVERY_REASON, hf_refund_reason_parse,
                   &delivery.reason, "reason", HF_ROW_DELIVERY, id))
        return HF_DECODER_UNREADABLE;
    return decoder->loader->delivery(decoder->loader->context, &delivery);
}

static int ticket_decode(hf_decoder_t *decoder, const hf_row_reader_t *row) {
    hf_stored_ticket_t ticket = {.ticket_id = text(row, HF_COLUMN_TICKET_ID),
                                 .event_id = text(row, HF_COLUMN_TICKET_EVENT_ID),
                                 .user_id = text(row, HF_COLUMN_TICKET_USER_ID),
                                 .seq = (uint32_t)integer(row, HF_COLUMN_TICKET_LINE_SEQ),
                                 .admitted_at_ms = integer(row, HF_COLUMN_TICKET_ADMITTED_AT),
                                 .created_at_ms = integer(row, HF_COLUMN_TICKET_CREATED_AT)};
    if (!word_read(decoder, row, HF_COLUMN_TICKET_STATUS, hf_ticket_status_parse, &ticket.status,
                   "status", HF_ROW_TICKET, ticket.ticket_id))
        return HF_DECODER_UNREADABLE;
    return decoder->loader->ticket(decoder->loader->context, &ticket);
}

/* A status word of the waitlist (names of hf_waitlist_status_name). */
static bool waitlist_status_parse(const char *text, uint8_t *status) {
    for (unsigned s = 0; s <= HF_WAITLIST_CANCELLED; s++)
        if (text && strcmp(text, hf_waitlist_status_name(s)) == 0) {
            *status = (uint8_t)s;
            return true;
        }
    return false;
}

static int waitlist_decode(hf_decoder_t *decoder, const hf_row_reader_t *row) {
    hf_stored_waitlist_t entry = {.waitlist_id = text(row, HF_COLUMN_WAITLIST_ID),
                                  .event_id = text(row, HF_COLUMN_WAITLIST_EVENT_ID),
                                  .user_id = text(row, HF_COLUMN_WAITLIST_USER_ID),
                                  .section = text(row, HF_COLUMN_WAITLIST_SECTION),
                                  .pool = text(row, HF_COLUMN_WAITLIST_POOL),
                                  .hold_id = text(row, HF_COLUMN_WAITLIST_HOLD_ID),
                                  .quantity = (uint32_t)integer(row, HF_COLUMN_WAITLIST_QUANTITY),
                                  .sequence = (uint32_t)integer(row, HF_COLUMN_WAITLIST_SEQUENCE),
                                  .joined_at_ms = integer(row, HF_COLUMN_WAITLIST_JOINED_AT),
                                  .changed_at_ms = integer(row, HF_COLUMN_WAITLIST_UPDATED_AT)};
    if (!word_read(decoder, row, HF_COLUMN_WAITLIST_STATUS, waitlist_status_parse, &entry.status,
                   "status", HF_ROW_WAITLIST, entry.waitlist_id))
        return HF_DECODER_UNREADABLE;
    return decoder->loader->waitlist(decoder->loader->context, &entry);
}

static int driver_decode(hf_decoder_t *decoder, const hf_row_reader_t *row) {
    hf_stored_driver_t driver = {.fleet_id = text(row, HF_COLUMN_DRIVER_FLEET_ID),
                                 .driver_id = text(row, HF_COLUMN_DRIVER_DRIVER_ID),
                                 .lat = real(row, HF_COLUMN_DRIVER_LAT),
                                 .lng = real(row, HF_COLUMN_DRIVER_LNG),
                                 .rating = real(row, HF_COLUMN_DRIVER_RATING),
                                 .available = integer(row, HF_COLUMN_DRIVER_AVAILABLE) != 0};
    return decoder->loader->driver(decoder->loader->context, &driver);
}

static int ride_decode(hf_decoder_t *decoder, const hf_row_reader_t *row) {
    hf_stored_ride_t ride = {.ride_id = text(row, HF_COLUMN_RIDE_ID),
                             .fleet_id = text(row, HF_COLUMN_RIDE_FLEET_ID),
                             .rider_id = text(row, HF_COLUMN_RIDE_RIDER_ID),
                             .lat = real(row, HF_COLUMN_RIDE_LAT),
                             .lng = real(row, HF_COLUMN_RIDE_LNG),
                             .radius_m = integer(row, HF_COLUMN_RIDE_RADIUS_M),
                             .offer_ttl_ms = integer(row, HF_COLUMN_RIDE_OFFER_TTL_MS),
                             .created_at_ms = integer(row, HF_COLUMN_RIDE_CREATED_AT),
                             .offer_driver_id = text(row, HF_COLUMN_RIDE_OFFER_DRIVER_ID),
                             .offer_distance_m = integer(row, HF_COLUMN_RIDE_OFFER_DISTANCE_M),
                             .offer_expires_at_ms = integer(row, HF_COLUMN_RIDE_OFFER_EXPIRES_AT),
                             .driver_id = text(row, HF_COLUMN_RIDE_DRIVER_ID),
                             .declined = text(row, HF_COLUMN_RIDE_DECLINED),
                             .lapsed = text(row, HF_COLUMN_RIDE_LAPSED)};
    if (!word_read(decoder, row, HF_COLUMN_RIDE_STATUS, hf_ride_status_parse, &ride.status,
                   "status", HF_ROW_RIDE, ride.ride_id))
        return HF_DECODER_UNREADABLE;
    return decoder->loader->ride(decoder->loader->context, &ride);
}

/* ---- The table of kinds ---- */

typedef int (*kind_decode_fn)(hf_decoder_t *decoder, const hf_row_reader_t *row);

typedef struct kind {
    const char *table;
    int subject; /* the column that names a row; -1: none */
    kind_decode_fn decode;
} kind_t;

static const kind_t KINDS[] = {
    [HF_ROW_EVENT] = {"events", HF_COLUMN_EVENT_ID, event_decode},
    [HF_ROW_ALLOCATION] = {"allocations", HF_COLUMN_ALLOCATION_ID, allocation_decode},
    [HF_ROW_CALENDAR] = {"calendars", HF_COLUMN_CALENDAR_ID, calendar_decode},
    [HF_ROW_CALENDAR_RESOURCE] = {"calendar_resources", HF_COLUMN_CALENDAR_RESOURCE_CALENDAR_ID,
                                  calendar_resource_decode},
    [HF_ROW_FINISHED_HOLDS] = {"finished holds", -1, finished_holds_decode},
    [HF_ROW_HOLD] = {"holds", HF_COLUMN_HOLD_ID, hold_decode},
    [HF_ROW_ORDER] = {"orders", HF_COLUMN_ORDER_ID, order_decode},
    [HF_ROW_IDEMPOTENCY] = {"idempotency", HF_COLUMN_IDEMPOTENCY_KEY, idempotency_decode},
    [HF_ROW_REFUND] = {"refunds", HF_COLUMN_REFUND_ID, refund_decode},
    [HF_ROW_JOB] = {"jobs", HF_COLUMN_JOB_ID, job_decode},
    [HF_ROW_JOB_OFFER] = {"job_offers", HF_COLUMN_JOB_OFFER_ORDER_ID, job_offer_decode},
    [HF_ROW_DELIVERY] = {"deliveries", HF_COLUMN_DELIVERY_PAYMENT_INTENT_ID, delivery_decode},
    [HF_ROW_TICKET] = {"tickets", HF_COLUMN_TICKET_ID, ticket_decode},
    [HF_ROW_WAITLIST] = {"waitlist", HF_COLUMN_WAITLIST_ID, waitlist_decode},
    [HF_ROW_ORDER_LOCK] = {"order_locks", HF_COLUMN_ORDER_LOCK_ORDER_ID, order_lock_decode},
    [HF_ROW_DRIVER] = {"drivers", HF_COLUMN_DRIVER_DRIVER_ID, driver_decode},
    [HF_ROW_RIDE] = {"rides", HF_COLUMN_RIDE_ID, ride_decode},
};
_Static_assert(sizeof KINDS / sizeof KINDS[0] == HF_ROW_KIND_COUNT, "a row for every kind");

const char *hf_decoder_table(hf_row_kind_t kind) { return KINDS[kind].table; }

bool hf_decoder_wants(const hf_store_loader_t *loader, hf_row_kind_t kind) {
    switch (kind) {
    case HF_ROW_EVENT: return loader->event != NULL;
    case HF_ROW_FINISHED_HOLDS: return loader->finished_holds != NULL;
    case HF_ROW_ALLOCATION: return loader->allocation != NULL;
    case HF_ROW_CALENDAR: return loader->calendar != NULL;
    case HF_ROW_CALENDAR_RESOURCE: return loader->calendar_resource != NULL;
    case HF_ROW_HOLD: return loader->hold != NULL || loader->calendar_hold != NULL;
    case HF_ROW_ORDER: return loader->order != NULL || loader->calendar_order != NULL;
    case HF_ROW_IDEMPOTENCY: return loader->idempotency != NULL;
    case HF_ROW_REFUND: return loader->refund != NULL;
    case HF_ROW_JOB: return loader->job != NULL;
    case HF_ROW_JOB_OFFER: return loader->job_offer != NULL;
    case HF_ROW_DELIVERY: return loader->delivery != NULL;
    case HF_ROW_TICKET: return loader->ticket != NULL;
    case HF_ROW_WAITLIST: return loader->waitlist != NULL;
    case HF_ROW_ORDER_LOCK: return loader->order_lock != NULL;
    case HF_ROW_DRIVER: return loader->driver != NULL;
    case HF_ROW_RIDE: return loader->ride != NULL;
    case HF_ROW_KIND_COUNT: break;
    }
    return false;
}

bool hf_decoder_since(const hf_store_loader_t *loader, hf_row_kind_t kind, int64_t *since_ms) {
    if (kind == HF_ROW_IDEMPOTENCY) *since_ms = loader->keep_since_ms;
    else if (kind == HF_ROW_DELIVERY) *since_ms = loader->deliveries_since_ms;
    else return false;
    return true;
}

int hf_decoder_row(hf_decoder_t *decoder, hf_row_kind_t kind, const hf_row_reader_t *row) {
    return KINDS[kind].decode(decoder, row);
}

/* The row's name in a sentence: its subject column, else "a row". */
static const char *subject(hf_row_kind_t kind, const hf_row_reader_t *row) {
    const char *name = KINDS[kind].subject >= 0 ? text(row, KINDS[kind].subject) : NULL;
    return name != NULL ? name : "a row";
}

int hf_decoder_load_row(hf_decoder_t *decoder, hf_row_kind_t kind, const hf_row_reader_t *row) {
    int result = hf_decoder_row(decoder, kind, row);
    if (result == HF_DECODER_UNREADABLE) return -1;
    if (result != 0)
        hf_store_error_write(decoder->error, decoder->error_size,
                             "store: loading %s stopped at %s (%d)", KINDS[kind].table,
                             subject(kind, row), result);
    return result;
}

int hf_decoder_list_row(hf_decoder_t *decoder, hf_row_kind_t kind, const hf_row_reader_t *row) {
    int result = hf_decoder_row(decoder, kind, row);
    if (result == HF_DECODER_UNREADABLE) return -1;
    if (result != 0 && result != HF_STORE_LIST_STOP)
        hf_store_error_write(decoder->error, decoder->error_size,
                             "store: listing %s stopped at %s (%d)", KINDS[kind].table,
                             subject(kind, row), result);
    return result;
}

int hf_decoder_read_row(hf_decoder_t *decoder, hf_row_kind_t kind, const hf_row_reader_t *row) {
    int result = hf_decoder_row(decoder, kind, row);
    if (result == HF_DECODER_UNREADABLE) return -1;
    if (result != 0)
        hf_store_error_write(decoder->error, decoder->error_size,
                             "store: %s row %s could not be taken back (%d)", KINDS[kind].table,
                             subject(kind, row), result);
    return result;
}

int hf_decoder_load(hf_decoder_table_fn table, void *backend, const hf_store_loader_t *loader,
                    char *error, size_t error_size) {
    /* One set of parsed lines for the whole load: about 24 KiB, not one per row. */
    hf_rows_items_t *items = calloc(1, sizeof *items);
    if (items == NULL) abort();
    hf_decoder_t decoder = {loader, items, error, error_size};
    int result = 0;
    for (int kind = 0; result == 0 && kind < HF_ROW_KIND_COUNT; kind++)
        if (hf_decoder_wants(loader, (hf_row_kind_t)kind))
            result = table(backend, (hf_row_kind_t)kind, &decoder);
    hf_rows_items_free(items);
    free(items);
    return result;
}

/* ---- The history ---- */

int hf_decoder_history(const hf_row_reader_t *row, const char *event_id, hf_store_history_fn entry,
                       void *context, char *error, size_t error_size) {
    size_t data_length = 0;
    hf_stored_history_t item = {
        .seq = integer(row, HF_COLUMN_HISTORY_SEQ),
        .type = text(row, HF_COLUMN_HISTORY_TYPE),
        .at_ms = integer(row, HF_COLUMN_HISTORY_AT),
        .data = row->text(row->row, HF_COLUMN_HISTORY_DATA, &data_length),
        .has_subject = integer(row, HF_COLUMN_HISTORY_HAS_SUBJECT) != 0,
        .reservation_id = text(row, HF_COLUMN_HISTORY_RESERVATION_ID),
        .user_id = text(row, HF_COLUMN_HISTORY_USER_ID),
        .items = text(row, HF_COLUMN_HISTORY_ITEMS),
        .unit = text(row, HF_COLUMN_HISTORY_UNIT),
        .notify_status = (int)integer(row, HF_COLUMN_HISTORY_NOTIFY_STATUS),
        .notify_attempts = (uint32_t)integer(row, HF_COLUMN_HISTORY_NOTIFY_ATTEMPTS),
        .notify_last_status = (int)integer(row, HF_COLUMN_HISTORY_NOTIFY_LAST_STATUS),
        .notify_last_error = text(row, HF_COLUMN_HISTORY_NOTIFY_LAST_ERROR),
        .notify_next_attempt_ms = integer(row, HF_COLUMN_HISTORY_NOTIFY_NEXT_AT)};
    item.data_length = data_length;
    if (item.unit == NULL) item.unit = event_id;
    /* A row's data is spliced into answers as it is: one that is not an object is refused. */
    if (item.type == NULL || item.data == NULL || item.data_length < 2 || item.data[0] != '{' ||
        item.data[item.data_length - 1] != '}') {
        hf_store_error_write(error, error_size, "store: history row %s/%" PRId64 " is damaged",
                             event_id, item.seq);
        return -1;
    }
    return entry(context, &item);
}
