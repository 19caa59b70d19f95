/* Private to src/core/: what the core's files share. Nothing outside src/core includes it;
 * the server, the tests and the benchmarks go through core.h.
 *
 * Here: the core's container (struct hf_core), which holds each domain's state as a struct of
 * its own header (events.h, users.h, holds.h, orders.h, payments.h; the waiting rooms' and
 * dispatch's by pointer, private to queue.c and dispatch/) beside the machinery they share
 * (the sink and the numbering of changes, the time, the timer, the items and strings tables);
 * text keys and small containers; and the functions one of the core's files offers the
 * others, by file. Helpers that were small static functions of the hot path (hold, commit)
 * are static inline here, so splitting the core into files put no call on that path (the
 * build has no LTO). */
#ifndef HF_CORE_INTERNAL_H
#define HF_CORE_INTERNAL_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/events.h"
#include "core/holds.h"
#include "core/orders.h"
#include "core/payments.h"
#include "core/timer.h"
#include "core/users.h"
#include "lib/buffer.h"
#include "lib/map.h"

/* The seat_changes array of an event (see event_tables_t). */
static inline uint64_t *seat_changes_of(const hf_event_t *event) {
    return ((event_tables_t *)event->internal)->seat_changes;
}

/* The core: a container of the domains' states and what they share. A domain's state is a
 * member named after it (core->holds, core->events, ...); a new domain adds its state struct
 * in a header of its own and one member here, its deadlines as kinds of the shared timer
 * (timer.h, and a row of core.c's table of timer kinds). */
struct hf_core {
    hf_mutation_sink_t sink;
    bool stream_records; /* emit seat and pool records (hf_core_set_stream_records) */
    events_t events;
    holds_t holds;
    uint64_t change_count; /* mutation records emitted */
    orders_t orders;
    users_t users;
    payments_t payments;

    /* The lines of holds and orders (item_offset), and the strings of users' ids and orders'
     * payment references. */
    hf_item_t *items;
    uint32_t item_count, item_capacity;
    char *strings;
    uint32_t strings_length, strings_capacity;

    /* Deadlines of every domain that has them on the core's heap (HF_TIMER_HOLD,
     * HF_TIMER_OFFER). An extension pushes a new entry and leaves the old one behind, as do
     * releases and commits: such entries are dropped lazily. */
    hf_timer_t timer;
    /* The time of the last hf_core_advance: a command runs at that time or later (asserted),
     * once its caller advanced the core to it. */
    hf_time_ms_t now;

    hold_scratch_t scratch; /* of one hold request (holds.h) */
    /* hf_core_payment_remote's old order as locked for the delivery's hold, for that call
     * only (NULL: none, or refused by its owner: a remote exchange hold then never commits). */
    const struct hf_remote_order *payment_locked;
    /* The lines of the hold or order a record describes, and the seat ids they point to. */
    hf_mutation_item_t record_lines[HF_HOLD_ITEMS_MAX];
    hf_buffer_t record_ids;

    /* The waiting rooms (queue.c), made at the first join or restored ticket. */
    struct queue_state *queue;
    /* Fleets, drivers, rides and offers (core/dispatch/), made at the first driver's PUT:
     * NULL in a core that never dispatched. */
    struct dispatch *dispatch;
    /* Calendars, their resources and span indexes (core/calendar/), made at the first
     * calendar: NULL in a core that never had one. */
    struct calendars *calendars;
    /* Exchange holds restored before their old orders (exchange/), NULL when none. */
    struct exchange_waits *exchange_waits;
    /* Orders locked by exchange holds of other units (exchange/lock.c), NULL when none. */
    struct order_locks *order_locks;
    /* Allocations of every event (allocation/), NULL in a core that never had one. */
    struct allocations *allocations;
    /* Cancel jobs (job/), NULL until the first cancel. */
    struct jobs *jobs;
    /* Waitlists' entries and their index (core/waitlist/), made at the first waitlist
     * setting: NULL in a core that never had one. */
    struct waitlists *waitlists;
};

#define NO_STRING UINT32_MAX
#define NO_INDEX UINT32_MAX

/* A string key with its length and hash, worked out once per command: a command that looks
 * an id up and then inserts it (a new hold, a new user) hashes it once. */
typedef struct text_key {
    const char *text;
    size_t length;
    uint32_t hash;
} text_key_t;

static inline text_key_t text_key_of(const char *text, size_t length) {
    return (text_key_t){text, length, hf_map_hash(text, length)};
}

/* The user a command names: the id's key, and the user's index, or NO_INDEX for a user who
 * has never held anything yet. */
typedef struct user_ref {
    text_key_t key;
    uint32_t index;
} user_ref_t;

/* ---- small containers ----
 *
 * Tables grow by doubling, so a command allocates nothing once the tables have reached the
 * working size; an event's seats are allocated once, when the event is created. Hold slots
 * are reused once their holds are forgotten (hf_core_evict), so the hold tables stop growing
 * at the working size too. */

static inline void *grow(void *array, uint32_t *capacity, uint32_t needed, size_t element_size) {
    if (needed <= *capacity) return array;
    uint32_t new_capacity = *capacity ? *capacity : 16;
    while (new_capacity < needed) new_capacity *= 2;
    void *grown = realloc(array, (size_t)new_capacity * element_size);
    if (!grown) abort(); /* out of memory: nothing sensible to answer */
    *capacity = new_capacity;
    return grown;
}

