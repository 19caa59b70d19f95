/* The store's table of record kinds (records.h): one row per kind of core/mutation.h's list.
 * Each kind's row is the macro ROW_KIND below; the table is made from the list, so a kind added
 * to the list without its ROW_KIND here (or without its copy, hf_batch_copy_MEMBER in batch.c)
 * fails to compile. Adding a kind: its ROW_ line here, its copy in batch.c when its member is
 * new, its history functions in history.c when it makes entries, and its write in each
 * backend's table. */
#include "store/records.h"

#include <stddef.h>

/* Where a field of the union is, as records.h's offsets. */
#define FIELD(path) offsetof(hf_mutation_t, as.path)
#define UNIT(path) .unit = FIELD(path)
#define UNIT_OR_NONE(path) .unit = FIELD(path), .unit_or_none = true
#define SUBJECT(path) .subject = FIELD(path)
#define SUBJECT_OR(path, other) .subject = FIELD(path), .subject_else = FIELD(other)
#define HISTORY(lower) \
    .history_type = hf_history_type_##lower, .history_data = hf_history_data_##lower

/* Events. A change of an event's definition is told in its history; its creation, its sales
 * switch and its deletion are no sale (a deleted event's history goes with it). */
#define ROW_EVENT_CREATE UNIT(event_create.event_id), SUBJECT(event_create.event_id)
#define ROW_EVENT_SALES UNIT(event_sales.event_id), SUBJECT(event_sales.event_id)
#define ROW_EVENT_UPDATE \
    UNIT(event_update.event_id), SUBJECT(event_update.event_id), HISTORY(event_update)
#define ROW_EVENT_DELETE UNIT(event_delete.event_id), SUBJECT(event_delete.event_id)
/* Seats and pools (live streams only) follow from the holds and orders. */
#define ROW_SEAT UNIT(seat.event_id), SUBJECT(seat.seat_id)
#define ROW_POOL UNIT(pool.event_id), SUBJECT(pool.pool_id)
/* Holds and orders: an order's items are in its entry. */
#define ROW_HOLD_CREATE \
    UNIT(hold_create.event_id), SUBJECT(hold_create.hold_id), HISTORY(hold_create)
#define ROW_HOLD_UPDATE \
    UNIT(hold_update.event_id), SUBJECT(hold_update.hold_id), HISTORY(hold_update)
#define ROW_ORDER_CREATE \
    UNIT(order_create.event_id), SUBJECT(order_create.order_id), HISTORY(order_create)
#define ROW_ORDER_ITEM UNIT(order_item.event_id), SUBJECT_OR(order_item.seat_id, order_item.pool_id)
#define ROW_ORDER_UPDATE \
    UNIT(order_update.event_id), SUBJECT(order_update.order_id), HISTORY(order_update)
/* An idempotency key's unit is the request's (none for a request about no unit). */
#define ROW_IDEMPOTENCY UNIT_OR_NONE(idempotency.unit), SUBJECT(idempotency.key)
/* Payments: a delivery's event_id is the provider's id of the delivery, the hold's event is
 * its unit (none for an unknown hold) and the history its entry goes in; a refund's entry is
 * the delivery's, which names it. */
#define ROW_DELIVERY \
    UNIT_OR_NONE(delivery.hold_event_id), SUBJECT(delivery.payment_intent_id), HISTORY(delivery)
#define ROW_REFUND UNIT_OR_NONE(refund.event_id), SUBJECT(refund.refund_id)
/* A waiting room's tickets make no entries (docs/API.md, a Choice): a million joins would
 * swamp the history of the sale they wait for. */
#define ROW_TICKET_CREATE UNIT(ticket.event_id), SUBJECT(ticket.ticket_id)
#define ROW_TICKET_UPDATE UNIT(ticket.event_id), SUBJECT(ticket.ticket_id)
/* Dispatch's unit is the fleet; it keeps no audit history (docs/API.md). */
#define ROW_DRIVER UNIT(driver.fleet_id), SUBJECT(driver.driver_id)
#define ROW_RIDE UNIT(ride.fleet_id), SUBJECT(ride.ride_id)
/* A notification's delivery state is its history entry's, so it is fenced on that unit: a
 * node that lost the unit cannot mark its notifications delivered. It makes no entry. */
#define ROW_NOTIFY UNIT(notify.unit), SUBJECT(notify.unit)
/* A waitlist entry is its event's (API.md section 14); its row is the entry as it stands. Its
 * offer, fulfilment and lapse are told in the history; joins and cancels are not (as tickets'). */
#define ROW_WAITLIST UNIT(waitlist.event_id), SUBJECT(waitlist.waitlist_id), HISTORY(waitlist)
/* Calendars: the calendar is the unit of its records, holds' and orders' included. A change
 * of a span (live streams only) follows from the holds and orders, as seats do. */
#define ROW_CALENDAR_CREATE UNIT(calendar_create.calendar_id), SUBJECT(calendar_create.calendar_id)
#define ROW_CALENDAR_RESOURCES \
    UNIT(calendar_resources.calendar_id), SUBJECT(calendar_resources.calendar_id)
#define ROW_CALENDAR_SALES UNIT(calendar_sales.calendar_id), SUBJECT(calendar_sales.calendar_id)
#define ROW_CALENDAR_CHANGE UNIT(calendar_change.calendar_id), SUBJECT(calendar_change.resource_id)

/* An allocation is its event's (its history tells its creation and its releases). */
#define ROW_ALLOCATION \
    UNIT(allocation.event_id), SUBJECT(allocation.allocation_id), HISTORY(allocation)
/* Cancel jobs: the cancelled event is their unit. The cancel and a job's end make entries of
 * its history; a step's orders and refunds tell themselves, so a job offer makes none. */
#define ROW_EVENT_CANCEL UNIT(job.event_id), SUBJECT(job.job_id), HISTORY(event_cancel)
#define ROW_JOB UNIT(job.event_id), SUBJECT(job.job_id), HISTORY(job)
#define ROW_JOB_OFFER UNIT(job_offer.event_id), SUBJECT(job_offer.order_id)

/* An order's lock is its unit's (the old order's), fenced with it; the exchange it serves tells
 * itself in the history by the orders' own records. */
#define ROW_ORDER_LOCK UNIT(order_lock.event_id), SUBJECT(order_lock.order_id)

#define ROW(KIND, value, lower, member) \
    [HF_MUTATION_##KIND] = {.name = #KIND, .copy = hf_batch_copy_##member, ROW_##KIND},

const hf_record_row_t hf_record_rows[HF_RECORD_KIND_LIMIT] = {HF_RECORD_KINDS(ROW)};

const char *hf_record_subject(const hf_mutation_t *record) {
    const hf_record_row_t *row = hf_record_row(record->type);
    const char *subject = hf_record_text(record, row->subject);
    if (subject == NULL && row->subject_else != 0)
        subject = hf_record_text(record, row->subject_else);
    return subject;
}

/* Records of no event or fleet are fenced as one unit of their own. */
const char *hf_store_record_unit(const hf_mutation_t *record) {
    const hf_record_row_t *row = hf_record_row(record->type);
    const char *unit = hf_record_text(record, row->unit);
    if (row->unit_or_none && (unit == NULL || unit[0] == '\0')) return HF_STORE_UNIT_NONE;
    return unit;
}
