/* The state machine (see core.h). Tables grow by doubling, so a command allocates nothing
 * once the tables have reached the working size; an event's seats are allocated once, when
 * the event is created. Hold slots are reused once their holds are forgotten
 * (hf_core_evict), so the hold tables stop growing at the working size too. */
#include "core/core.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/best.h"
#include "core/timer.h"
#include "lib/json.h"
#include "lib/map.h"

/* A growable array of uint32 (a user's orders). */
typedef struct index_list {
    uint32_t *items;
    uint32_t count, capacity;
} index_list_t;

/* What one user has on one event: for max_seats_per_user and replace_existing. */
typedef struct event_user {
    uint32_t held_units, sold_units;
    /* The user's held holds on the event, oldest first: a list threaded through
     * core->hold_links, so a hold joins and leaves it without allocating (an array per user
     * was one malloc per new buyer). Hold index + 1; 0 marks none. */
    uint32_t first_active, last_active;
} event_user_t;

/* What the core keeps of a hold besides hf_hold_t. */
typedef struct hold_state {
    /* The hold's neighbours in its owner's list of held holds: hold index + 1, 0 marks none. */
    uint32_t previous_active, next_active;
    /* The next hold in the list of finished holds (oldest first) or, for a forgotten hold, in
     * the list of free slots: hold index + 1, 0 marks none. */
    uint32_t next_finished;
    /* Items reserved at the hold's item_offset: a reused slot keeps its items when the new
     * hold needs no more. */
    uint32_t item_capacity;
    /* core->change_count once the hold's newest record was emitted: its creation, an
     * extension, its end or its commit (0 for a restored or revived hold, which the store
     * already has). The store has the hold as the core shows it once it has that record; for
     * a released or expired hold it is the end's record, which forgetting waits for. */
    uint64_t last_change;
} hold_state_t;

/* A user's id bytes kept in the user's record: an id this short is compared without reading
 * the copy in core->strings, which was one more cache miss per command on a large crowd. */
#define USER_NAME_INLINE 16u

/* 64 bytes: a lookup reads one cache line of the record for the id's check and the counts. */
typedef struct user {
    uint32_t name;               /* the id in core->strings, NUL-terminated */
    uint32_t name_length;
    char name_start[USER_NAME_INLINE]; /* its first bytes (zero-filled when shorter) */
    /* The user's record on the first event the user held or bought on (event index + 1; 0
     * while there is none) lives here, beside the id's offset: most buyers touch one event,
     * and a lookup in core->event_user_ids was a cache miss per command on a large crowd.
     * Records on further events are in core->event_users. */
    uint32_t first_event;
    event_user_t first_event_record;
    /* The user's orders, oldest first. The first is kept here while it is the only one, so a
     * buyer with one order (most of them) costs no allocation; from the second on, all of them
     * are in orders.items. orders.count counts them in both cases. */
    uint32_t first_order;
    index_list_t orders;
} user_t;
_Static_assert(sizeof(user_t) == 64, "a user's record is one cache line");

/* Private lookup tables of one event. */
typedef struct event_tables {
    hf_map_t sections, pools;
    hf_map_t rows;               /* "SECTION-ROW" -> row index */
    /* Row r's seat ids begin with "SECTION-ROW-": bytes row_prefix_offsets[r] up to
     * row_prefix_offsets[r + 1] of row_prefixes. Every seat change reports its seat's id, so
     * the id is one copy and a number, not two strlen and three copies. */
    hf_buffer_t row_prefixes;
    uint32_t *row_prefix_offsets; /* row_count + 1 entries */
    /* Per seat: the number (hf_core_change_count) of the last change its availability rests
     * on, 0 for what was loaded from the store. A change reported with a seat runs after its
     * operation's first record, so the number is one of that operation's records and is
     * durable with them. */
    uint64_t *seat_changes;
    /* The number of the event's creation record (0 for an event loaded from the store): a
     * read of a seat no change has touched rests on it. */
    uint64_t created_change;
} event_tables_t;

/* The seat_changes array of an event (see event_tables_t). */
static uint64_t *seat_changes_of(const hf_event_t *event) {
    return ((event_tables_t *)event->internal)->seat_changes;
}

struct hf_core {
    hf_mutation_sink_t sink;
    bool stream_records;         /* emit seat and pool records (hf_core_set_stream_records) */
    hf_event_t **events;
    uint32_t event_count, event_capacity;
    hf_map_t event_ids;

    hf_hold_t *holds;
    uint32_t hold_count, hold_capacity, holds_active;
    hold_state_t *hold_states;   /* one per hold */
    uint32_t hold_state_capacity;
    hf_index_map_t hold_ids;     /* a hold's id -> its index; the id lives in the hold */
    /* Entries of hold_ids left by forgotten holds. They are not removed one by one: finding
     * each one is a cache miss per forgotten hold. They never match (the slot's id is gone or
     * another), and the index is rebuilt once they are half of it. */
    uint32_t hold_ids_stale;
    /* Released and expired holds in the order they finished (hold index + 1, 0 marks none),
     * and the slots of forgotten holds, ready for reuse. */
    uint32_t finished_first, finished_last, finished_count, finished_max;
    uint32_t free_first;
    uint64_t change_count;       /* mutation records emitted */

    hf_order_t *orders;
    uint32_t order_count, order_capacity;
    hf_index_map_t order_ids;    /* an order's id -> its index; the id lives in the order */

    user_t *users;
    uint32_t user_count, user_capacity;
    hf_index_map_t user_ids;     /* a user's id -> its index; the id is in the user's record */
    /* Users' records on events other than their first (see user_t). */
    event_user_t *event_users;
    uint32_t event_user_count, event_user_capacity;
    hf_pair_map_t event_user_ids; /* (event index, user index) -> event_user index */

    hf_item_t *items;
    uint32_t item_count, item_capacity;
    char *strings;
    uint32_t strings_length, strings_capacity;

    /* Deadlines of held holds (HF_TIMER_HOLD). An extension pushes a new entry and leaves the
     * old one behind, as do releases and commits: such entries are dropped lazily. */
    hf_timer_t timer;

    /* Scratch space of one command. */
    uint32_t scratch_seats[HF_HOLD_ITEMS_MAX];
    uint32_t scratch_seat_count;     /* requested seats, then the best_available picks */
    uint32_t scratch_sorted[HF_HOLD_ITEMS_MAX]; /* the requested seats, sorted */
    uint32_t scratch_pools[HF_HOLD_ITEMS_MAX];
    hf_buffer_t text;
};

#define NO_STRING UINT32_MAX
#define NO_INDEX UINT32_MAX
/* A user's record on an event is named by a handle, which holds and orders keep (owner): the
 * user's index for the record in user_t, or an index into core->event_users with this bit. */
#define OWNER_IN_TABLE 0x80000000u

/* Lists up to this long are sorted by insertion: quadratic, but cheaper than qsort's calls
 * while short. */
#define SMALL_SORT_MAX 16u

/* A string key with its length and hash, worked out once per command: a command that looks
 * an id up and then inserts it (a new hold, a new user) hashes it once. */
typedef struct text_key {
    const char *text;
    size_t length;
    uint32_t hash;
} text_key_t;

static text_key_t text_key_of(const char *text, size_t length) {
    return (text_key_t){text, length, hf_map_hash(text, length)};
}

/* The user a command names: the id's key, and the user's index, or NO_INDEX for a user who
 * has never held anything yet. */
typedef struct user_ref {
    text_key_t key;
    uint32_t index;
} user_ref_t;

/* ---- small containers ---- */

static void *grow(void *array, uint32_t *capacity, uint32_t needed, size_t element_size) {
    if (needed <= *capacity) return array;
    uint32_t new_capacity = *capacity ? *capacity : 16;
    while (new_capacity < needed) new_capacity *= 2;
    void *grown = realloc(array, (size_t)new_capacity * element_size);
    if (!grown) abort(); /* out of memory: nothing sensible to answer */
    *capacity = new_capacity;
    return grown;
}

static void list_push(index_list_t *list, uint32_t value) {
    list->items = grow(list->items, &list->capacity, list->count + 1, sizeof *list->items);
    list->items[list->count++] = value;
}

/* Appends a hold to its owner's list of held holds. */
static void active_push(hf_core_t *core, event_user_t *owner, uint32_t hold_index) {
    hold_state_t *state = &core->hold_states[hold_index];
    state->previous_active = owner->last_active;
    state->next_active = 0;
    if (owner->last_active) core->hold_states[owner->last_active - 1].next_active = hold_index + 1;
    else owner->first_active = hold_index + 1;
    owner->last_active = hold_index + 1;
}

/* Takes a hold out of its owner's list of held holds. */
static void active_remove(hf_core_t *core, event_user_t *owner, uint32_t hold_index) {
    const hold_state_t *state = &core->hold_states[hold_index];
    uint32_t previous = state->previous_active, next = state->next_active;
    if (previous) core->hold_states[previous - 1].next_active = next;
    else owner->first_active = next;
    if (next) core->hold_states[next - 1].previous_active = previous;
    else owner->last_active = previous;
}

static void user_order_push(user_t *user, uint32_t order) {
    index_list_t *orders = &user->orders;
    if (orders->count == 0) {
        user->first_order = order;
        orders->count = 1;
        return;
    }
    if (orders->count == 1) { /* the second order: both move to the array */
        orders->count = 0;
        list_push(orders, user->first_order);
    }
    list_push(orders, order);
}

static uint32_t string_store(hf_core_t *core, const char *text, size_t text_length) {
    if (!text) return NO_STRING;
    uint32_t length = (uint32_t)text_length;
    core->strings = grow(core->strings, &core->strings_capacity, core->strings_length + length + 1, 1);
    uint32_t offset = core->strings_length;
    memcpy(core->strings + offset, text, length + 1);
    core->strings_length += length + 1;
    return offset;
}

/* ---- errors ---- */

const char *hf_error_code(hf_error_t error) {
    switch (error) {
    case HF_OK: return "ok";
    case HF_ERROR_INVALID_REQUEST: return "invalid_request";
    case HF_ERROR_EVENT_EXISTS: return "event_exists";
    case HF_ERROR_EVENT_NOT_FOUND: return "event_not_found";
    case HF_ERROR_SEAT_NOT_FOUND: return "seat_not_found";
    case HF_ERROR_SEATS_UNAVAILABLE: return "seats_unavailable";
    case HF_ERROR_POOL_NOT_FOUND: return "pool_not_found";
    case HF_ERROR_INSUFFICIENT_QUANTITY: return "insufficient_quantity";
    case HF_ERROR_USER_LIMIT_EXCEEDED: return "user_limit_exceeded";
    case HF_ERROR_HOLD_NOT_FOUND: return "hold_not_found";
    case HF_ERROR_NOT_OWNER: return "not_owner";
    case HF_ERROR_HOLD_EXPIRED: return "hold_expired";
    case HF_ERROR_HOLD_NOT_ACTIVE: return "hold_not_active";
    case HF_ERROR_ALREADY_CONFIRMED: return "already_confirmed";
    case HF_ERROR_HOLD_RELEASED: return "hold_released";
    case HF_ERROR_ORDER_NOT_FOUND: return "order_not_found";
    case HF_ERROR_CAPACITY: return "capacity_exceeded";
    case HF_ERROR_SECTION_NOT_FOUND: return "section_not_found";
    case HF_ERROR_VERSION_CONFLICT: return "version_conflict";
    }
    return "internal";
}

static const char *const SEAT_STATUS_NAMES[] = {"available", "held", "sold"};
static const char *const HOLD_STATUS_NAMES[] = {"held", "confirmed", "released", "expired"};

const char *hf_seat_status_name(uint8_t status) {
    assert(status <= HF_SEAT_SOLD);
    return SEAT_STATUS_NAMES[status];
}

const char *hf_hold_status_name(uint8_t status) {
    assert(status <= HF_HOLD_EXPIRED);
    return HOLD_STATUS_NAMES[status];
}

bool hf_seat_status_parse(const char *text, uint8_t *status) {
    for (int i = 0; i <= HF_SEAT_SOLD; i++) {
        if (strcmp(text, SEAT_STATUS_NAMES[i]) != 0) continue;
        *status = (uint8_t)i;
        return true;
    }
    return false;
}