static inline uint32_t string_store(hf_core_t *core, const char *text, size_t text_length) {
    if (!text) return NO_STRING;
    uint32_t length = (uint32_t)text_length;
    core->strings = grow(core->strings, &core->strings_capacity, core->strings_length + length + 1,
                         1);
    uint32_t offset = core->strings_length;
    memcpy(core->strings + offset, text, length + 1);
    core->strings_length += length + 1;
    return offset;
}

static inline uint32_t item_allocate(hf_core_t *core, uint32_t count) {
    core->items = grow(core->items, &core->item_capacity, core->item_count + count + 1,
                       sizeof *core->items);
    uint32_t offset = core->item_count;
    core->item_count += count;
    return offset;
}

static inline uint32_t item_units(const hf_item_t *items, uint32_t seat_count,
                                  uint32_t pool_count) {
    uint32_t units = seat_count;
    for (uint32_t i = 0; i < pool_count; i++) units += items[seat_count + i].quantity;
    return units;
}

/* The row of a seat: hf_core_seat_row, inline for the files that run it for every seat. */
static inline uint32_t seat_row(const hf_event_t *event, uint32_t seat_index) {
    return event->seats[seat_index].row;
}

/* ---- small helpers of every file ---- */

/* A 400 about a field: the path from its top-level member down (core.h, hf_error_detail_t)
 * and the fault; the engine says it in words. Every path member is set, so a caller's detail
 * need not be cleared first. */
static inline void path_set(hf_error_detail_t *detail, const char *field,
                            const hf_error_detail_t *path, uint8_t fault) {
    detail->field = field;
    detail->member = path ? path->member : NULL;
    detail->has_index = path && path->has_index;
    detail->index = path ? path->index : 0;
    detail->has_row = path && path->has_row;
    detail->row = path ? path->row : 0;
    detail->other = path ? path->other : 0;
    detail->fault = fault;
}

/* Kept this small so a reader (and the static analyzer) sees at once that it always refuses. */
static inline hf_error_t invalid_path(hf_error_detail_t *detail, const char *field,
                                      const hf_error_detail_t *path, uint8_t fault) {
    if (detail) path_set(detail, field, path, fault);
    return HF_ERROR_INVALID_REQUEST;
}

static inline hf_error_t invalid_because(hf_error_detail_t *detail, const char *field,
                                         uint8_t fault) {
    return invalid_path(detail, field, NULL, fault);
}

/* The top-level member field is not what it must be. */
static inline hf_error_t invalid(hf_error_detail_t *detail, const char *field) {
    return invalid_path(detail, field, NULL, HF_FAULT_VALUE);
}

/* field[index], or field[index].member when member is not NULL (static). */
static inline hf_error_t invalid_at(hf_error_detail_t *detail, const char *field, uint32_t index,
                                    const char *member, uint8_t fault) {
    hf_error_detail_t path = {.member = member, .index = index, .has_index = true};
    return invalid_path(detail, field, &path, fault);
}

/* sections[s].rows[r], or its member: the path of an event's definition and of its change. */
static inline hf_error_t invalid_row(hf_error_detail_t *detail, uint32_t s, uint32_t r,
                                     const char *member, uint8_t fault, uint32_t other) {
    hf_error_detail_t path = {.member = member,
                              .index = s,
                              .has_index = true,
                              .row = r,
                              .has_row = true,
                              .other = other};
    return invalid_path(detail, "sections", &path, fault);
}

/* list[index].id repeats list[other].id. */
static inline hf_error_t invalid_duplicate(hf_error_detail_t *detail, const char *list,
                                           uint32_t index, uint32_t other) {
    hf_error_detail_t path = {.member = "id", .index = index, .has_index = true, .other = other};
    return invalid_path(detail, list, &path, HF_FAULT_DUPLICATE);
}

/* A fault with numbers: requested against limit. */
static inline hf_error_t invalid_count(hf_error_detail_t *detail, const char *field, uint8_t fault,
                                       int64_t requested, int64_t limit) {
    if (detail) {
        detail->requested = requested;
        detail->limit = limit;
    }
    return invalid_path(detail, field, NULL, fault);
}

static inline hf_hold_t *hold_of(hf_core_t *core, uint32_t index) {
    return &core->holds.slots[index];
}

/* Released or expired: done, but still answerable, and the only holds ever forgotten. */
static inline bool hold_status_finished(uint8_t status) {
    return status == HF_HOLD_RELEASED || status == HF_HOLD_EXPIRED;
}

static inline event_user_t *owner_record(hf_core_t *core, uint32_t handle) {
    if (handle & OWNER_IN_TABLE) return &core->users.per_event[handle & ~OWNER_IN_TABLE];
    return &core->users.slots[handle].first_event_record;
}

/* A hold or order id being looked up in core->holds.ids or core->orders.ids, which keep no
 * keys: a candidate matches when the hold or order at its index has this id. */
typedef struct record_key {
    const hf_core_t *core;
    text_key_t id;
} record_key_t;

/* True when a record's id field holds exactly the key's id. */
static inline bool id_field_equal(const char *field, const text_key_t *id) {
    return memcmp(field, id->text, id->length) == 0 && field[id->length] == '\0';
}

/* The key of a new hold's or order's id, which is kept (and so compared) cut to
 * HF_SERVER_ID_SIZE. */
static inline text_key_t server_id_key(const char *id) {
    size_t length = strlen(id);
    return text_key_of(id, length < HF_SERVER_ID_SIZE ? length : HF_SERVER_ID_SIZE);
}

/* Copies a server-made id, cut to HF_SERVER_ID_SIZE bytes as the id fields hold; returns the
 * key the copy is indexed under (the given one when nothing was cut). */
static inline text_key_t server_id_copy(char out[HF_SERVER_ID_SIZE + 1], const text_key_t *id) {
    if (id->length <= HF_SERVER_ID_SIZE) {
        memcpy(out, id->text, id->length);
        out[id->length] = '\0';
        return (text_key_t){out, id->length, id->hash};
    }
    memcpy(out, id->text, HF_SERVER_ID_SIZE);
    out[HF_SERVER_ID_SIZE] = '\0';
    return text_key_of(out, HF_SERVER_ID_SIZE);
}

/* ---- core.c: mutation records ----
 *
 * Every record the core emits is built in core.c, by these: the domain files change the state,
 * then call one of them. Each emits, counts the change (hf_core_change_count) and stamps the
 * hold's, order's or event's newest change where core.h's change numbers need it. */

/* The event's creation, its definition as JSON. */
void record_event_created(hf_core_t *core, hf_event_t *event,
                          const hf_event_definition_t *definition, hf_time_ms_t now);
/* A seat's new status and version (for live streams only, see hf_core_set_stream_records). */
void record_seat(hf_core_t *core, const hf_event_t *event, uint32_t seat_index, uint32_t row_index,
                 hf_time_ms_t now);
/* A pool's counts after a change (for live streams only). */
void record_pool(hf_core_t *core, const hf_event_t *event, uint32_t pool_index, hf_time_ms_t now);
/* A new hold as it stands, items JSON included; user_id is the request's. */
void record_hold_created(hf_core_t *core, uint32_t hold_index, const char *user_id);
/* A hold's status and expires_at as they stand (extended, released, expired or confirmed, and
 * then its order's id); user_id is the request's, or NULL when no request made the change. */
void record_hold_updated(hf_core_t *core, uint32_t hold_index, hf_time_ms_t at_ms,
                         const char *user_id);
/* A new order (its hold's id when it has one) and one record per item. */
void record_order_created(hf_core_t *core, uint32_t order_index);
/* The event's sales closed or reopened (event->sales_open as it stands). */
void record_event_sales(hf_core_t *core, const hf_event_t *event, hf_time_ms_t now);
/* The event changed: its definition whole after the change, and the patch of what changed. */
void record_event_updated(hf_core_t *core, hf_event_t *event,
                          const hf_event_definition_t *definition,
                          const hf_event_definition_t *changes, uint32_t members, hf_time_ms_t now);
/* The event is deleted (record before it is freed: the record names it). */
void record_event_deleted(hf_core_t *core, const hf_event_t *event, hf_time_ms_t now);
/* A delivery and its outcome (the delivery's fields as the command named them). */
void record_delivery(hf_core_t *core, const hf_payment_delivery_t *delivery, const delivery_t *kept,
                     hf_time_ms_t now);
/* A refund as it stands. */
void record_refund(hf_core_t *core, uint32_t refund_index, hf_time_ms_t now);
/* An order's new status. */
void record_order_updated(hf_core_t *core, uint32_t order_index, const char *user_id,
                          hf_time_ms_t now);

/* ---- event.c: events, their layout, seats and pools ---- */

/* Checks a definition and adds the event; nothing is emitted. */
hf_error_t event_add(hf_core_t *core, const hf_event_definition_t *definition, hf_time_ms_t now,
                     hf_error_detail_t *detail);
void event_free(hf_event_t *event);
/* A new event laid out from a checked definition (seats, rows): every seat available. */
hf_event_t *event_allocate(const hf_event_definition_t *definition, uint64_t seats, uint64_t rows,
                           hf_time_ms_t now);
/* Takes the event out of its slot and the id index (event_update.c's delete). */
void event_remove(hf_core_t *core, uint32_t index);
/* The index of an earlier row of the section with row r's id, else NO_INDEX; r joins seen
 * (a map the caller made; emptied at r 0). A map, not a comparison with every earlier row: a
 * section of 10,000 rows took 50 million comparisons, a second of the loop per event. */
uint32_t row_duplicate_of(const hf_section_definition_t *section, uint32_t r, hf_map_t *seen);
size_t seat_id_write(const hf_event_t *event, uint32_t row_index, uint32_t seat_index, char *out);
void seat_set(hf_core_t *core, hf_event_t *event, uint32_t seat_index, uint8_t status,
              uint32_t owner, hf_time_ms_t now, bool report);
/* allocation: the index + 1 of the allocation the hold or order took the units from (0: the
 * public's), whose units they are again when they come free. */
void pool_move(hf_core_t *core, hf_event_t *event, const hf_item_t *item, int64_t held,
               int64_t sold, uint32_t allocation, hf_time_ms_t now, bool report);

/* ---- user.c: users and their records per event ---- */