int hf_error_status(hf_error_t error) {
    switch (error) {
    case HF_OK: return 200;
    case HF_ERROR_INVALID_REQUEST: return 400;
    case HF_ERROR_NOT_OWNER: return 403;
    case HF_ERROR_EVENT_NOT_FOUND:
    case HF_ERROR_SEAT_NOT_FOUND:
    case HF_ERROR_POOL_NOT_FOUND:
    case HF_ERROR_HOLD_NOT_FOUND:
    case HF_ERROR_ORDER_NOT_FOUND:
    case HF_ERROR_SECTION_NOT_FOUND: return 404;
    case HF_ERROR_HOLD_EXPIRED: return 410;
    case HF_ERROR_USER_LIMIT_EXCEEDED: return 429;
    case HF_ERROR_CAPACITY: return 503;
    default: return 409;
    }
}

/* A 400 naming the member at fault; with a reason, the answer says what is wrong with it. */
static hf_error_t invalid_because(hf_error_detail_t *detail, const char *field, const char *reason) {
    if (detail) {
        detail->field = field;
        detail->reason = reason;
    }
    return HF_ERROR_INVALID_REQUEST;
}

static hf_error_t invalid(hf_error_detail_t *detail, const char *field) {
    return invalid_because(detail, field, NULL);
}

/* ---- lifecycle ---- */

hf_core_t *hf_core_create(hf_mutation_sink_t sink) {
    hf_core_t *core = calloc(1, sizeof *core);
    if (!core) abort();
    core->sink = sink;
    core->stream_records = true;
    core->finished_max = HF_FINISHED_HOLDS_MAX;
    return core;
}

static void event_free(hf_event_t *event) {
    event_tables_t *tables = event->internal;
    hf_map_free(&tables->sections);
    hf_map_free(&tables->pools);
    hf_map_free(&tables->rows);
    hf_buffer_free(&tables->row_prefixes);
    free(tables->row_prefix_offsets);
    free(tables->seat_changes);
    free(tables);
    free(event->sections);
    free(event->rows);
    free(event->seats);
    free(event->pools);
    free(event);
}

void hf_core_destroy(hf_core_t *core) {
    if (!core) return;
    for (uint32_t i = 0; i < core->event_count; i++) event_free(core->events[i]);
    for (uint32_t i = 0; i < core->user_count; i++) free(core->users[i].orders.items);
    free(core->events);
    free(core->holds);
    free(core->hold_states);
    free(core->orders);
    free(core->users);
    free(core->event_users);
    free(core->items);
    free(core->strings);
    hf_timer_free(&core->timer);
    hf_map_free(&core->event_ids);
    hf_index_map_free(&core->hold_ids);
    hf_index_map_free(&core->order_ids);
    hf_index_map_free(&core->user_ids);
    hf_pair_map_free(&core->event_user_ids);
    hf_buffer_free(&core->text);
    free(core);
}

void hf_core_set_sink(hf_core_t *core, hf_mutation_sink_t sink) { core->sink = sink; }

void hf_core_set_stream_records(hf_core_t *core, bool wanted) { core->stream_records = wanted; }

static void emit(hf_core_t *core, const hf_mutation_t *mutation) {
    core->change_count++;
    if (core->sink.emit) core->sink.emit(core->sink.context, mutation);
}

/* ---- lookups ---- */

uint32_t hf_core_event_count(const hf_core_t *core) { return core->event_count; }

const hf_event_t *hf_core_event_at(const hf_core_t *core, uint32_t index) {
    return index < core->event_count ? core->events[index] : NULL;
}

const hf_event_t *hf_core_event(const hf_core_t *core, const char *event_id, uint32_t *index) {
    uint32_t found;
    if (!event_id || !hf_map_get(&core->event_ids, event_id, strlen(event_id), &found))
        return NULL;
    if (index) *index = found;
    return core->events[found];
}

/* Parses a canonical seat number: digits, no leading zero, from 1. */
static bool parse_number(const char *text, uint32_t *number) {
    if (*text < '1' || *text > '9') return false;
    uint64_t value = 0;
    for (; *text; text++) {
        if (*text < '0' || *text > '9') return false;
        value = value * 10 + (uint64_t)(*text - '0');
        if (value > HF_EVENT_SEATS_MAX) return false;
    }
    *number = (uint32_t)value;
    return true;
}

bool hf_core_seat_find(const hf_event_t *event, const char *seat_id, uint32_t *seat_index) {
    const event_tables_t *tables = event->internal;
    /* Ids cannot contain '-', so the first dash ends the section and the second the row. */
    const char *first = strchr(seat_id, '-');
    if (!first) return false;
    const char *second = strchr(first + 1, '-');
    if (!second) return false;
    uint32_t row_index, number;
    if (!hf_map_get(&tables->rows, seat_id, (size_t)(second - seat_id), &row_index)) return false;
    if (!parse_number(second + 1, &number)) return false;
    const hf_row_t *row = &event->rows[row_index];
    if (number > row->seat_count) return false;
    *seat_index = row->first_seat + number - 1;
    return true;
}

uint32_t hf_core_seat_row(const hf_event_t *event, uint32_t seat_index) {
    return event->seats[seat_index].row;
}

/* Writes value in decimal at out; returns the digits written. snprintf was a third of a
 * hold's cost: ids are formatted for every seat change. */
static size_t write_decimal(char *out, uint32_t value) {
    char digits[10];
    size_t count = 0;
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    for (size_t i = 0; i < count; i++) out[i] = digits[count - 1 - i];
    return count;
}

/* Writes the id of a seat of row row_index at out (HF_SEAT_ID_SIZE_MAX + 1 bytes), NUL
 * included; returns its length. */
static size_t seat_id_write(const hf_event_t *event, uint32_t row_index, uint32_t seat_index,
                            char *out) {
    const event_tables_t *tables = event->internal;
    uint32_t start = tables->row_prefix_offsets[row_index];
    size_t length = tables->row_prefix_offsets[row_index + 1] - start;
    memcpy(out, tables->row_prefixes.data + start, length);
    length += write_decimal(out + length, seat_index - event->rows[row_index].first_seat + 1);
    out[length] = '\0';
    return length;
}

void hf_core_seat_id(const hf_event_t *event, uint32_t seat_index, char *out) {
    seat_id_write(event, hf_core_seat_row(event, seat_index), seat_index, out);
}

int32_t hf_core_pool_find(const hf_event_t *event, const char *pool_id) {
    const event_tables_t *tables = event->internal;
    uint32_t index;
    if (!hf_map_get(&tables->pools, pool_id, strlen(pool_id), &index)) return -1;
    return (int32_t)index;
}

/* A hold or order id being looked up in core->hold_ids or core->order_ids, which keep no
 * keys: a candidate matches when the hold or order at its index has this id. */
typedef struct record_key {
    const hf_core_t *core;
    text_key_t id;
} record_key_t;

/* True when a record's id field holds exactly the key's id. */
static bool id_field_equal(const char *field, const text_key_t *id) {
    return memcmp(field, id->text, id->length) == 0 && field[id->length] == '\0';
}

static bool hold_key_match(const void *context, uint32_t index) {
    const record_key_t *key = context;
    return id_field_equal(key->core->holds[index].id, &key->id);
}

static bool order_key_match(const void *context, uint32_t index) {
    const record_key_t *key = context;
    return id_field_equal(key->core->orders[index].id, &key->id);
}

/* Longer ids are never stored (server_id_copy cuts them): they are not compared past the
 * field. */
static bool hold_index_find(const hf_core_t *core, const text_key_t *id, uint32_t *index) {
    if (id->length > HF_SERVER_ID_SIZE) return false;
    record_key_t key = {core, *id};
    return hf_index_map_find(&core->hold_ids, id->hash, hold_key_match, &key, index);
}

static bool order_index_find(const hf_core_t *core, const text_key_t *id, uint32_t *index) {
    if (id->length > HF_SERVER_ID_SIZE) return false;
    record_key_t key = {core, *id};
    return hf_index_map_find(&core->order_ids, id->hash, order_key_match, &key, index);
}

const hf_hold_t *hf_core_hold_find(const hf_core_t *core, const char *hold_id, uint32_t *index) {
    uint32_t found;
    if (!hold_id) return NULL;
    text_key_t key = text_key_of(hold_id, strlen(hold_id));
    if (!hold_index_find(core, &key, &found)) return NULL;
    if (index) *index = found;
    return &core->holds[found];
}

const hf_hold_t *hf_core_hold_at(const hf_core_t *core, uint32_t index) {
    if (index >= core->hold_count || core->holds[index].status == HF_HOLD_EVICTED) return NULL;
    return &core->holds[index];
}

const hf_order_t *hf_core_order_find(const hf_core_t *core, const char *order_id,
                                     uint32_t *index) {
    uint32_t found;
    if (!order_id) return NULL;
    text_key_t key = text_key_of(order_id, strlen(order_id));
    if (!order_index_find(core, &key, &found)) return NULL;
    if (index) *index = found;
    return &core->orders[found];
}

const hf_order_t *hf_core_order_at(const hf_core_t *core, uint32_t index) {
    return index < core->order_count ? &core->orders[index] : NULL;
}

const hf_item_t *hf_core_items(const hf_core_t *core, uint32_t item_offset) {
    return core->items + item_offset;
}

const char *hf_core_user_id(const hf_core_t *core, uint32_t user_index) {
    return core->strings + core->users[user_index].name;
}

const char *hf_core_string(const hf_core_t *core, uint32_t offset) {
    return offset == NO_STRING ? NULL : core->strings + offset;
}

/* A user id being looked up in core->user_ids, which keeps no keys: a candidate matches when
 * the user at its index has this id. */
typedef struct user_key {
    const hf_core_t *core;
    const text_key_t *id;
} user_key_t;

static bool user_key_match(const void *context, uint32_t index) {
    const user_key_t *key = context;
    const user_t *user = &key->core->users[index];
    size_t length = key->id->length;
    if (user->name_length != length) return false;
    size_t start = length < USER_NAME_INLINE ? length : USER_NAME_INLINE;
    if (memcmp(user->name_start, key->id->text, start) != 0) return false;
    const char *rest = key->core->strings + user->name + start;
    return length == start || memcmp(rest, key->id->text + start, length - start) == 0;
}

static bool user_index_find(const hf_core_t *core, const text_key_t *id, uint32_t *index) {
    user_key_t key = {core, id};
    return hf_index_map_find(&core->user_ids, id->hash, user_key_match, &key, index);
}

static bool user_find(const hf_core_t *core, const char *user_id, uint32_t *index) {
    if (!user_id) return false;
    text_key_t key = text_key_of(user_id, strlen(user_id));
    return user_index_find(core, &key, index);
}

const uint32_t *hf_core_user_orders(const hf_core_t *core, const char *user_id,
                                    uint32_t *count) {
    uint32_t index;
    *count = 0;
    if (!user_find(core, user_id, &index)) return NULL;
    const user_t *user = &core->users[index];
    *count = user->orders.count;
    return user->orders.count == 1 ? &user->first_order : user->orders.items;
}

uint32_t hf_core_holds_active(const hf_core_t *core) { return core->holds_active; }

/* Looks the user of a command up once, by the key of its id. */
static user_ref_t user_ref_find(const hf_core_t *core, const text_key_t *key) {
    user_ref_t user = {*key, NO_INDEX};
    uint32_t index;
    if (user_index_find(core, key, &index)) user.index = index;
    return user;
}

/* The same by the id itself; user_id must not be NULL. */
static user_ref_t user_ref_of(const hf_core_t *core, const char *user_id) {
    text_key_t key = text_key_of(user_id, strlen(user_id));
    return user_ref_find(core, &key);
}

/* The user's index, the user made when new. */
static uint32_t user_intern(hf_core_t *core, user_ref_t *user) {
    if (user->index != NO_INDEX) return user->index;
    core->users = grow(core->users, &core->user_capacity, core->user_count + 1, sizeof *core->users);
    uint32_t index = core->user_count++;
    assert(index < OWNER_IN_TABLE); /* user indexes are record handles too */
    user_t *record = &core->users[index];
    memset(record, 0, sizeof *record);
    record->name = string_store(core, user->key.text, user->key.length);
    record->name_length = (uint32_t)user->key.length;
    memcpy(record->name_start, user->key.text,
           user->key.length < USER_NAME_INLINE ? user->key.length : USER_NAME_INLINE);
    hf_index_map_insert(&core->user_ids, user->key.hash, index);
    user->index = index;
    return index;
}

static uint32_t user_intern_id(hf_core_t *core, const char *user_id) {
    user_ref_t user = user_ref_of(core, user_id);
    return user_intern(core, &user);
}

/* True when the user at user_index has this id: read from the user's record, which the
 * command that made the hold has just read too. */