user_ref_t user_ref_find(const hf_core_t *core, const text_key_t *key);
user_ref_t user_ref_of(const hf_core_t *core, const char *user_id);
/* Makes the user a command names (user->index is NO_INDEX); returns the new index. */
uint32_t user_create(hf_core_t *core, user_ref_t *user);
uint32_t user_intern_id(hf_core_t *core, const char *user_id);
bool user_has_id(const hf_core_t *core, uint32_t user_index, const char *user_id);
uint32_t event_user_handle(const hf_core_t *core, uint32_t event, uint32_t user);
event_user_t *event_user_find(hf_core_t *core, uint32_t event, uint32_t user);
/* Makes the user's record on the event, which it has none of; returns its handle. */
uint32_t event_user_create(hf_core_t *core, uint32_t event, uint32_t user);
void user_order_push(user_t *user, uint32_t order);
/* Appends value to list, growing it. */
void index_list_push(index_list_t *list, uint32_t value);

/* The user's index, the user made when new. The check is inline: most commands name a known
 * user, and the hold path made no call for it before the core was split into files. */
static inline uint32_t user_intern(hf_core_t *core, user_ref_t *user) {
    if (user->index != NO_INDEX) return user->index;
    return user_create(core, user);
}

/* The handle of the user's record on the event, made when missing. */
static inline uint32_t event_user_intern(hf_core_t *core, uint32_t event, uint32_t user) {
    uint32_t handle = event_user_handle(core, event, user);
    if (handle != NO_INDEX) return handle;
    return event_user_create(core, event, user);
}

/* ---- hold.c: holds, their expiry and the finished ones ---- */

void finished_push(hf_core_t *core, uint32_t hold_index);
/* Ends a held hold: its seats and units are free again. */
void hold_finish(hf_core_t *core, uint32_t hold_index, uint8_t status, hf_time_ms_t at,
                 bool report);
uint32_t hold_allocate(hf_core_t *core, const hf_hold_request_t *request, const text_key_t *hold_id,
                       uint32_t event, user_ref_t *user);
/* Marks a new hold's seats and units as held by it. */
void hold_take(hf_core_t *core, uint32_t hold_index, hf_time_ms_t now, bool report);
/* True when id is NULL or a hold has it already; else *key is set for the insert. */
bool hold_id_taken(const hf_core_t *core, const char *id, text_key_t *key);
/* Finds a hold and checks its owner: the first checks of extend, release and commit. */
hf_error_t hold_owned(hf_core_t *core, const char *hold_id, const char *user_id, uint32_t *index);

/* ---- request.c: the checks of a hold request, which bookings share ---- */

/* Refuses a new hold or booking while the event's sales are closed, after every check of
 * the request itself: an unknown best_available section still answers its 404 first. */
hf_error_t check_sales_open(const hf_event_t *event, const hf_hold_request_t *request);
hf_error_t check_request_shape(const hf_event_t *event, const hf_hold_request_t *request,
                               size_t user_length, hf_error_detail_t *detail);
hf_error_t resolve_seats(hf_core_t *core, const hf_event_t *event, const hf_hold_request_t *request,
                         hf_error_detail_t *detail);
/* Resolves pool ids into core->scratch.pools. */
hf_error_t resolve_pools(hf_core_t *core, const hf_event_t *event, const hf_hold_request_t *request,
                         hf_error_detail_t *detail);
uint64_t seats_observed_change(const hf_core_t *core, const hf_event_t *event, uint32_t seat_count);
hf_error_t check_available(hf_core_t *core, const hf_event_t *event,
                           const hf_hold_request_t *request, const event_user_t *owner,
                           hf_error_detail_t *detail);
hf_error_t pick_best(hf_core_t *core, hf_event_t *event, const hf_hold_request_t *request,
                     const event_user_t *owner, hf_error_detail_t *detail);
hf_error_t check_user_limit(const hf_event_t *event, const hf_hold_request_t *request,
                            const event_user_t *owner, uint32_t replaced_units,
                            hf_error_detail_t *detail);
int64_t items_fill(hf_core_t *core, const hf_event_t *event, const hf_hold_request_t *request,
                   uint32_t offset);

/* ---- order.c: orders ---- */

/* True when id is NULL or an order has it already; else *key is set for the insert. */
bool order_id_taken(const hf_core_t *core, const char *id, text_key_t *key);
/* Whether a repeated commit of the confirmed order brings no payment or the order's own: a
 * second payment is never absorbed (API.md section 3). */
bool order_same_payment(const hf_core_t *core, const hf_order_t *order, const char *payment_ref);
uint32_t order_allocate(hf_core_t *core, const text_key_t *order_id, uint32_t event, uint32_t user,
                        hf_time_ms_t now, uint8_t target);
/* The order of a hold just confirmed (its status set, its seats and units no longer held),
 * with its records; the seats and units are sold. Returns the order's index. user_id (NULL
 * when no user asked) must not point into core->strings, which storing payment_ref may
 * move. */
uint32_t order_from_hold(hf_core_t *core, uint32_t hold_index, const text_key_t *order_key,
                         const char *payment_ref, const char *user_id, hf_time_ms_t now);
/* A confirmed order cancelled (by its user, or by its event's cancel job): its refund when it
 * was paid (refund_key, reason), its record, its seats and units given back. */
void order_cancel_apply(hf_core_t *core, uint32_t index, const text_key_t *refund_key,
                        uint8_t reason, const char *user_id, hf_time_ms_t now);
/* Marks an order's seats sold and its units sold. */
void order_take(hf_core_t *core, uint32_t order_index, hf_time_ms_t now, bool report);

/* The rows of HF_TIMER_HOLD in core.c's table of timer kinds: whether an entry was left
 * behind (the hold is no longer held at that expires_at), and the hold's expiry. */
bool hold_expiry_stale(const hf_core_t *core, const hf_timer_entry_t *entry);
void hold_expiry_due(hf_core_t *core, const hf_timer_entry_t *entry, hf_time_ms_t now);

/* ---- hold.c, for payment.c ---- */

/* Takes a finished hold out of the list of finished holds (a late commit confirms it). */
void finished_remove(hf_core_t *core, uint32_t hold_index);

/* ---- payment.c ---- */

void payment_free(hf_core_t *core);
/* True when id is NULL or a refund has it already; else *key is set for the insert. */
bool refund_id_taken(const hf_core_t *core, const char *id, text_key_t *key);
/* The pending refund of a paid order being cancelled (order.c): its total back to its
 * payment_ref, reason order_cancelled, of its event; order and refund name each other and the
 * refund's record is emitted. Returns the refund's index. */
uint32_t refund_of_cancel(hf_core_t *core, uint32_t order_index, const text_key_t *refund_key,
                          uint8_t reason, hf_time_ms_t now);
/* A pending refund of amount to intent_id for the hold reservation_id names (its unit the
 * hold's), with its reason; the caller emits its record. Returns the refund's index. */
uint32_t refund_of_payment(hf_core_t *core, const text_key_t *refund_key, const char *intent_id,
                           const char *reservation_id, int64_t amount, uint8_t reason,
                           hf_time_ms_t now);

/* ---- queue.c: the waiting rooms ---- */

/* The rooms' own heap of deadlines (HF_TIMER_QUEUE_ADMIT and HF_TIMER_QUEUE_TICKET entries),
 * NULL before the first room is made; and the rows of those kinds in core.c's table: whether
 * an entry no longer matters, a room's next admission, a ticket's abandonment or expiry. */
hf_timer_t *queue_timer(const hf_core_t *core);
bool queue_entry_stale(const hf_core_t *core, const hf_timer_entry_t *entry);
void queue_admit_due(hf_core_t *core, const hf_timer_entry_t *entry, hf_time_ms_t now);
void queue_ticket_due(hf_core_t *core, const hf_timer_entry_t *entry, hf_time_ms_t now);
void queue_open_due(hf_core_t *core, const hf_timer_entry_t *entry, hf_time_ms_t now);
/* Forgets the oldest finished tickets over the limit whose records are durable. */
uint32_t queue_evict(hf_core_t *core, uint64_t durable_changes);
void queue_free(hf_core_t *core);
/* hf_core_check's part: each room's counts, Fenwick tree and head against its tickets. */
const char *queue_check(const hf_core_t *core);
/* Whether the event's room ever had a ticket (a room is made at the first join). */
bool queue_room_exists(const hf_core_t *core, uint32_t event_index);
/* The event's room settings changed (enabled or not): the running room follows them, its
 * bucket capped to the new size and its next admission due at once. */
void queue_room_changed(hf_core_t *core, uint32_t event_index, hf_time_ms_t now);
/* A ticket as it stands after its join (created) or a change of status (queue.c passes its
 * fields: core/queue.h is the domain's header, which this one does not include); user_id is
 * the joined user's, NULL in a change of status (hf_mutation_ticket_t). */
typedef struct ticket_record {
    const char *ticket_id, *user_id;
    uint32_t event, seq;
    uint8_t status;
    hf_time_ms_t admitted_at_ms;
} ticket_record_t;
void record_ticket(hf_core_t *core, const ticket_record_t *ticket, bool created,
                   hf_time_ms_t at_ms);
/* ---- core.c and dispatch/: the records of rides and drivers ----
 *
 * Dispatch builds its own records (its state is private to core/dispatch/) and hands them to
 * this, which numbers and emits them as every other record. */
void record_emit(hf_core_t *core, const hf_mutation_t *mutation);

/* ---- dispatch/: what the core's timer and destruction call ---- */

void dispatch_free(hf_core_t *core);
/* hf_core_evict's share of dispatch: the finished rides past their bound, once durable. */
uint32_t dispatch_evict(hf_core_t *core, uint64_t durable_changes);
/* Whether a timer entry of kind HF_TIMER_OFFER no longer matters (the ride moved on). */
bool dispatch_offer_stale(const hf_core_t *core, const hf_timer_entry_t *entry);
/* The offer of the entry's ride lapsed at its deadline: the ride moves on at now. */
void dispatch_offer_lapse(hf_core_t *core, const hf_timer_entry_t *entry, hf_time_ms_t now);

/* ---- calendar/: what the other files of the core call ---- *
 *
 * Calendar holds and orders go through hold.c, order.c and payment.c as every hold and order
 * does; those branch on target where a calendar's differ (their items, spans, limits). */

void calendars_free(hf_core_t *core);
const char *calendars_check(const hf_core_t *core);
/* The id and currency of the calendar at index. */
const char *calendar_id_at(const hf_core_t *core, uint32_t calendar_index);
const char *calendar_currency_at(const hf_core_t *core, uint32_t calendar_index);
void calendar_record_hold_created(hf_core_t *core, uint32_t hold_index, const char *user_id);
void calendar_record_order_created(hf_core_t *core, uint32_t order_index);
/* hold_finish's share for a calendar hold (spans given back unless confirmed). */
void calendar_hold_finish(hf_core_t *core, uint32_t hold_index, uint8_t status, hf_time_ms_t at,
                          bool report);