static bool user_has_id(const hf_core_t *core, uint32_t user_index, const char *user_id) {
    text_key_t id = {user_id, strlen(user_id), 0};
    user_key_t key = {core, &id};
    return user_key_match(&key, user_index);
}

static event_user_t *owner_record(hf_core_t *core, uint32_t handle) {
    if (handle & OWNER_IN_TABLE) return &core->event_users[handle & ~OWNER_IN_TABLE];
    return &core->users[handle].first_event_record;
}

/* The handle of the user's record on the event, or NO_INDEX when the user (NO_INDEX: not
 * known at all) has none yet. */
static uint32_t event_user_handle(const hf_core_t *core, uint32_t event, uint32_t user) {
    if (user == NO_INDEX) return NO_INDEX;
    const user_t *record = &core->users[user];
    if (record->first_event == event + 1) return user;
    uint32_t index;
    if (record->first_event == 0 || !hf_pair_map_get(&core->event_user_ids, event, user, &index))
        return NO_INDEX;
    return index | OWNER_IN_TABLE;
}

/* The user's record on the event (borrowed until the next user or record is made), or NULL. */
static event_user_t *event_user_find(hf_core_t *core, uint32_t event, uint32_t user) {
    uint32_t handle = event_user_handle(core, event, user);
    return handle == NO_INDEX ? NULL : owner_record(core, handle);
}

/* The handle of the user's record on the event, made when missing. */
static uint32_t event_user_intern(hf_core_t *core, uint32_t event, uint32_t user) {
    uint32_t handle = event_user_handle(core, event, user);
    if (handle != NO_INDEX) return handle;
    user_t *record = &core->users[user];
    if (record->first_event == 0) {
        record->first_event = event + 1;
        memset(&record->first_event_record, 0, sizeof record->first_event_record);
        return user;
    }
    core->event_users = grow(core->event_users, &core->event_user_capacity,
                             core->event_user_count + 1, sizeof *core->event_users);
    uint32_t index = core->event_user_count++;
    assert(index < OWNER_IN_TABLE);
    memset(&core->event_users[index], 0, sizeof core->event_users[index]);
    hf_pair_map_put(&core->event_user_ids, event, user, index);
    return index | OWNER_IN_TABLE;
}

/* ---- events ---- */