void calendar_hold_limits(const hf_core_t *core, uint32_t calendar_index, int64_t *hold_ttl_ms,
                          int64_t *max_hold_ms);
bool calendar_hold_free(const hf_core_t *core, const hf_hold_t *hold);
void calendar_order_listed(hf_core_t *core, uint32_t calendar_index, uint32_t order_index);
void calendar_order_take(hf_core_t *core, uint32_t order_index, hf_time_ms_t now, bool report);
void calendar_order_cancel(hf_core_t *core, uint32_t order_index, hf_time_ms_t now);
/* The rows of HF_TIMER_CALENDAR_SWEEP: an order's ended uses leave the span index. */
bool calendar_sweep_stale(const hf_core_t *core, const hf_timer_entry_t *entry);
void calendar_sweep_due(hf_core_t *core, const hf_timer_entry_t *entry, hf_time_ms_t now);

/* ---- hold.c, for calendar/ ---- */

/* A slot for a new hold of item_count items (cleared but for its items). */
uint32_t hold_slot_take(hf_core_t *core, uint32_t item_count);
/* A hold joins or leaves its owner's list of held holds. */
void hold_active_push(hf_core_t *core, event_user_t *owner, uint32_t hold_index);
void hold_active_remove(hf_core_t *core, event_user_t *owner, uint32_t hold_index);

/* The owner records of calendar holds and orders are users' records per event (users.h), under
 * a number no event has: the user's held holds on the calendar are their list. */
#define CALENDAR_OWNER_BASE 0x40000000u
static inline uint32_t calendar_owner_unit(uint32_t calendar_index) {
    return CALENDAR_OWNER_BASE + calendar_index;
}

/* The id of the unit a hold, order or refund belongs to: its event's or its calendar's. */
static inline const char *unit_id_of(const hf_core_t *core, uint8_t target, uint32_t index) {
    return target == HF_TARGET_CALENDAR ? calendar_id_at(core, index)
                                        : core->events.slots[index]->id;
}

/* ---- exchange/: exchange holds and their commit (API.md section 13) ----
 *
 * An exchange hold names a confirmed order of its user (hold->exchange_for) whose own seats,
 * pool units and spans count as free for it. What it keeps of them is told from immutable
 * data alone (the two item lists): a seat of the hold is kept when the old order, on the same
 * event, has it; a pool line keeps min(its quantity, the old order's of that pool). Kept items
 * are not marked held: they stay sold to the old order until the commit swaps the orders. A
 * calendar hold's spans are all taken, the old order's included (they were checked with the
 * old order's uses out of the index), so the index may count the kept part twice until the
 * commit gives the old order's back. */

/* An exchange hold placed by the core itself (a rebooking offer of a cancel job): for the
 * order's user, on event event_index, of the given seats (seat indexes) and pool items
 * (hf_item_t as the hold's own items: pool index and quantity), all of which the caller
 * checked are free; total is the new hold's total (a rebooking offer keeps the old order's
 * total, so its difference is 0), expires at expires_at_ms. Emits the hold's records as a
 * hold request would (exchange_for included). Returns the hold's index. */
typedef struct exchange_offer {
    uint32_t order_index, event_index;
    const uint32_t *seats;
    uint32_t seat_count;
    const hf_item_t *pools;
    uint32_t pool_count;
    int64_t total;
    hf_time_ms_t expires_at_ms;
    const text_key_t *hold_id;
    /* An offer of another unit's order (a remote exchange hold): its id and user; order_index
     * is then unused. NULL for this core's order. */
    const char *elsewhere_id, *user_id;
} exchange_offer_t;
uint32_t exchange_offer_place(hf_core_t *core, const exchange_offer_t *offer, hf_time_ms_t now);

/* The order an exchange hold request names, for user_id: HF_ERROR_ORDER_NOT_FOUND,
 * HF_ERROR_NOT_OWNER or HF_ERROR_ORDER_NOT_ACTIVE, else HF_OK and its index. */
hf_error_t exchange_order_check(const hf_core_t *core, const char *order_id, const char *user_id,
                                uint32_t *order_index);
/* The old order of an exchange hold when it is on the hold's own event or calendar (the only
 * case where anything is kept), else NULL. */
const hf_order_t *exchange_old_order(const hf_core_t *core, const hf_hold_t *hold);
/* Whether the old order has the seat; the units of pool the old order has, at most
 * requested. */
bool exchange_seat_kept(const hf_core_t *core, const hf_order_t *old, uint32_t seat_index);
uint32_t exchange_pool_kept(const hf_core_t *core, const hf_order_t *old, uint32_t pool_index,
                            uint32_t requested);
/* The units of an event hold it keeps of its old order (0 for any other hold). */
uint32_t exchange_kept_units(const hf_core_t *core, const hf_hold_t *hold);
/* The units of an order on its event (seats, pool units). */
uint32_t exchange_order_units(const hf_core_t *core, const hf_order_t *order);
/* An exchange hold's commit, one step: the old order exchanged and what the new one does not
 * keep given back, the new order confirmed, and a refund of a negative difference (refund_key
 * NULL refuses one: HF_ERROR_INVALID_REQUEST). HF_ERROR_ORDER_NOT_ACTIVE when the old order is
 * no longer confirmed, HF_ERROR_INVALID_REQUEST when a positive difference has no
 * payment_ref: nothing changes then. The hold is held and its checks passed. */
hf_error_t exchange_commit(hf_core_t *core, uint32_t hold_index, const text_key_t *order_key,
                           const char *payment_ref, const text_key_t *refund_key,
                           const char *user_id, hf_time_ms_t now, uint32_t *order_index);
/* Restore: an exchange hold waits for its old order (orders are loaded after holds), a held
 * event hold to know what it keeps; exchange_restore_wait parks it (take: a held event hold,
 * which has taken nothing yet), and exchange_restore_link, called as each order is restored,
 * links the holds parked on it and takes what they hold. */
void exchange_restore_wait(hf_core_t *core, uint32_t hold_index, const char *order_id, bool take);
void exchange_restore_link(hf_core_t *core, const char *order_id, uint32_t order_index);
/* A forgotten ended hold of an event that was an exchange hold (order_id its old order):
 * the seats it kept get back what restore counted for them, now or when that order comes. */
void exchange_restore_forgotten(hf_core_t *core, const char *order_id, uint32_t event_index,
                                const uint32_t *seats, uint32_t seat_count);
/* Versions are not stored (restore.c counts each hold's and order's changes of its seats): an
 * exchange hold changes none of the seats it keeps, so once its old order is known, restore
 * takes back what it counted for them (held: 1, ended: RESTORE_ENDED_HOLD_SEAT_CHANGES). */
void exchange_restore_versions(hf_core_t *core, uint32_t hold_index);
/* A hold changed each of its seats once when made, and once more when it ended (released,
 * expired, or sold by its commit). */
#define RESTORE_ENDED_HOLD_SEAT_CHANGES 2u
/* A restored order's links (restore.c, for calendar/ too): the order it replaces and the one
 * that replaced it (ids, or NULL), and the holds waiting for it. */
void exchange_restore_orders(hf_core_t *core, const char *replaces, const char *replaced_by,
                             uint32_t index);
void exchange_free(hf_core_t *core);
/* Order locks (exchange/lock.c, core/locks.h): whether an exchange hold of another unit locks
 * the order (its cancel and local exchanges are then refused), and their table's end. */
bool exchange_order_locked(const hf_core_t *core, uint32_t order_index);
/* Whether the order at new_index replaces an order still confirmed and locked by the new
 * order's own hold, committed: an exchange across owners between its decision and its finish,
 * the one state in which both read confirmed (hf_core_check allows it). */
bool exchange_decided_unfinished(const hf_core_t *core, uint32_t new_index);
void exchange_locks_free(hf_core_t *core);
/* The old order of an exchange decided by another unit (its lock ended by the caller): status
 * exchanged, replaced by new_id (elsewhere), its record, and its inventory given back. */
void exchange_finish_remote(hf_core_t *core, uint32_t old_index, const char *new_id,
                            hf_time_ms_t now);
/* The remote exchange hold at hold_index (held) committed with old as locked for it: the hold
 * confirmed, the refund of a negative difference (refund_key, NULL: none owed), the new order
 * paid by payment_ref or else the old order's payment; user_id NULL when no user asked (a
 * webhook's). The new order's index. */
uint32_t remote_exchange_apply(hf_core_t *core, uint32_t hold_index, const text_key_t *order_key,
                               const text_key_t *refund_key, const char *payment_ref,
                               const struct hf_remote_order *old, const char *user_id,
                               hf_time_ms_t now);
/* The id of a remote exchange hold's old order (exchange/remote.c), NULL for any other. */
static inline const char *exchange_elsewhere_id(const hf_core_t *core, const hf_hold_t *hold) {
    return hold->exchange_elsewhere ? hf_core_string(core, hold->exchange_elsewhere - 1) : NULL;
}
/* The id of the order at index + 1 (an exchange's link), NULL for 0. */
static inline const char *exchange_order_id(const hf_core_t *core, uint32_t order_plus_one) {
    return order_plus_one ? core->orders.slots[order_plus_one - 1].id : NULL;
}

/* ---- allocation/: what the other files of the core call (API.md section 14) ---- */

/* Set in an event's seat_allocation entry once the seat was released from its allocation
 * while held or sold: it comes free for the public. */
#define ALLOCATION_RELEASED 0x80000000u

void allocations_free(hf_core_t *core);
/* An event laid out again (event_update.c): its allocations and per-seat entries pass from the
 * old layout's tables to the new one's, every seat index moved as moved says. */
void allocations_move(hf_core_t *core, hf_event_t *old, hf_event_t *event, const uint32_t *moved);
/* The id of the allocation at index + 1, NULL for 0. */
const char *allocation_id_of(const hf_core_t *core, uint32_t allocation);
/* seat_set's share for a seat with an allocation entry: counts the move in its allocation and
 * returns the status the seat really takes. A seat coming free (to available) goes back to
 * its allocation (allocated), or, released meanwhile, leaves it and comes free for the public
 * (report false: a commit's step from held to sold, which frees nothing). */
uint8_t allocation_seat_moved(hf_core_t *core, hf_event_t *event, uint32_t seat_index, uint8_t from,
                              uint8_t to, hf_time_ms_t now, bool report);
/* pool_move's share for an allocation's units, before the pool's counts are reported. */
void allocation_pool_moved(hf_core_t *core, hf_event_t *event, uint32_t allocation,
                           const hf_item_t *item, int64_t held, int64_t sold, hf_time_ms_t now,
                           bool report);