bool hf_core_id_valid(const char *id) {
    size_t length = strlen(id);
    if (length == 0 || length > HF_ID_SIZE_MAX) return false;
    for (size_t i = 0; i < length; i++) {
        char c = id[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.';
        if (!ok) return false;
    }
    return true;
}

static hf_error_t check_sections(const hf_event_definition_t *definition, uint64_t *seats,
                                 uint64_t *rows, hf_error_detail_t *detail) {
    *seats = 0;
    *rows = 0;
    if (definition->section_count > HF_EVENT_SECTIONS_MAX) return invalid(detail, "sections");
    for (uint32_t s = 0; s < definition->section_count; s++) {
        const hf_section_definition_t *section = &definition->sections[s];
        if (!hf_core_id_valid(section->id)) return invalid(detail, "sections");
        if (section->price < 0 || section->price > HF_PRICE_MAX) return invalid(detail, "sections");
        if (section->row_count == 0 || section->row_count > HF_SECTION_ROWS_MAX)
            return invalid(detail, "sections");
        for (uint32_t other = 0; other < s; other++)
            if (strcmp(definition->sections[other].id, section->id) == 0)
                return invalid_because(detail, "sections", "two sections have the same id");
        for (uint32_t r = 0; r < section->row_count; r++) {
            const hf_row_definition_t *row = &section->rows[r];
            if (!hf_core_id_valid(row->id) || row->seats == 0 || row->seats > HF_EVENT_SEATS_MAX)
                return invalid(detail, "sections");
            for (uint32_t other = 0; other < r; other++)
                if (strcmp(section->rows[other].id, row->id) == 0)
                    return invalid_because(detail, "sections",
                                           "two rows of a section have the same id");
            *seats += row->seats;
        }
        *rows += section->row_count;
    }
    if (*seats > HF_EVENT_SEATS_MAX || *rows > HF_EVENT_ROWS_MAX)
        return invalid_because(detail, "sections", "more seats or rows than an event may have");
    return HF_OK;
}

static hf_error_t check_pools(const hf_event_definition_t *definition, hf_error_detail_t *detail) {
    if (definition->pool_count > HF_EVENT_POOLS_MAX) return invalid(detail, "pools");
    for (uint32_t p = 0; p < definition->pool_count; p++) {
        const hf_pool_definition_t *pool = &definition->pools[p];
        if (!hf_core_id_valid(pool->id)) return invalid(detail, "pools");
        if (pool->capacity < 0 || pool->capacity > HF_POOL_CAPACITY_MAX) return invalid(detail, "pools");
        if (pool->price < 0 || pool->price > HF_PRICE_MAX) return invalid(detail, "pools");
        for (uint32_t other = 0; other < p; other++)
            if (strcmp(definition->pools[other].id, pool->id) == 0)
                return invalid_because(detail, "pools", "two pools have the same id");
    }
    return HF_OK;
}

static hf_error_t check_definition(const hf_core_t *core, const hf_event_definition_t *definition,
                                   uint64_t *seats, uint64_t *rows, hf_error_detail_t *detail) {
    if (!hf_core_id_valid(definition->id)) return invalid(detail, "id");
    if (definition->hold_ttl_ms <= 0 || definition->hold_ttl_ms > HF_HOLD_TTL_MS_MAX)
        return invalid(detail, "hold_ttl_s");
    if (definition->max_hold_ms < definition->hold_ttl_ms || definition->max_hold_ms > HF_HOLD_TTL_MS_MAX)
        return invalid(detail, "max_hold_s");
    if (definition->max_seats_per_hold == 0 || definition->max_seats_per_hold > HF_HOLD_ITEMS_MAX)
        return invalid(detail, "max_seats_per_hold");
    hf_error_t error = check_sections(definition, seats, rows, detail);
    if (error) return error;
    error = check_pools(definition, detail);
    if (error) return error;
    if (*seats == 0 && definition->pool_count == 0)
        return invalid_because(detail, "sections", "an event needs at least one seat or pool");
    if (hf_core_event(core, definition->id, NULL)) return HF_ERROR_EVENT_EXISTS;
    if (core->event_count >= HF_EVENTS_MAX) return HF_ERROR_CAPACITY;
    return HF_OK;
}

static void build_layout(hf_event_t *event, const hf_event_definition_t *definition) {
    event_tables_t *tables = event->internal;
    uint32_t row_index = 0, seat_index = 0;
    char key[2 * HF_ID_SIZE_MAX + 2];
    for (uint32_t s = 0; s < definition->section_count; s++) {
        const hf_section_definition_t *source = &definition->sections[s];
        hf_section_t *section = &event->sections[s];
        memcpy(section->id, source->id, sizeof section->id);
        section->price = source->price;
        section->first_row = row_index;
        section->row_count = source->row_count;
        section->first_seat = seat_index;
        hf_map_put(&tables->sections, section->id, strlen(section->id), s);
        for (uint32_t r = 0; r < source->row_count; r++, row_index++) {
            hf_row_t *row = &event->rows[row_index];
            memcpy(row->id, source->rows[r].id, sizeof row->id);
            row->section = s;
            row->first_seat = seat_index;
            row->seat_count = source->rows[r].seats;
            row->available = row->seat_count;
            row->free_run_bound = row->seat_count;
            for (uint32_t n = 0; n < row->seat_count; n++)
                event->seats[seat_index + n].row = row_index;
            seat_index += row->seat_count;
            int length = snprintf(key, sizeof key, "%s-%s", section->id, row->id);
            hf_map_put(&tables->rows, key, (size_t)length, row_index);
            tables->row_prefix_offsets[row_index] = (uint32_t)tables->row_prefixes.length;
            hf_buffer_append(&tables->row_prefixes, key, (size_t)length);
            hf_buffer_append_char(&tables->row_prefixes, '-');
        }
        section->seat_count = seat_index - section->first_seat;
        section->counts.available = section->seat_count;
    }
    tables->row_prefix_offsets[row_index] = (uint32_t)tables->row_prefixes.length;
    for (uint32_t p = 0; p < definition->pool_count; p++) {
        hf_pool_t *pool = &event->pools[p];
        memcpy(pool->id, definition->pools[p].id, sizeof pool->id);
        pool->capacity = definition->pools[p].capacity;
        pool->price = definition->pools[p].price;
        hf_map_put(&tables->pools, pool->id, strlen(pool->id), p);
    }
}

static hf_event_t *event_allocate(const hf_event_definition_t *definition, uint64_t seats,
                                  uint64_t rows, hf_time_ms_t now) {
    hf_event_t *event = calloc(1, sizeof *event);
    event_tables_t *tables = calloc(1, sizeof *tables);
    if (!event || !tables) abort();
    memcpy(event->id, definition->id, sizeof event->id);
    memcpy(event->name, definition->name, sizeof event->name);
    memcpy(event->currency, definition->currency, sizeof event->currency);
    event->hold_ttl_ms = definition->hold_ttl_ms;
    event->max_hold_ms = definition->max_hold_ms;
    event->max_seats_per_user = definition->max_seats_per_user;
    event->max_seats_per_hold = definition->max_seats_per_hold;
    event->created_at_ms = now;
    event->section_count = definition->section_count;
    event->row_count = (uint32_t)rows;
    event->seat_count = (uint32_t)seats;
    event->pool_count = definition->pool_count;
    event->sections = calloc(definition->section_count + 1, sizeof *event->sections);
    event->rows = calloc(rows + 1, sizeof *event->rows);
    event->seats = calloc(seats + 1, sizeof *event->seats);
    event->pools = calloc(definition->pool_count + 1, sizeof *event->pools);
    tables->row_prefix_offsets = calloc(rows + 1, sizeof *tables->row_prefix_offsets);
    tables->seat_changes = calloc(seats + 1, sizeof *tables->seat_changes);
    if (!event->sections || !event->rows || !event->seats || !event->pools ||
        !tables->row_prefix_offsets || !tables->seat_changes)
        abort();
    for (uint64_t i = 0; i < seats; i++) event->seats[i].version = 1;
    event->counts.available = (uint32_t)seats;
    event->internal = tables;
    build_layout(event, definition);
    return event;
}

/* The definition as JSON, as stored and as read back at start (same shape as the request). */
static void definition_json(hf_buffer_t *out, const hf_event_definition_t *definition) {
    hf_json_t json;
    hf_buffer_reset(out);
    hf_json_init(&json, out);
    hf_json_object_begin(&json);
    hf_json_key(&json, "id"); hf_json_string(&json, definition->id);
    hf_json_key(&json, "name"); hf_json_string(&json, definition->name);
    hf_json_key(&json, "currency"); hf_json_string(&json, definition->currency);
    hf_json_key(&json, "hold_ttl_s"); hf_json_seconds(&json, definition->hold_ttl_ms);
    hf_json_key(&json, "max_hold_s"); hf_json_seconds(&json, definition->max_hold_ms);
    hf_json_key(&json, "max_seats_per_user"); hf_json_int(&json, definition->max_seats_per_user);
    hf_json_key(&json, "max_seats_per_hold"); hf_json_int(&json, definition->max_seats_per_hold);
    hf_json_key(&json, "sections");
    hf_json_array_begin(&json);
    for (uint32_t s = 0; s < definition->section_count; s++) {
        const hf_section_definition_t *section = &definition->sections[s];
        hf_json_object_begin(&json);
        hf_json_key(&json, "id"); hf_json_string(&json, section->id);
        hf_json_key(&json, "price"); hf_json_int(&json, section->price);
        hf_json_key(&json, "rows");
        hf_json_array_begin(&json);
        for (uint32_t r = 0; r < section->row_count; r++) {
            hf_json_object_begin(&json);
            hf_json_key(&json, "id"); hf_json_string(&json, section->rows[r].id);
            hf_json_key(&json, "seats"); hf_json_int(&json, section->rows[r].seats);
            hf_json_object_end(&json);
        }
        hf_json_array_end(&json);
        hf_json_object_end(&json);
    }
    hf_json_array_end(&json);
    hf_json_key(&json, "pools");
    hf_json_array_begin(&json);
    for (uint32_t p = 0; p < definition->pool_count; p++) {
        hf_json_object_begin(&json);
        hf_json_key(&json, "id"); hf_json_string(&json, definition->pools[p].id);
        hf_json_key(&json, "capacity"); hf_json_int(&json, definition->pools[p].capacity);
        hf_json_key(&json, "price"); hf_json_int(&json, definition->pools[p].price);
        hf_json_object_end(&json);
    }
    hf_json_array_end(&json);
    hf_json_object_end(&json);
}

static hf_error_t event_add(hf_core_t *core, const hf_event_definition_t *definition,
                            hf_time_ms_t now, hf_error_detail_t *detail) {
    uint64_t seats, rows;
    hf_error_t error = check_definition(core, definition, &seats, &rows, detail);
    if (error) return error;
    hf_event_t *event = event_allocate(definition, seats, rows, now);
    core->events = grow(core->events, &core->event_capacity, core->event_count + 1, sizeof *core->events);
    uint32_t index = core->event_count++;
    core->events[index] = event;
    hf_map_put(&core->event_ids, event->id, strlen(event->id), index);
    return HF_OK;
}

hf_error_t hf_core_event_create(hf_core_t *core, const hf_event_definition_t *definition,
                                hf_time_ms_t now, hf_error_detail_t *detail) {
    hf_core_advance(core, now);
    hf_error_t error = event_add(core, definition, now, detail);
    if (error) return error;
    definition_json(&core->text, definition);
    hf_mutation_t mutation = {.type = HF_MUTATION_EVENT_CREATE, .at_ms = now,
                              .event_id = definition->id, .text = core->text.data};
    emit(core, &mutation);
    const hf_event_t *event = core->events[core->event_count - 1];
    ((event_tables_t *)event->internal)->created_change = core->change_count;
    return HF_OK;
}

hf_error_t hf_core_restore_event(hf_core_t *core, const hf_event_definition_t *definition,
                                 hf_time_ms_t created_at_ms) {
    return event_add(core, definition, created_at_ms, NULL);
}

/* ---- seat and pool changes ---- */

static void counts_move(hf_counts_t *counts, uint8_t from, uint8_t to) {
    uint32_t *slots[3] = {&counts->available, &counts->held, &counts->sold};
    (*slots[from])--;
    (*slots[to])++;
}

/* A freed seat may join the runs beside it into one longer than the row's bound: measure the
 * joined run. A row whose bound is its length is never measured, so rows best_available has
 * not narrowed cost nothing. */
static void widen_free_run_bound(const hf_event_t *event, hf_row_t *row, uint32_t seat_index) {
    if (row->free_run_bound >= row->seat_count) return;
    uint32_t length = 1, first = row->first_seat, end = row->first_seat + row->seat_count;
    for (uint32_t i = seat_index; i > first && event->seats[i - 1].status == HF_SEAT_AVAILABLE; i--)
        length++;
    for (uint32_t i = seat_index + 1; i < end && event->seats[i].status == HF_SEAT_AVAILABLE; i++)
        length++;
    if (length > row->free_run_bound) row->free_run_bound = length;
}

/* Moves a seat to a new status, bumps its version and reports the change. */
static void seat_set(hf_core_t *core, hf_event_t *event, uint32_t seat_index, uint8_t status,
                     uint32_t owner, hf_time_ms_t now, bool report) {
    hf_seat_t *seat = &event->seats[seat_index];
    uint32_t row_index = hf_core_seat_row(event, seat_index);
    hf_row_t *row = &event->rows[row_index];
    hf_section_t *section = &event->sections[row->section];
    if (seat->status == HF_SEAT_AVAILABLE) row->available--;
    if (status == HF_SEAT_AVAILABLE) row->available++;
    bool freed = status == HF_SEAT_AVAILABLE && seat->status != HF_SEAT_AVAILABLE;
    counts_move(&event->counts, seat->status, status);
    counts_move(&section->counts, seat->status, status);
    seat->status = status;
    seat->owner = owner;
    if (freed) widen_free_run_bound(event, row, seat_index);
    if (!report) return;
    seat->version++;
    seat_changes_of(event)[seat_index] = core->change_count;
    if (!core->stream_records) return;
    char seat_id[HF_SEAT_ID_SIZE_MAX + 1];
    seat_id_write(event, row_index, seat_index, seat_id);
    hf_mutation_t mutation = {.type = HF_MUTATION_SEAT, .at_ms = now, .event_id = event->id,
                              .seat_id = seat_id, .status = status, .version = seat->version};
    emit(core, &mutation);
}

/* A pool's counts after a change, for live streams (the store skips these records). */
static void pool_report(hf_core_t *core, const hf_event_t *event, uint32_t pool_index,
                        hf_time_ms_t now) {
    const hf_pool_t *pool = &event->pools[pool_index];
    hf_mutation_t mutation = {.type = HF_MUTATION_POOL, .at_ms = now, .event_id = event->id,
                              .pool_id = pool->id,
                              .available = pool->capacity - pool->held - pool->sold,
                              .held = pool->held, .sold = pool->sold};
    emit(core, &mutation);
}

/* Adds delta units to a pool's held or sold count, reporting the new counts. */
static void pool_move(hf_core_t *core, hf_event_t *event, const hf_item_t *item, int64_t held,
                      int64_t sold, hf_time_ms_t now, bool report) {
    hf_pool_t *pool = &event->pools[item->index];
    pool->held += held * item->quantity;
    pool->sold += sold * item->quantity;
    if (report && core->stream_records) pool_report(core, event, item->index, now);
}

static uint32_t item_units(const hf_item_t *items, uint32_t seat_count, uint32_t pool_count) {
    uint32_t units = seat_count;
    for (uint32_t i = 0; i < pool_count; i++) units += items[seat_count + i].quantity;
    return units;
}

/* Items as {"seats":[...],"pools":{...}} into core->text, written directly rather than
 * through hf_json: this runs for every hold and order. Seat and pool ids are made of
 * [A-Za-z0-9_.-] (hf_core_id_valid at event creation), so nothing in them needs escaping. */
static const char *items_json(hf_core_t *core, const hf_event_t *event, uint32_t item_offset,
                              uint32_t seat_count, uint32_t pool_count) {
    const hf_item_t *items = core->items + item_offset;
    hf_buffer_t *out = &core->text;
    hf_buffer_reset(out);
    hf_buffer_append(out, "{\"seats\":[", 10);
    for (uint32_t i = 0; i < seat_count; i++) {
        hf_buffer_reserve(out, HF_SEAT_ID_SIZE_MAX + 3); /* a comma and two quotes */
        char *to = out->data + out->length;
        if (i > 0) *to++ = ',';
        *to++ = '"';
        to += seat_id_write(event, hf_core_seat_row(event, items[i].index), items[i].index, to);
        *to++ = '"';
        out->length = (size_t)(to - out->data);
    }
    hf_buffer_append(out, "],\"pools\":{", 11);
    for (uint32_t i = 0; i < pool_count; i++) {
        const hf_item_t *item = &items[seat_count + i];
        const char *id = event->pools[item->index].id;
        size_t id_length = strlen(id);
        hf_buffer_reserve(out, id_length + 14); /* comma, quotes, colon, 10 digits */
        char *to = out->data + out->length;
        if (i > 0) *to++ = ',';
        *to++ = '"';
        memcpy(to, id, id_length);
        to += id_length;
        *to++ = '"';
        *to++ = ':';
        to += write_decimal(to, item->quantity);
        out->length = (size_t)(to - out->data);
    }
    hf_buffer_append(out, "}}", 2);
    return out->data;
}

/* ---- holds ---- */

static hf_hold_t *hold_of(hf_core_t *core, uint32_t index) { return &core->holds[index]; }

/* ---- finished holds: kept in the order they finished, the oldest forgotten first ---- */

/* Released or expired: done, but still answerable, and the only holds ever forgotten. */
static bool hold_status_finished(uint8_t status) {
    return status == HF_HOLD_RELEASED || status == HF_HOLD_EXPIRED;
}

static void finished_push(hf_core_t *core, uint32_t hold_index) {
    hold_state_t *state = &core->hold_states[hold_index];
    state->next_finished = 0;
    if (core->finished_last) core->hold_states[core->finished_last - 1].next_finished = hold_index + 1;
    else core->finished_first = hold_index + 1;
    core->finished_last = hold_index + 1;
    core->finished_count++;
}

/* The id index anew from the holds that are not forgotten: rebuilt in one pass over the holds,
 * whose independent inserts the processor overlaps, where removing entries one by one waited
 * for a cache miss each. */
static void hold_ids_rebuild(hf_core_t *core) {
    hf_index_map_clear(&core->hold_ids);
    for (uint32_t h = 0; h < core->hold_count; h++) {
        const hf_hold_t *hold = &core->holds[h];
        if (hold->status != HF_HOLD_EVICTED)
            hf_index_map_insert(&core->hold_ids, hf_map_hash(hold->id, strlen(hold->id)), h);
    }
    core->hold_ids_stale = 0;
}

/* Forgets the oldest finished hold: its id stops matching (the index entry stays until the
 * next rebuild) and its slot joins the free list. Its items stay reserved for the slot's next
 * hold. */
static void finished_forget_first(hf_core_t *core) {
    uint32_t index = core->finished_first - 1;
    hold_state_t *state = &core->hold_states[index];
    hf_hold_t *hold = &core->holds[index];
    core->finished_first = state->next_finished;
    if (core->finished_first == 0) core->finished_last = 0;
    core->finished_count--;
    hold->status = HF_HOLD_EVICTED;
    hold->id[0] = '\0';
    state->next_finished = core->free_first;
    core->free_first = index + 1;
    if (++core->hold_ids_stale > hf_index_map_count(&core->hold_ids) / 2) hold_ids_rebuild(core);
}

uint64_t hf_core_change_count(const hf_core_t *core) { return core->change_count; }

uint64_t hf_core_seat_change(const hf_event_t *event, uint32_t seat_index) {
    assert(seat_index < event->seat_count);
    uint64_t change = seat_changes_of(event)[seat_index];
    uint64_t created = ((const event_tables_t *)event->internal)->created_change;
    return change > created ? change : created;
}

uint64_t hf_core_hold_change(const hf_core_t *core, uint32_t index) {
    assert(index < core->hold_count);
    return core->hold_states[index].last_change;
}

uint64_t hf_core_order_change(const hf_core_t *core, uint32_t index) {
    assert(index < core->order_count);
    return core->orders[index].last_change;
}

void hf_core_set_finished_max(hf_core_t *core, uint32_t finished_max) {
    core->finished_max = finished_max;
}

uint32_t hf_core_holds_finished(const hf_core_t *core) { return core->finished_count; }

uint32_t hf_core_evict(hf_core_t *core, uint64_t durable_changes) {
    uint32_t forgotten = 0;
    while (core->finished_count > core->finished_max &&
           core->hold_states[core->finished_first - 1].last_change <= durable_changes) {
        finished_forget_first(core);
        forgotten++;
    }
    return forgotten;
}

/* ---- expiry: each held hold has an entry in core->timer at its expires_at ---- */

/* An entry is left behind once its hold is no longer held at that expires_at (extended,
 * released, committed). */
static bool expiry_stale(const void *context, const hf_timer_entry_t *entry) {
    const hf_core_t *core = context;
    assert(entry->kind == HF_TIMER_HOLD);
    const hf_hold_t *hold = &core->holds[entry->index];
    return hold->status != HF_HOLD_HELD || hold->expires_at_ms != entry->deadline_ms;
}

/* Drops top entries left behind by extensions, releases and commits, so the top is always
 * the deadline of a hold that is really held. */
static void expiry_prune(hf_core_t *core) { hf_timer_prune(&core->timer, expiry_stale, core); }

/* Ends a held hold: its seats and units are free again. */
static void hold_finish(hf_core_t *core, uint32_t hold_index, uint8_t status, hf_time_ms_t at,
                        bool report) {
    hf_hold_t *hold = hold_of(core, hold_index);
    assert(hold->status == HF_HOLD_HELD);
    hf_event_t *event = core->events[hold->event];
    const hf_item_t *items = core->items + hold->item_offset;
    hold->status = status;
    core->holds_active--;
    event_user_t *owner = owner_record(core, hold->owner);
    owner->held_units -= item_units(items, hold->seat_count, hold->pool_count);
    active_remove(core, owner, hold_index);
    if (report) {
        hf_mutation_t mutation = {.type = HF_MUTATION_HOLD_UPDATE, .at_ms = at,
                                  .event_id = event->id, .hold_id = hold->id,
                                  .status = status,
                                  .expires_at_ms = hold->expires_at_ms};
        emit(core, &mutation);
        core->hold_states[hold_index].last_change = core->change_count;
    }
    if (hold_status_finished(status)) finished_push(core, hold_index);
    for (uint32_t i = 0; i < hold->seat_count; i++)
        seat_set(core, event, items[i].index, HF_SEAT_AVAILABLE, 0, at, report);
    for (uint32_t i = 0; i < hold->pool_count; i++)
        pool_move(core, event, &items[hold->seat_count + i], -1, 0, at, report);
    expiry_prune(core);
}

uint32_t hf_core_advance(hf_core_t *core, hf_time_ms_t now) {
    uint32_t expired = 0;
    const hf_timer_entry_t *top;
    while ((top = hf_timer_peek(&core->timer)) && top->deadline_ms <= now) {
        hf_timer_entry_t entry = *top;
        hf_timer_pop(&core->timer);
        /* Extensions push a new entry and leave the old one behind: skip those. */
        if (expiry_stale(core, &entry)) continue;
        hf_hold_t *hold = hold_of(core, entry.index);
        hold_finish(core, entry.index, HF_HOLD_EXPIRED, hold->expires_at_ms, true);
        expired++;
    }
    return expired;
}

hf_time_ms_t hf_core_next_expiry(const hf_core_t *core) {
    /* expiry_prune runs after every change, so the top is a hold that is really held. */
    const hf_timer_entry_t *top = hf_timer_peek(&core->timer);
    return top ? top->deadline_ms : INT64_MAX;
}

/* Checks the shape of a request: ids, counts, duplicates, quantities. */
static hf_error_t check_request_shape(const hf_event_t *event, const hf_hold_request_t *request,
                                      size_t user_length, hf_error_detail_t *detail) {
    if (user_length == 0 || user_length > HF_USER_ID_SIZE_MAX) return invalid(detail, "user_id");
    if (request->seat_count == 0 && request->pool_count == 0 && request->best_count == 0)
        return invalid_because(detail, "seats", "a hold needs seats, pools or best_available");
    uint64_t units = (uint64_t)request->seat_count + request->best_count;
    for (uint32_t i = 0; i < request->pool_count; i++) {
        if (request->pools[i].quantity == 0) return invalid(detail, "pools");
        for (uint32_t other = 0; other < i; other++)
            if (strcmp(request->pools[i].pool_id, request->pools[other].pool_id) == 0)
                return invalid(detail, "pools");
        units += request->pools[i].quantity;
    }
    if (units > event->max_seats_per_hold)
        return invalid_because(detail, request->best_count ? "best_available" : "seats",
                               "more items than the event's max_seats_per_hold");
    if (request->ttl_ms == 0 || request->ttl_ms > event->max_hold_ms)
        return invalid_because(detail, "ttl_s", "ttl_s must not exceed the event's max_hold_s");
    return HF_OK;
}

static int compare_indexes(const void *a, const void *b) {
    uint32_t left = *(const uint32_t *)a, right = *(const uint32_t *)b;
    return (left > right) - (left < right);
}

/* Sorts ascending. Most holds name one to a few seats, for which qsort's call overhead was
 * most of the cost of the sort; longer lists still go to qsort. */
static void sort_indexes(uint32_t *indexes, uint32_t count) {
    if (count > SMALL_SORT_MAX) {
        qsort(indexes, count, sizeof *indexes, compare_indexes);
        return;
    }
    for (uint32_t i = 1; i < count; i++) {
        uint32_t value = indexes[i], j = i;
        for (; j > 0 && indexes[j - 1] > value; j--) indexes[j] = indexes[j - 1];
        indexes[j] = value;
    }
}

/* Resolves seat ids into core->scratch_seats; unknown ones and duplicates are errors. */
static hf_error_t resolve_seats(hf_core_t *core, const hf_event_t *event,
                                const hf_hold_request_t *request, hf_error_detail_t *detail) {
    uint32_t unknown = 0;
    for (uint32_t i = 0; i < request->seat_count; i++) {
        if (hf_core_seat_find(event, request->seat_ids[i], &core->scratch_seats[i])) continue;
        if (detail) detail->items[unknown] = i;
        unknown++;
    }
    if (unknown) {
        if (detail) detail->item_count = unknown;
        return HF_ERROR_SEAT_NOT_FOUND;
    }
    core->scratch_seat_count = request->seat_count;
    uint32_t *sorted = core->scratch_sorted;
    memcpy(sorted, core->scratch_seats, request->seat_count * sizeof *sorted);
    sort_indexes(sorted, request->seat_count);
    for (uint32_t i = 1; i < request->seat_count; i++)
        if (sorted[i] == sorted[i - 1])
            return invalid_because(detail, "seats", "a seat is listed twice");
    return HF_OK;
}

static hf_error_t resolve_pools(hf_core_t *core, const hf_event_t *event,
                                const hf_hold_request_t *request, hf_error_detail_t *detail) {
    for (uint32_t i = 0; i < request->pool_count; i++) {
        int32_t pool = hf_core_pool_find(event, request->pools[i].pool_id);
        if (pool < 0) {
            if (detail) detail->pool = i;
            return HF_ERROR_POOL_NOT_FOUND;
        }
        core->scratch_pools[i] = (uint32_t)pool;
    }
    return HF_OK;
}

/* True when the seat is held by one of the holds replace_existing is about to release. */
static bool held_by_replaced(const hf_core_t *core, const hf_seat_t *seat,
                             const event_user_t *owner, bool replace) {
    if (!replace || !owner || seat->status != HF_SEAT_HELD) return false;
    for (uint32_t h = owner->first_active; h != 0; h = core->hold_states[h - 1].next_active)
        if (h == seat->owner) return true;
    return false;
}

/* Units of a pool held by the holds replace_existing is about to release. */
static int64_t pool_units_replaced(const hf_core_t *core, uint32_t pool, const event_user_t *owner,
                                   bool replace) {
    if (!replace || !owner) return 0;
    int64_t units = 0;
    for (uint32_t h = owner->first_active; h != 0; h = core->hold_states[h - 1].next_active) {
        const hf_hold_t *hold = &core->holds[h - 1];
        const hf_item_t *items = core->items + hold->item_offset + hold->seat_count;
        for (uint32_t i = 0; i < hold->pool_count; i++)
            if (items[i].index == pool) units += items[i].quantity;
    }
    return units;
}

/* The newest change the states of the request's seats (resolved into scratch_seats) rest on. */
static uint64_t seats_observed_change(const hf_core_t *core, const hf_event_t *event,
                                      uint32_t seat_count) {
    const uint64_t *seat_changes = seat_changes_of(event);
    uint64_t observed = 0;
    for (uint32_t i = 0; i < seat_count; i++) {
        uint64_t change = seat_changes[core->scratch_seats[i]];
        if (change > observed) observed = change;
    }
    return observed;
}

static hf_error_t check_available(hf_core_t *core, const hf_event_t *event,
                                  const hf_hold_request_t *request, const event_user_t *owner,
                                  hf_error_detail_t *detail) {
    uint32_t taken = 0;
    for (uint32_t i = 0; i < request->seat_count; i++) {
        const hf_seat_t *seat = &event->seats[core->scratch_seats[i]];
        if (seat->status == HF_SEAT_AVAILABLE) continue;
        if (held_by_replaced(core, seat, owner, request->replace_existing)) continue;
        if (detail) detail->items[taken] = i;
        taken++;
    }
    if (taken) {
        if (detail) {
            detail->item_count = taken;
            detail->observed_change = seats_observed_change(core, event, request->seat_count);
        }
        return HF_ERROR_SEATS_UNAVAILABLE;
    }
    for (uint32_t i = 0; i < request->pool_count; i++) {
        const hf_pool_t *pool = &event->pools[core->scratch_pools[i]];
        int64_t available = pool->capacity - pool->held - pool->sold +
                            pool_units_replaced(core, core->scratch_pools[i], owner,
                                                request->replace_existing);
        if (available >= request->pools[i].quantity) continue;
        if (detail) {
            detail->pool = i;
            detail->available = available;
        }
        return HF_ERROR_INSUFFICIENT_QUANTITY;
    }
    return HF_OK;
}

/* ---- best_available ---- */

typedef struct best_context {
    const hf_core_t *core;
    const hf_event_t *event;
    const event_user_t *owner;
    bool replace;
    uint32_t requested;          /* seats named in the request, in core->scratch_sorted */
} best_context_t;

/* Free for best_available: available (or held by a hold being replaced) and not already
 * named in the request. */
static bool best_free(void *context, uint32_t seat_index) {
    const best_context_t *best = context;
    const hf_seat_t *seat = &best->event->seats[seat_index];
    if (seat->status != HF_SEAT_AVAILABLE && !held_by_replaced(best->core, seat, best->owner, best->replace))
        return false;
    return !bsearch(&seat_index, best->core->scratch_sorted, best->requested, sizeof seat_index,
                    compare_indexes);
}

/* Not const: best_available tightens the rows' free-run bounds as it reads them. */
static hf_error_t pick_best(hf_core_t *core, hf_event_t *event,
                            const hf_hold_request_t *request, const event_user_t *owner,
                            hf_error_detail_t *detail) {
    int32_t section = -1;
    if (request->best_section) {
        const event_tables_t *tables = event->internal;
        uint32_t found;
        if (!hf_map_get(&tables->sections, request->best_section, strlen(request->best_section), &found))
            return HF_ERROR_SECTION_NOT_FOUND;
        section = (int32_t)found;
    }
    bool replacing = request->replace_existing && owner && owner->first_active != 0;
    best_context_t context = {core, event, owner, request->replace_existing, request->seat_count};
    hf_best_query_t query = {request->best_count, section, request->best_adjacent,
                             !replacing && request->seat_count == 0, best_free, &context};
    if (!hf_best_pick(event, &query, core->scratch_seats + request->seat_count)) {
        if (detail) detail->item_count = 0;
        return HF_ERROR_SEATS_UNAVAILABLE;
    }
    core->scratch_seat_count = request->seat_count + request->best_count;
    return HF_OK;
}

static hf_error_t check_user_limit(const hf_event_t *event, const hf_hold_request_t *request,
                                   const event_user_t *owner, uint32_t replaced_units) {
    if (event->max_seats_per_user == 0) return HF_OK;
    uint64_t units = (uint64_t)request->seat_count + request->best_count;
    for (uint32_t i = 0; i < request->pool_count; i++) units += request->pools[i].quantity;
    if (owner) units += owner->held_units + owner->sold_units - replaced_units;
    return units > event->max_seats_per_user ? HF_ERROR_USER_LIMIT_EXCEEDED : HF_OK;
}

static uint32_t item_allocate(hf_core_t *core, uint32_t count) {
    core->items = grow(core->items, &core->item_capacity, core->item_count + count + 1,
                       sizeof *core->items);
    uint32_t offset = core->item_count;
    core->item_count += count;
    return offset;
}

/* Copies the resolved seats and pools into the items at offset; returns the total. */
static int64_t items_fill(hf_core_t *core, const hf_event_t *event,
                          const hf_hold_request_t *request, uint32_t offset) {
    uint32_t seat_count = core->scratch_seat_count;
    hf_item_t *items = core->items + offset;
    int64_t total = 0;
    for (uint32_t i = 0; i < seat_count; i++) {
        items[i] = (hf_item_t){core->scratch_seats[i], 0};
        uint32_t row = hf_core_seat_row(event, core->scratch_seats[i]);
        total += event->sections[event->rows[row].section].price;
    }
    for (uint32_t i = 0; i < request->pool_count; i++) {
        items[seat_count + i] = (hf_item_t){core->scratch_pools[i], request->pools[i].quantity};
        total += event->pools[core->scratch_pools[i]].price * request->pools[i].quantity;
    }
    return total;
}

/* Copies a server-made id, cut to HF_SERVER_ID_SIZE bytes as the id fields hold; returns the
 * key the copy is indexed under (the given one when nothing was cut). */
static text_key_t server_id_copy(char out[HF_SERVER_ID_SIZE + 1], const text_key_t *id) {
    if (id->length <= HF_SERVER_ID_SIZE) {
        memcpy(out, id->text, id->length);
        out[id->length] = '\0';
        return (text_key_t){out, id->length, id->hash};
    }
    memcpy(out, id->text, HF_SERVER_ID_SIZE);
    out[HF_SERVER_ID_SIZE] = '\0';
    return text_key_of(out, HF_SERVER_ID_SIZE);
}

/* Item space for a slot: a power of two, so a slot reused by ever larger holds moves to new
 * items at most log2(HF_HOLD_ITEMS_MAX) times and the items left behind stay bounded. */
static uint32_t item_capacity_for(uint32_t count) {
    uint32_t capacity = 1;
    while (capacity < count) capacity *= 2;
    return capacity;
}

/* A slot for a new hold of item_count items: a forgotten hold's slot when there is one (with
 * its items when they are enough), else a new one. Returns the index; the hold itself is
 * cleared except for item_offset. */
static uint32_t hold_slot_take(hf_core_t *core, uint32_t item_count) {
    uint32_t index;
    if (core->free_first != 0) {
        index = core->free_first - 1;
        core->free_first = core->hold_states[index].next_finished;
    } else {
        core->holds = grow(core->holds, &core->hold_capacity, core->hold_count + 1, sizeof *core->holds);
        core->hold_states = grow(core->hold_states, &core->hold_state_capacity, core->hold_count + 1,
                                 sizeof *core->hold_states);
        index = core->hold_count++;
        core->hold_states[index].item_capacity = 0;
    }
    hold_state_t *state = &core->hold_states[index];
    hf_hold_t *hold = &core->holds[index];
    uint32_t item_offset = state->item_capacity ? hold->item_offset : 0;
    uint32_t capacity = item_capacity_for(item_count);
    if (state->item_capacity < capacity) {
        state->item_capacity = capacity;
        item_offset = item_allocate(core, state->item_capacity);
    }
    memset(hold, 0, sizeof *hold);
    hold->item_offset = item_offset;
    state->previous_active = state->next_active = state->next_finished = 0;
    state->last_change = 0;
    return index;
}

static uint32_t hold_allocate(hf_core_t *core, const hf_hold_request_t *request,
                              const text_key_t *hold_id, uint32_t event, user_ref_t *user) {
    uint32_t index = hold_slot_take(core, core->scratch_seat_count + request->pool_count);
    hf_hold_t *hold = &core->holds[index];
    text_key_t key = server_id_copy(hold->id, hold_id);
    hold->event = event;
    hold->user = user_intern(core, user);
    hold->seat_count = core->scratch_seat_count;
    hold->pool_count = request->pool_count;
    hold->total = items_fill(core, core->events[event], request, hold->item_offset);
    hf_index_map_insert(&core->hold_ids, key.hash, index);
    return index;
}

/* Marks a new hold's seats and units as held by it. */
static void hold_take(hf_core_t *core, uint32_t hold_index, hf_time_ms_t now, bool report) {
    hf_hold_t *hold = hold_of(core, hold_index);
    hf_event_t *event = core->events[hold->event];
    const hf_item_t *items = core->items + hold->item_offset;
    hold->owner = event_user_intern(core, hold->event, hold->user);
    event_user_t *owner = owner_record(core, hold->owner);
    owner->held_units += item_units(items, hold->seat_count, hold->pool_count);
    active_push(core, owner, hold_index);
    core->holds_active++;
    for (uint32_t i = 0; i < hold->seat_count; i++)
        seat_set(core, event, items[i].index, HF_SEAT_HELD, hold_index + 1, now, report);
    for (uint32_t i = 0; i < hold->pool_count; i++)
        pool_move(core, event, &items[hold->seat_count + i], 1, 0, now, report);
    hf_timer_push(&core->timer, hold->expires_at_ms, HF_TIMER_HOLD, hold_index);
}

static void release_replaced(hf_core_t *core, uint32_t event, uint32_t user, hf_time_ms_t now) {
    event_user_t *owner = event_user_find(core, event, user);
    while (owner && owner->last_active != 0)
        hold_finish(core, owner->last_active - 1, HF_HOLD_RELEASED, now, true);
}

/* The key of a new hold's or order's id, which is kept (and so compared) cut to
 * HF_SERVER_ID_SIZE. */
static text_key_t server_id_key(const char *id) {
    size_t length = strlen(id);
    return text_key_of(id, length < HF_SERVER_ID_SIZE ? length : HF_SERVER_ID_SIZE);
}

/* True when id is NULL or a hold has it already; else *key is set for the insert. */
static bool hold_id_taken(const hf_core_t *core, const char *id, text_key_t *key) {
    if (!id) return true;
    *key = server_id_key(id);
    uint32_t index;
    return hold_index_find(core, key, &index);
}

/* The same for a new order's id. */
static bool order_id_taken(const hf_core_t *core, const char *id, text_key_t *key) {
    if (!id) return true;
    *key = server_id_key(id);
    uint32_t index;
    return order_index_find(core, key, &index);
}

/* The keys of a hold request's two ids, each hashed once. */
typedef struct hold_keys {
    text_key_t hold_id;          /* text NULL when the request has none */
    text_key_t user_id;          /* text NULL when the request has none */
} hold_keys_t;

/* Hashes the request's ids and starts loading the slots where their lookups begin, and the
 * oldest finished hold when the core keeps more than it may (forgetting reads it next): the
 * cache misses of a large table then overlap the checks that come before the lookups. */
static hold_keys_t hold_keys_of(const hf_core_t *core, const hf_hold_request_t *request) {
    hold_keys_t keys = {{NULL, 0, 0}, {NULL, 0, 0}};
    if (request->hold_id) {
        keys.hold_id = server_id_key(request->hold_id);
        hf_index_map_prefetch(&core->hold_ids, keys.hold_id.hash);
    }
    if (request->user_id) {
        keys.user_id = text_key_of(request->user_id, strlen(request->user_id));
        hf_index_map_prefetch(&core->user_ids, keys.user_id.hash);
    }
    if (core->finished_first != 0 && core->finished_count >= core->finished_max) {
        __builtin_prefetch(&core->holds[core->finished_first - 1]);
        __builtin_prefetch(&core->hold_states[core->finished_first - 1]);
    }
    return keys;
}

/* Checks a hold request; on success *user is the user named. */
static hf_error_t hold_check(hf_core_t *core, const hf_hold_request_t *request, uint32_t event_index,
                             const hold_keys_t *keys, user_ref_t *user, hf_error_detail_t *detail) {
    const hf_event_t *event = core->events[event_index];
    /* As check_request_shape would answer; first, so the user's key is known to be set. */
    if (!keys->user_id.text) return invalid(detail, "user_id");
    hf_error_t error = check_request_shape(event, request, keys->user_id.length, detail);
    if (!error) error = resolve_seats(core, event, request, detail);
    if (!error) error = resolve_pools(core, event, request, detail);
    if (error) return error;
    uint32_t taken;
    if (!keys->hold_id.text || hold_index_find(core, &keys->hold_id, &taken))
        return invalid(detail, "id");
    *user = user_ref_find(core, &keys->user_id);
    const event_user_t *owner = event_user_find(core, event_index, user->index);
    error = check_available(core, event, request, owner, detail);
    if (!error && request->best_count > 0)
        error = pick_best(core, core->events[event_index], request, owner, detail);
    if (error) return error;
    uint32_t replaced = request->replace_existing && owner ? owner->held_units : 0;
    return check_user_limit(event, request, owner, replaced);
}

hf_error_t hf_core_hold(hf_core_t *core, const hf_hold_request_t *request, hf_time_ms_t now,
                        uint32_t *hold_index, hf_error_detail_t *detail) {
    hold_keys_t keys = hold_keys_of(core, request);
    hf_core_advance(core, now);
    uint32_t event_index;
    if (!hf_core_event(core, request->event_id, &event_index)) return HF_ERROR_EVENT_NOT_FOUND;
    user_ref_t user;
    hf_error_t error = hold_check(core, request, event_index, &keys, &user, detail);
    if (error) return error;
    const hf_event_t *event = core->events[event_index];
    if (request->replace_existing) release_replaced(core, event_index, user.index, now);
    uint32_t index = hold_allocate(core, request, &keys.hold_id, event_index, &user);
    hf_hold_t *hold = hold_of(core, index);
    hold->status = HF_HOLD_HELD;
    hold->created_at_ms = now;
    hold->expires_at_ms = now + (request->ttl_ms < 0 ? event->hold_ttl_ms : request->ttl_ms);
    hf_mutation_t mutation = {.type = HF_MUTATION_HOLD_CREATE, .at_ms = now, .event_id = event->id,
                              .hold_id = hold->id, .user_id = request->user_id,
                              .text = items_json(core, event, hold->item_offset, hold->seat_count,
                                                 hold->pool_count),
                              .total = hold->total, .expires_at_ms = hold->expires_at_ms,
                              .status = HF_HOLD_HELD};
    emit(core, &mutation);
    core->hold_states[index].last_change = core->change_count;
    hold_take(core, index, now, true);
    *hold_index = index;
    return HF_OK;
}

/* Finds a hold and checks its owner: the first checks of extend, release and commit. */
static hf_error_t hold_owned(hf_core_t *core, const char *hold_id, const char *user_id,
                             uint32_t *index) {
    const hf_hold_t *hold = hf_core_hold_find(core, hold_id, index);
    if (!hold) return HF_ERROR_HOLD_NOT_FOUND;
    if (!user_id || !user_has_id(core, core->holds[*index].user, user_id))
        return HF_ERROR_NOT_OWNER;
    return HF_OK;
}

hf_error_t hf_core_extend(hf_core_t *core, const char *hold_id, const char *user_id,
                          int64_t ttl_ms, hf_time_ms_t now, bool *capped) {
    hf_core_advance(core, now);
    uint32_t index;
    hf_error_t error = hold_owned(core, hold_id, user_id, &index);
    if (error) return error;
    hf_hold_t *hold = hold_of(core, index);
    if (hold->status == HF_HOLD_EXPIRED) return HF_ERROR_HOLD_EXPIRED;
    if (hold->status != HF_HOLD_HELD) return HF_ERROR_HOLD_NOT_ACTIVE;
    const hf_event_t *event = core->events[hold->event];
    if (ttl_ms < 0) ttl_ms = event->hold_ttl_ms;
    if (ttl_ms == 0) return HF_ERROR_INVALID_REQUEST;
    if (ttl_ms > HF_HOLD_TTL_MS_MAX) ttl_ms = HF_HOLD_TTL_MS_MAX;
    hf_time_ms_t wanted = now + ttl_ms;
    hf_time_ms_t cap = hold->created_at_ms + event->max_hold_ms;
    *capped = wanted > cap;
    hf_time_ms_t expires_at = *capped ? cap : wanted;
    if (expires_at <= hold->expires_at_ms) return HF_OK; /* never earlier */
    hold->expires_at_ms = expires_at;
    hf_timer_push(&core->timer, expires_at, HF_TIMER_HOLD, index);
    expiry_prune(core);
    hf_mutation_t mutation = {.type = HF_MUTATION_HOLD_UPDATE, .at_ms = now, .event_id = event->id,
                              .hold_id = hold->id, .user_id = user_id, .status = HF_HOLD_HELD,
                              .expires_at_ms = expires_at};
    emit(core, &mutation);
    core->hold_states[index].last_change = core->change_count;
    /* The seats stay held past their old expiry only once this record is durable. */
    uint64_t *seat_changes = seat_changes_of(event);
    const hf_item_t *items = core->items + hold->item_offset;
    for (uint32_t i = 0; i < hold->seat_count; i++) seat_changes[items[i].index] = core->change_count;
    return HF_OK;
}

hf_error_t hf_core_release(hf_core_t *core, const char *hold_id, const char *user_id,
                           hf_time_ms_t now) {
    hf_core_advance(core, now);
    uint32_t index;
    hf_error_t error = hold_owned(core, hold_id, user_id, &index);
    if (error) return error;
    hf_hold_t *hold = hold_of(core, index);
    if (hold->status == HF_HOLD_CONFIRMED) return HF_ERROR_ALREADY_CONFIRMED;
    if (hold->status == HF_HOLD_HELD) hold_finish(core, index, HF_HOLD_RELEASED, now, true);
    return HF_OK;
}

/* ---- orders ---- */

static uint32_t order_allocate(hf_core_t *core, const text_key_t *order_id, uint32_t event,
                               uint32_t user, hf_time_ms_t now) {
    core->orders = grow(core->orders, &core->order_capacity, core->order_count + 1, sizeof *core->orders);
    uint32_t index = core->order_count++;
    hf_order_t *order = &core->orders[index];
    memset(order, 0, sizeof *order);
    text_key_t key = server_id_copy(order->id, order_id);
    order->event = event;
    order->user = user;
    order->created_at_ms = now;
    order->payment_ref = NO_STRING;
    hf_index_map_insert(&core->order_ids, key.hash, index);
    user_order_push(&core->users[user], index);
    return index;
}

/* Marks an order's seats sold and its units sold. */
static void order_take(hf_core_t *core, uint32_t order_index, hf_time_ms_t now, bool report) {
    hf_order_t *order = &core->orders[order_index];
    hf_event_t *event = core->events[order->event];
    const hf_item_t *items = core->items + order->item_offset;
    order->owner = event_user_intern(core, order->event, order->user);
    event_user_t *owner = owner_record(core, order->owner);
    owner->sold_units += item_units(items, order->seat_count, order->pool_count);
    for (uint32_t i = 0; i < order->seat_count; i++)
        seat_set(core, event, items[i].index, HF_SEAT_SOLD, order_index + 1, now, report);
    for (uint32_t i = 0; i < order->pool_count; i++)
        pool_move(core, event, &items[order->seat_count + i], 0, 1, now, report);
}

static void report_order(hf_core_t *core, hf_order_t *order, const hf_hold_t *hold) {
    const hf_event_t *event = core->events[order->event];
    const char *user_id = hf_core_user_id(core, order->user);
    hf_mutation_t created = {.type = HF_MUTATION_ORDER_CREATE, .at_ms = order->created_at_ms,
                             .event_id = event->id, .order_id = order->id, .user_id = user_id,
                             .hold_id = hold ? hold->id : NULL,
                             .text = items_json(core, event, order->item_offset, order->seat_count,
                                                order->pool_count),
                             .total = order->total, .currency = event->currency,
                             .payment_ref = hf_core_string(core, order->payment_ref),
                             .status = HF_ORDER_CONFIRMED};
    emit(core, &created);
    const hf_item_t *items = core->items + order->item_offset;
    char seat_id[HF_SEAT_ID_SIZE_MAX + 1];
    for (uint32_t i = 0; i < order->seat_count + order->pool_count; i++) {
        hf_mutation_t item = {.type = HF_MUTATION_ORDER_ITEM, .at_ms = order->created_at_ms,
                              .event_id = event->id, .order_id = order->id, .quantity = 1};
        if (i < order->seat_count) {
            hf_core_seat_id(event, items[i].index, seat_id);
            item.seat_id = seat_id;
        } else {
            item.pool_id = event->pools[items[i].index].id;
            item.quantity = items[i].quantity;
        }
        emit(core, &item);
    }
    order->last_change = core->change_count;
}

hf_error_t hf_core_commit(hf_core_t *core, const char *hold_id, const char *user_id,
                          const char *order_id, const char *payment_ref, hf_time_ms_t now,
                          uint32_t *order_index) {
    hf_core_advance(core, now);
    uint32_t index;
    hf_error_t error = hold_owned(core, hold_id, user_id, &index);
    if (error) return error;
    hf_hold_t *hold = hold_of(core, index);
    if (hold->status == HF_HOLD_CONFIRMED) {
        *order_index = hold->order - 1;
        return HF_OK;
    }
    if (hold->status == HF_HOLD_RELEASED) return HF_ERROR_HOLD_RELEASED;
    if (hold->status == HF_HOLD_EXPIRED) return HF_ERROR_HOLD_EXPIRED;
    text_key_t order_key;
    if (order_id_taken(core, order_id, &order_key)) return HF_ERROR_INVALID_REQUEST;
    /* The hold's seats move straight from held to sold: release them without reporting, then
     * take them for the order, which reports each seat once. */
    hold_finish(core, index, HF_HOLD_CONFIRMED, now, false);
    hold = hold_of(core, index);
    uint32_t order = order_allocate(core, &order_key, hold->event, hold->user, now);
    hf_order_t *record = &core->orders[order];
    record->hold = index + 1;
    record->total = hold->total;
    record->item_offset = hold->item_offset;
    record->seat_count = hold->seat_count;
    record->pool_count = hold->pool_count;
    if (payment_ref && *payment_ref) record->payment_ref = string_store(core, payment_ref, strlen(payment_ref));
    hold->order = order + 1;
    report_order(core, record, hold);
    hf_mutation_t update = {.type = HF_MUTATION_HOLD_UPDATE, .at_ms = now,
                            .event_id = core->events[hold->event]->id, .hold_id = hold->id,
                            .order_id = record->id, .user_id = user_id,
                            .status = HF_HOLD_CONFIRMED, .expires_at_ms = hold->expires_at_ms};
    emit(core, &update);
    core->hold_states[index].last_change = core->change_count;
    order_take(core, order, now, true);
    *order_index = order;
    return HF_OK;
}

hf_error_t hf_core_cancel(hf_core_t *core, const char *order_id, const char *user_id,
                          hf_time_ms_t now) {
    hf_core_advance(core, now);
    uint32_t index;
    hf_order_t *order = (hf_order_t *)hf_core_order_find(core, order_id, &index);
    if (!order) return HF_ERROR_ORDER_NOT_FOUND;
    if (!user_id || !user_has_id(core, order->user, user_id)) return HF_ERROR_NOT_OWNER;
    if (order->status == HF_ORDER_CANCELLED) return HF_OK;
    order->status = HF_ORDER_CANCELLED;
    hf_event_t *event = core->events[order->event];
    const hf_item_t *items = core->items + order->item_offset;
    hf_mutation_t mutation = {.type = HF_MUTATION_ORDER_UPDATE, .at_ms = now, .event_id = event->id,
                              .order_id = order->id, .user_id = user_id,
                              .status = HF_ORDER_CANCELLED};
    emit(core, &mutation);
    order->last_change = core->change_count;
    event_user_t *owner = owner_record(core, order->owner);
    owner->sold_units -= item_units(items, order->seat_count, order->pool_count);
    for (uint32_t i = 0; i < order->seat_count; i++)
        seat_set(core, event, items[i].index, HF_SEAT_AVAILABLE, 0, now, true);
    for (uint32_t i = 0; i < order->pool_count; i++)
        pool_move(core, event, &items[order->seat_count + i], 0, -1, now, true);
    return HF_OK;
}

/* ---- bookings: an order straight from available seats ---- */

static hf_error_t check_versions(hf_core_t *core, const hf_event_t *event,
                                 const hf_hold_request_t *request, hf_error_detail_t *detail) {
    if (!request->seat_versions && request->seat_count > 0) return invalid(detail, "seats");
    uint32_t moved = 0;
    for (uint32_t i = 0; i < request->seat_count; i++) {
        const hf_seat_t *seat = &event->seats[core->scratch_seats[i]];
        if (seat->status == HF_SEAT_AVAILABLE && seat->version == request->seat_versions[i]) continue;
        if (detail) detail->items[moved] = i;
        moved++;
    }
    if (detail) detail->item_count = moved;
    if (moved && detail)
        detail->observed_change = seats_observed_change(core, event, request->seat_count);
    return moved ? HF_ERROR_VERSION_CONFLICT : HF_OK;
}

/* Checks a booking; on success *order_key is the new id's key and *user the user named. */
static hf_error_t book_check(hf_core_t *core, const hf_hold_request_t *request,
                             uint32_t event_index, const char *order_id, text_key_t *order_key,
                             user_ref_t *user, hf_error_detail_t *detail) {
    const hf_event_t *event = core->events[event_index];
    if (request->best_count > 0) return invalid(detail, "best_available");
    size_t user_length = request->user_id ? strlen(request->user_id) : 0;
    hf_error_t error = check_request_shape(event, request, user_length, detail);
    if (!error) error = resolve_seats(core, event, request, detail);
    if (!error) error = resolve_pools(core, event, request, detail);
    if (!error) error = check_versions(core, event, request, detail);
    if (error) return error;
    if (order_id_taken(core, order_id, order_key)) return invalid(detail, "id");
    *user = user_ref_of(core, request->user_id);
    const event_user_t *owner = event_user_find(core, event_index, user->index);
    hf_hold_request_t plain = *request;
    plain.replace_existing = false;
    error = check_available(core, event, &plain, owner, detail);
    return error ? error : check_user_limit(event, &plain, owner, 0);
}

hf_error_t hf_core_book(hf_core_t *core, const hf_hold_request_t *request, const char *order_id,
                        const char *payment_ref, hf_time_ms_t now, uint32_t *order_index,
                        hf_error_detail_t *detail) {
    hf_core_advance(core, now);
    uint32_t event_index;
    if (!hf_core_event(core, request->event_id, &event_index)) return HF_ERROR_EVENT_NOT_FOUND;
    text_key_t order_key;
    user_ref_t user;
    hf_error_t error = book_check(core, request, event_index, order_id, &order_key, &user, detail);
    if (error) return error;
    const hf_event_t *event = core->events[event_index];
    uint32_t index = order_allocate(core, &order_key, event_index, user_intern(core, &user), now);
    hf_order_t *order = &core->orders[index];
    order->seat_count = core->scratch_seat_count;
    order->pool_count = request->pool_count;
    order->item_offset = item_allocate(core, order->seat_count + order->pool_count);
    order->total = items_fill(core, event, request, order->item_offset);
    if (payment_ref && *payment_ref) order->payment_ref = string_store(core, payment_ref, strlen(payment_ref));
    report_order(core, order, NULL);
    order_take(core, index, now, true);
    *order_index = index;
    return HF_OK;
}

/* ---- restore ---- */

/* Resolves stored items into the scratch arrays; stored data that does not resolve is a
 * corrupt store, reported as an invalid request. */
static hf_error_t restore_resolve(hf_core_t *core, const hf_hold_request_t *request,
                                  uint32_t *event_index) {
    const hf_event_t *event = hf_core_event(core, request->event_id, event_index);
    if (!event) return HF_ERROR_EVENT_NOT_FOUND;
    if (request->seat_count + request->pool_count > HF_HOLD_ITEMS_MAX) return HF_ERROR_INVALID_REQUEST;
    hf_error_t error = resolve_seats(core, event, request, NULL);
    if (!error) error = resolve_pools(core, event, request, NULL);
    return error;
}

/* Versions are not stored: a hold changed each of its seats once when made, and once more
 * when it ended (released, expired, or sold by its commit). */
#define ENDED_HOLD_SEAT_CHANGES 2u

static void restore_versions(hf_core_t *core, uint32_t event_index, uint32_t item_offset,
                             uint32_t seat_count, uint32_t changes) {
    hf_event_t *event = core->events[event_index];
    const hf_item_t *items = core->items + item_offset;
    for (uint32_t i = 0; i < seat_count; i++) event->seats[items[i].index].version += changes;
}

/* What restore and revive share: a stored hold's items resolved, its id new, a held one's seats
 * free; then a slot with its stored times and total, status held until the caller decides. */
static hf_error_t stored_hold_place(hf_core_t *core, const hf_stored_hold_t *stored,
                                    uint32_t *index) {
    uint32_t event_index;
    hf_error_t error = restore_resolve(core, &stored->request, &event_index);
    if (error) return error;
    if (!stored->request.user_id || !*stored->request.user_id) return HF_ERROR_INVALID_REQUEST;
    text_key_t hold_id;
    if (hold_id_taken(core, stored->request.hold_id, &hold_id)) return HF_ERROR_INVALID_REQUEST;
    const hf_event_t *event = core->events[event_index];
    if (stored->status == HF_HOLD_HELD) {
        for (uint32_t i = 0; i < stored->request.seat_count; i++)
            if (event->seats[core->scratch_seats[i]].status != HF_SEAT_AVAILABLE)
                return HF_ERROR_SEATS_UNAVAILABLE;
    }
    user_ref_t user = user_ref_of(core, stored->request.user_id);
    *index = hold_allocate(core, &stored->request, &hold_id, event_index, &user);
    hf_hold_t *hold = hold_of(core, *index);
    hold->status = HF_HOLD_HELD;
    hold->created_at_ms = stored->created_at_ms;
    hold->expires_at_ms = stored->expires_at_ms;
    hold->total = stored->total;
    return HF_OK;
}

hf_error_t hf_core_restore_hold(hf_core_t *core, const hf_stored_hold_t *stored) {
    uint32_t index;
    hf_error_t error = stored_hold_place(core, stored, &index);
    if (error) return error;
    hf_hold_t *hold = hold_of(core, index);
    restore_versions(core, hold->event, hold->item_offset, hold->seat_count,
                     stored->status == HF_HOLD_HELD ? 1 : ENDED_HOLD_SEAT_CHANGES);
    if (stored->status == HF_HOLD_HELD) hold_take(core, index, stored->created_at_ms, false);
    else hold->status = stored->status;
    if (hold_status_finished(hold->status)) finished_push(core, index);
    return HF_OK;
}

hf_error_t hf_core_restore_forgotten_hold(hf_core_t *core, const hf_stored_hold_t *stored) {
    if (!hold_status_finished(stored->status)) return HF_ERROR_INVALID_REQUEST;
    uint32_t event_index;
    hf_error_t error = restore_resolve(core, &stored->request, &event_index);
    if (error) return error;
    hf_event_t *event = core->events[event_index];
    for (uint32_t i = 0; i < stored->request.seat_count; i++)
        event->seats[core->scratch_seats[i]].version += ENDED_HOLD_SEAT_CHANGES;
    return HF_OK;
}

hf_error_t hf_core_revive_hold(hf_core_t *core, const hf_stored_hold_t *stored, uint32_t *index) {
    if (!hold_status_finished(stored->status)) return HF_ERROR_INVALID_REQUEST;
    uint32_t revived;
    hf_error_t error = stored_hold_place(core, stored, &revived);
    if (error) return error;
    hold_of(core, revived)->status = stored->status;
    /* It finished long ago, but it is the most recently asked for: kept as if it had just
     * finished, so a client polling it does not send each poll to the store. */
    finished_push(core, revived);
    *index = revived;
    return HF_OK;
}

hf_error_t hf_core_restore_order(hf_core_t *core, const hf_stored_order_t *stored) {
    uint32_t event_index;
    hf_error_t error = restore_resolve(core, &stored->items, &event_index);
    if (error) return error;
    text_key_t order_key;
    if (order_id_taken(core, stored->order_id, &order_key)) return HF_ERROR_INVALID_REQUEST;
    const hf_event_t *event = core->events[event_index];
    if (stored->status == HF_ORDER_CONFIRMED) {
        for (uint32_t i = 0; i < stored->items.seat_count; i++)
            if (event->seats[core->scratch_seats[i]].status != HF_SEAT_AVAILABLE)
                return HF_ERROR_SEATS_UNAVAILABLE;
    }
    uint32_t hold_index = 0;
    if (stored->hold_id && !hf_core_hold_find(core, stored->hold_id, &hold_index))
        return HF_ERROR_HOLD_NOT_FOUND;
    uint32_t index = order_allocate(core, &order_key, event_index,
                                    user_intern_id(core, stored->items.user_id), stored->created_at_ms);
    hf_order_t *order = &core->orders[index];
    order->total = stored->total;
    order->seat_count = stored->items.seat_count;
    order->pool_count = stored->items.pool_count;
    order->item_offset = item_allocate(core, order->seat_count + order->pool_count);
    hf_item_t *items = core->items + order->item_offset;
    for (uint32_t i = 0; i < order->seat_count; i++) items[i] = (hf_item_t){core->scratch_seats[i], 0};
    for (uint32_t i = 0; i < order->pool_count; i++)
        items[order->seat_count + i] = (hf_item_t){core->scratch_pools[i], stored->items.pools[i].quantity};
    if (stored->payment_ref && *stored->payment_ref)
        order->payment_ref = string_store(core, stored->payment_ref, strlen(stored->payment_ref));
    if (stored->hold_id) {
        order->hold = hold_index + 1;
        core->holds[hold_index].order = index + 1;
    }
    order->status = stored->status;
    /* A booking sold its seats itself (a committed hold's change is counted with the hold);
     * a cancel made them available again. */
    uint32_t changes = (stored->hold_id ? 0 : 1) + (stored->status == HF_ORDER_CANCELLED ? 1 : 0);
    restore_versions(core, event_index, order->item_offset, order->seat_count, changes);
    if (stored->status == HF_ORDER_CONFIRMED) order_take(core, index, stored->created_at_ms, false);
    return HF_OK;
}

hf_error_t hf_core_restore_seat(hf_core_t *core, const char *event_id, const char *seat_id,
                                uint32_t version) {
    uint32_t event_index, seat;
    const hf_event_t *event = hf_core_event(core, event_id, &event_index);
    if (!event) return HF_ERROR_EVENT_NOT_FOUND;
    if (!hf_core_seat_find(event, seat_id, &seat)) return HF_ERROR_SEAT_NOT_FOUND;
    core->events[event_index]->seats[seat].version = version;
    return HF_OK;
}

/* ---- invariants ---- */

/* Each row's count of available seats is exact and its free-run bound is not below the
 * longest run of available seats. */
static const char *check_rows(const hf_event_t *event) {
    for (uint32_t r = 0; r < event->row_count; r++) {
        const hf_row_t *row = &event->rows[r];
        uint32_t available = 0, run = 0, longest = 0;
        for (uint32_t i = row->first_seat; i < row->first_seat + row->seat_count; i++) {
            bool free = event->seats[i].status == HF_SEAT_AVAILABLE;
            available += free;
            run = free ? run + 1 : 0;
            if (run > longest) longest = run;
        }
        if (available != row->available) return "a row's available count differs from its seats";
        if (longest > row->free_run_bound) return "a row has a free run longer than its bound";
    }
    return NULL;
}

static const char *check_event(const hf_core_t *core, const hf_event_t *event) {
    const char *fault = check_rows(event);
    if (fault) return fault;
    hf_counts_t counts = {0, 0, 0};
    for (uint32_t s = 0; s < event->section_count; s++) {
        const hf_section_t *section = &event->sections[s];
        hf_counts_t section_counts = {0, 0, 0};
        for (uint32_t i = section->first_seat; i < section->first_seat + section->seat_count; i++) {
            const hf_seat_t *seat = &event->seats[i];
            uint32_t *slots[3] = {&section_counts.available, &section_counts.held, &section_counts.sold};
            (*slots[seat->status])++;
            if (seat->status == HF_SEAT_HELD &&
                (seat->owner == 0 || core->holds[seat->owner - 1].status != HF_HOLD_HELD))
                return "a held seat's owner is not an active hold";
            if (seat->status == HF_SEAT_SOLD &&
                (seat->owner == 0 || core->orders[seat->owner - 1].status != HF_ORDER_CONFIRMED))
                return "a sold seat's owner is not a confirmed order";
        }
        if (memcmp(&section_counts, &section->counts, sizeof counts) != 0)
            return "section counts differ from seat statuses";
        counts.available += section_counts.available;
        counts.held += section_counts.held;
        counts.sold += section_counts.sold;
    }
    if (memcmp(&counts, &event->counts, sizeof counts) != 0) return "event counts differ from seat statuses";
    for (uint32_t p = 0; p < event->pool_count; p++) {
        const hf_pool_t *pool = &event->pools[p];
        if (pool->held < 0 || pool->sold < 0 || pool->held + pool->sold > pool->capacity)
            return "pool held + sold outside 0..capacity";
    }
    return NULL;
}

/* The finished list holds exactly the released and expired holds, the free list exactly the
 * forgotten ones, and the id index exactly the holds that are not forgotten. A list with a
 * repeat would loop, so a walk longer than the table is a fault; equal counts then mean equal
 * sets. */
static const char *check_hold_lists(const hf_core_t *core) {
    uint32_t listed_finished = 0, listed_free = 0, finished = 0, forgotten = 0;
    for (uint32_t h = core->finished_first; h != 0; h = core->hold_states[h - 1].next_finished) {
        if (!hold_status_finished(core->holds[h - 1].status))
            return "the finished list has a hold that is not released or expired";
        if (++listed_finished > core->hold_count) return "the finished list loops";
    }
    for (uint32_t h = core->free_first; h != 0; h = core->hold_states[h - 1].next_finished) {
        if (core->holds[h - 1].status != HF_HOLD_EVICTED) return "the free list has a live hold";
        if (++listed_free > core->hold_count) return "the free list loops";
    }
    for (uint32_t h = 0; h < core->hold_count; h++) {
        const hf_hold_t *hold = &core->holds[h];
        if (hold->status == HF_HOLD_EVICTED) {
            forgotten++;
            continue;
        }
        if (hold_status_finished(hold->status)) finished++;
        uint32_t found;
        if (!hf_core_hold_find(core, hold->id, &found) || found != h)
            return "a hold is not found by its id";
        if (core->hold_states[h].item_capacity < hold->seat_count + hold->pool_count)
            return "a hold has more items than its slot reserves";
    }
    if (listed_finished != finished || finished != core->finished_count)
        return "the finished list differs from the finished holds";
    if (listed_free != forgotten) return "the free list differs from the forgotten holds";
    if (hf_index_map_count(&core->hold_ids) != core->hold_count - forgotten + core->hold_ids_stale)
        return "the id index has entries it should not";
    return NULL;
}

static const char *check_holds(const hf_core_t *core, hf_time_ms_t now) {
    const char *fault = check_hold_lists(core);
    if (fault) return fault;
    for (uint32_t h = 0; h < core->hold_count; h++) {
        const hf_hold_t *hold = &core->holds[h];
        if (hold->status != HF_HOLD_HELD) continue;
        if (hold->expires_at_ms <= now) return "a lapsed hold is still held";
        const hf_event_t *event = core->events[hold->event];
        const hf_item_t *items = core->items + hold->item_offset;
        for (uint32_t i = 0; i < hold->seat_count; i++)
            if (event->seats[items[i].index].owner != h + 1) return "a held hold's seat points elsewhere";
    }
    if (hf_index_map_count(&core->order_ids) != core->order_count)
        return "the order id index has entries it should not";
    for (uint32_t o = 0; o < core->order_count; o++) {
        const hf_order_t *order = &core->orders[o];
        uint32_t found;
        if (!hf_core_order_find(core, order->id, &found) || found != o)
            return "an order is not found by its id";
        if (order->status != HF_ORDER_CONFIRMED) continue;
        const hf_event_t *event = core->events[order->event];
        const hf_item_t *items = core->items + order->item_offset;
        for (uint32_t i = 0; i < order->seat_count; i++)
            if (event->seats[items[i].index].owner != o + 1) return "an order's seat points elsewhere";
    }
    return NULL;
}

/* The record a hold or order names is its user's on its event, and each record's counts are
 * the sums of its user's held holds and confirmed orders on that event. The sums are kept
 * per record: users' own records first, then those of core->event_users. */
static uint32_t owner_slot(const hf_core_t *core, uint32_t handle) {
    return handle & OWNER_IN_TABLE ? core->user_count + (handle & ~OWNER_IN_TABLE) : handle;
}

static bool record_counts_equal(const event_user_t *record, uint32_t held, uint32_t sold) {
    return record->held_units == held && record->sold_units == sold;
}

static const char *check_owner_sums(const hf_core_t *core, const uint32_t *held,
                                    const uint32_t *sold) {
    for (uint32_t u = 0; u < core->user_count; u++) {
        if (core->users[u].first_event == 0) continue;
        if (!record_counts_equal(&core->users[u].first_event_record, held[u], sold[u]))
            return "a user's units on an event differ from its holds and orders";
    }
    for (uint32_t r = 0; r < core->event_user_count; r++) {
        uint32_t slot = core->user_count + r;
        if (!record_counts_equal(&core->event_users[r], held[slot], sold[slot]))
            return "a user's units on an event differ from its holds and orders";
    }
    return NULL;
}

static const char *check_owners(const hf_core_t *core) {
    size_t slots = (size_t)core->user_count + core->event_user_count + 1;
    uint32_t *held = calloc(slots, sizeof *held), *sold = calloc(slots, sizeof *sold);
    if (!held || !sold) abort();
    const char *fault = NULL;
    for (uint32_t h = 0; h < core->hold_count && !fault; h++) {
        const hf_hold_t *hold = &core->holds[h];
        if (hold->status != HF_HOLD_HELD) continue;
        if (event_user_handle(core, hold->event, hold->user) != hold->owner)
            fault = "a hold names another user's record";
        held[owner_slot(core, hold->owner)] +=
            item_units(core->items + hold->item_offset, hold->seat_count, hold->pool_count);
    }
    for (uint32_t o = 0; o < core->order_count && !fault; o++) {
        const hf_order_t *order = &core->orders[o];
        if (order->status != HF_ORDER_CONFIRMED) continue;
        if (event_user_handle(core, order->event, order->user) != order->owner)
            fault = "an order names another user's record";
        sold[owner_slot(core, order->owner)] +=
            item_units(core->items + order->item_offset, order->seat_count, order->pool_count);
    }
    if (!fault) fault = check_owner_sums(core, held, sold);
    free(held);
    free(sold);
    return fault;
}

const char *hf_core_check(const hf_core_t *core, hf_time_ms_t now) {
    for (uint32_t e = 0; e < core->event_count; e++) {
        const char *fault = check_event(core, core->events[e]);
        if (fault) return fault;
    }
    const char *fault = check_holds(core, now);
    return fault ? fault : check_owners(core);
}