/* The allocation a hold or booking request names, into core->scratch.allocation (0 when it
 * names none): HF_ERROR_ALLOCATION_NOT_FOUND when the event has no such allocation. */
hf_error_t allocation_resolve(hf_core_t *core, uint32_t event_index,
                              const hf_hold_request_t *request);
/* The rows the seats of the allocation (index + 1) are in: what its best_available reads. */
void allocation_rows(const hf_core_t *core, uint32_t allocation, uint32_t *first, uint32_t *last);
/* The units of a pool free for the request being checked: the allocation's own free units,
 * or the public's. */
int64_t allocation_pool_free(const hf_core_t *core, const hf_event_t *event, uint32_t pool_index,
                             uint32_t allocation);

/* Whether a seat is free for a request of the allocation (index + 1; 0: the public): the
 * public takes available seats, an allocation's request only its own allocated ones. */
static inline bool seat_free_for(const hf_event_t *event, uint32_t seat_index,
                                 uint32_t allocation) {
    uint8_t status = event->seats[seat_index].status;
    if (allocation == 0) return status == HF_SEAT_AVAILABLE;
    const uint32_t *membership = ((const event_tables_t *)event->internal)->seat_allocation;
    return status == HF_SEAT_ALLOCATED && membership &&
           (membership[seat_index] & ~ALLOCATION_RELEASED) == allocation;
}
/* ---- job/: cancel jobs ---- */

void jobs_free(hf_core_t *core);
/* hf_core_restore_finish's share: restored offers linked to their holds loaded since. */
void jobs_restore_finish(hf_core_t *core);
/* An exchange hold ended (hold.c): when it was a job's offer, its commit accepts the offer and
 * its release or lapse refunds the old order (job/offer.c). */
void job_offer_settle(hf_core_t *core, uint32_t hold_index, uint8_t status, hf_time_ms_t at);
/* A remote exchange hold ended (hold.c): when it is an offer of another unit's order (its id
 * its order's offer id), a release or lapse is queued for that order's job (job/remote.c). */
void job_offer_elsewhere_ended(hf_core_t *core, uint32_t hold_index, uint8_t status);
/* For the locks (exchange/lock.c): whether hold_id is the open offer, placed on another unit,
 * of the order of a cancelled event; and that offer accepted, once its exchange finished. */
bool job_offer_remote_open(const hf_core_t *core, uint32_t order_index, const char *hold_id);
void job_offer_remote_accepted(hf_core_t *core, uint32_t order_index, hf_time_ms_t now);
/* ---- waitlist/: entries that take inventory as it comes free ---- */

/* The one entry point for inventory that came free on an event (a hold released or lapsed,
 * an order cancelled, an allocation released): the seats (items[0, seat_count)) and pool
 * lines after them. It only marks their section, "any section" and pools; waitlist_settle,
 * which a command runs once it has freed everything, offers them down the line in the same
 * command (the same durable step). Nothing happens for an event without waiting entries. */
void waitlist_came_free(hf_core_t *core, uint32_t event, const hf_item_t *items,
                        uint32_t seat_count, uint32_t pool_count);
/* Offers what came free to the first fillable entries, down the line (holds of their users,
 * TTL offer_ttl_s). A no-op when nothing came free, and when called from within itself. */
void waitlist_settle(hf_core_t *core, hf_time_ms_t now);
/* A hold on an event ended (hold_finish): an offer's entry is fulfilled (confirmed) or
 * lapsed, and what a released or expired hold held came free (waitlist_came_free). */
void waitlist_hold_freed(hf_core_t *core, uint32_t hold_index, uint8_t status, hf_time_ms_t at);
/* The event is being cancelled (the cancel's command, before its held holds are released):
 * every waiting and offered entry becomes cancelled, so no offer is made on a closed event
 * and an offer's release does not read as a lapse. */
void waitlist_event_cancelled(hf_core_t *core, uint32_t event, hf_time_ms_t now);
void waitlist_free(hf_core_t *core);
/* The waitlists' invariants (hf_core_check), NULL when they hold: an offered entry's hold is
 * held, its user's and is its offer; every other hold an entry names is not held; positions
 * count the waiting entries. */
const char *waitlist_check(const hf_core_t *core);
/* Whether the record of a seat (target 1 + its section, index its seat) or a pool's counts
 * (target 1 + sections + pool, index the pool) just freed waits for waitlist_settle, which
 * tells it as the step left it: true when a waiting entry may take it. */
bool waitlist_defer(hf_core_t *core, const hf_event_t *event, uint32_t target, uint32_t index);

/* ---- core.c: time ---- */

/* Whether a timer entry, of whatever kind, no longer matters, as its kind's row says (for
 * hf_timer_prune after a change, so the top is always a live deadline). */
bool timer_entry_stale(const void *core, const hf_timer_entry_t *entry);

/* A command's time: never before the core's (the last hf_core_advance). The caller advances
 * the core to a request's time once, before its commands (the engine's dispatcher does), so
 * no command advances and none sees a passed deadline as pending. */
static inline void command_at(const hf_core_t *core, hf_time_ms_t now) {
    assert(now >= core->now);
    (void)core;
    (void)now;
}

/* ---- restore.c: state loaded back from the store ---- */

/* What restore and revive share (see restore.c). */
hf_error_t stored_hold_place(hf_core_t *core, const hf_stored_hold_t *stored, uint32_t *index);

#endif
