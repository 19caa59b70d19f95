/* The waiting rooms (queue.h): tickets in join order, positions from a Fenwick tree, a
 * continuously refilled admission bucket, abandonment and token expiry on the rooms' own
 * heap of deadlines (timer.h), and the finished tickets kept up to a limit. */
#include "core/estimate.h"
#include "core/internal.h"
#include "core/line.h"
#include "core/queue.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Float dust of the bucket's arithmetic: a bucket this close to one unit holds one. */
#define BUCKET_EPSILON 1e-9

/* A user in one room: the user's id, stored once, and the user's latest ticket. */
typedef struct entry {
    uint32_t event;
    uint32_t name; /* offset in queue->names, NUL-terminated */
    uint32_t name_length;
    uint32_t ticket; /* NO_INDEX once it is forgotten */
} entry_t;

typedef struct queue_state {
    room_t **rooms; /* by event index; NULL for an event without a line yet */
    uint32_t room_capacity;
    hf_ticket_t *tickets;
    uint32_t ticket_count, ticket_capacity;
    hf_index_map_t ticket_ids; /* a ticket's id -> its index; the id lives in the ticket */
    uint32_t ticket_ids_stale; /* entries of forgotten tickets (see holds.h's ids_stale) */
    entry_t *entries;
    uint32_t entry_count, entry_capacity;
    hf_index_map_t entry_ids; /* (event, user id) -> entry index */
    char *names;
    uint32_t names_length, names_capacity;
    hf_timer_t timer; /* HF_TIMER_QUEUE_ADMIT and HF_TIMER_QUEUE_TICKET entries */
    /* Finished tickets in the order they finished, and slots of forgotten ones (index + 1). */
    uint32_t finished_first, finished_last, finished_count, finished_max;
    uint32_t free_first;
} queue_state_t;

uint32_t hf_core_rooms_enabled(const hf_core_t *core) { return core->events.rooms_enabled; }

/* ---- state ---- */

static queue_state_t *queue_of(hf_core_t *core) {
    if (core->queue) return core->queue;
    core->queue = calloc(1, sizeof *core->queue);
    if (!core->queue) abort();
    core->queue->finished_max = HF_QUEUE_FINISHED_TICKETS_MAX;
    return core->queue;
}

void queue_free(hf_core_t *core) {
    queue_state_t *queue = core->queue;
    if (!queue) return;
    for (uint32_t i = 0; i < queue->room_capacity; i++) {
        if (queue->rooms[i]) line_free(queue->rooms[i]);
    }
    free(queue->rooms);
    free(queue->tickets);
    free(queue->entries);
    free(queue->names);
    hf_index_map_free(&queue->ticket_ids);
    hf_index_map_free(&queue->entry_ids);
    hf_timer_free(&queue->timer);
    free(queue);
    core->queue = NULL;
}

static room_t *room_find(const hf_core_t *core, uint32_t event_index) {
    const queue_state_t *queue = core->queue;
    if (!queue || event_index >= queue->room_capacity) return NULL;
    return queue->rooms[event_index];
}

static double bucket_capacity(const hf_room_definition_t *settings) {
    double capacity = settings->admit_per_s / 10.0;
    return capacity < 1.0 ? 1.0 : capacity;
}

/* The event's room, made when it has none yet: with a full bucket at a first join (an idle
 * room), an empty one when restored (admissions resume at admit_per_s after a restart, with
 * no burst, and everyone keeps the place they had). */
static room_t *room_make(hf_core_t *core, uint32_t event_index, hf_time_ms_t now, bool full) {
    queue_state_t *queue = queue_of(core);
    if (event_index >= queue->room_capacity) {
        uint32_t old = queue->room_capacity;
        queue->rooms = grow(queue->rooms, &queue->room_capacity, event_index + 1,
                            sizeof *queue->rooms);
        memset(queue->rooms + old, 0, (queue->room_capacity - old) * sizeof *queue->rooms);
    }
    if (queue->rooms[event_index]) return queue->rooms[event_index];
    room_t *room = calloc(1, sizeof *room);
    if (!room) abort();
    room->head = 1;
    room->tokens = full ? bucket_capacity(&core->events.slots[event_index]->waiting_room) : 0.0;
    room->refilled_ms = now;
    room->admit_armed_ms = INT64_MAX;
    room->open_armed_ms = INT64_MAX;
    hf_admission_window_init(&room->window);
    queue->rooms[event_index] = room;
    /* A room made before its opening (or restored: its pre-queue is placed again from the
     * seed) lines up at opens_at; one made after has no pre-queue. */
    hf_time_ms_t opens_at = core->events.slots[event_index]->waiting_room.opens_at_ms;
    room->lined = opens_at == 0 || (full && opens_at <= now);
    if (!room->lined) {
        room->open_armed_ms = opens_at;
        hf_timer_push(&queue->timer, opens_at, HF_TIMER_QUEUE_OPEN, event_index);
    }
    return room;
}

/* ---- tickets ---- */

static bool ticket_key_match(const void *context, uint32_t index) {
    const record_key_t *key = context;
    const hf_ticket_t *ticket = &key->core->queue->tickets[index];
    return ticket->status != HF_TICKET_FORGOTTEN && id_field_equal(ticket->id, &key->id);
}

static bool ticket_index_find(const hf_core_t *core, const text_key_t *id, uint32_t *index) {
    if (!core->queue || id->length > HF_SERVER_ID_SIZE) return false;
    record_key_t key = {core, *id};
    return hf_index_map_find(&core->queue->ticket_ids, id->hash, ticket_key_match, &key, index);
}

const hf_ticket_t *hf_core_ticket_find(const hf_core_t *core, const char *ticket_id,
                                       uint32_t *index) {
    uint32_t found;
    if (!ticket_id) return NULL;
    text_key_t key = text_key_of(ticket_id, strlen(ticket_id));
    if (!ticket_index_find(core, &key, &found)) return NULL;
    if (index) *index = found;
    return &core->queue->tickets[found];
}

const hf_ticket_t *hf_core_ticket_at(const hf_core_t *core, uint32_t index) {
    if (!core->queue || index >= core->queue->ticket_count) return NULL;
    const hf_ticket_t *ticket = &core->queue->tickets[index];
    return ticket->status == HF_TICKET_FORGOTTEN ? NULL : ticket;
}

const char *hf_core_ticket_user(const hf_core_t *core, uint32_t index) {
    const queue_state_t *queue = core->queue;
    return queue->names + queue->entries[queue->tickets[index].entry].name;
}

uint64_t hf_core_ticket_change(const hf_core_t *core, uint32_t index) {
    return core->queue->tickets[index].last_change;
}

/* ---- users in rooms ---- */

static uint32_t entry_hash(uint32_t event_index, const char *user_id, size_t length) {
    uint32_t hash = hf_map_hash(user_id, length) ^ (event_index * 0x9E3779B1u);
    return hash ? hash : 1;
}

typedef struct entry_key {
    const queue_state_t *queue;
    uint32_t event;
    const char *user_id;
    size_t length;
} entry_key_t;

static bool entry_match(const void *context, uint32_t index) {
    const entry_key_t *key = context;
    const entry_t *entry = &key->queue->entries[index];
    return entry->event == key->event && entry->name_length == key->length &&
           memcmp(key->queue->names + entry->name, key->user_id, key->length) == 0;
}

/* The user's entry in the room, made when missing. */
static uint32_t entry_intern(queue_state_t *queue, uint32_t event_index, const char *user_id,
                             size_t length) {
    uint32_t hash = entry_hash(event_index, user_id, length), index;
    entry_key_t key = {queue, event_index, user_id, length};
    if (hf_index_map_find(&queue->entry_ids, hash, entry_match, &key, &index)) return index;
    queue->names = grow(queue->names, &queue->names_capacity,
                        queue->names_length + (uint32_t)length + 1, 1);
    uint32_t name = queue->names_length;
    memcpy(queue->names + name, user_id, length);
    queue->names[name + length] = '\0';
    queue->names_length += (uint32_t)length + 1;
    queue->entries = grow(queue->entries, &queue->entry_capacity, queue->entry_count + 1,
                          sizeof *queue->entries);
    index = queue->entry_count++;
    queue->entries[index] = (entry_t){event_index, name, (uint32_t)length, NO_INDEX};
    hf_index_map_insert(&queue->entry_ids, hash, index);
    return index;
}

/* The user's current ticket in the room: waiting, or admitted (a token not yet expired, as
 * hf_core_advance expires what is due first); else NO_INDEX. */
static uint32_t entry_live_ticket(const queue_state_t *queue, uint32_t entry_index) {
    uint32_t index = queue->entries[entry_index].ticket;
    if (index == NO_INDEX) return NO_INDEX;
    uint8_t status = queue->tickets[index].status;
    return status == HF_TICKET_WAITING || status == HF_TICKET_ADMITTED ? index : NO_INDEX;
}

/* ---- finished tickets ---- */

static void ticket_finished_push(queue_state_t *queue, uint32_t index) {
    queue->tickets[index].next_finished = 0;
    if (queue->finished_last) queue->tickets[queue->finished_last - 1].next_finished = index + 1;
    else queue->finished_first = index + 1;
    queue->finished_last = index + 1;
    queue->finished_count++;
}

static void ticket_ids_rebuild(queue_state_t *queue) {
    hf_index_map_clear(&queue->ticket_ids);
    for (uint32_t i = 0; i < queue->ticket_count; i++) {
        const hf_ticket_t *ticket = &queue->tickets[i];
        if (ticket->status == HF_TICKET_FORGOTTEN) continue;
        hf_index_map_insert(&queue->ticket_ids, hf_map_hash(ticket->id, strlen(ticket->id)), i);
    }
    queue->ticket_ids_stale = 0;
}

static void ticket_forget_first(queue_state_t *queue) {
    uint32_t index = queue->finished_first - 1;
    hf_ticket_t *ticket = &queue->tickets[index];
    queue->finished_first = ticket->next_finished;
    if (!queue->finished_first) queue->finished_last = 0;
    queue->finished_count--;
    entry_t *entry = &queue->entries[ticket->entry];
    if (entry->ticket == index) entry->ticket = NO_INDEX;
    ticket->status = HF_TICKET_FORGOTTEN;
    ticket->id[0] = '\0';
    ticket->next_finished = queue->free_first;
    queue->free_first = index + 1;
    if (++queue->ticket_ids_stale > hf_index_map_count(&queue->ticket_ids) / 2)
        ticket_ids_rebuild(queue);
}

uint32_t queue_evict(hf_core_t *core, uint64_t durable_changes) {
    queue_state_t *queue = core->queue;
    uint32_t forgotten = 0;
    while (queue->finished_count > queue->finished_max &&
           queue->tickets[queue->finished_first - 1].last_change <= durable_changes) {
        ticket_forget_first(queue);
        forgotten++;
    }
    return forgotten;
}

uint32_t hf_core_tickets_finished(const hf_core_t *core) {
    return core->queue ? core->queue->finished_count : 0;
}

void hf_core_set_tickets_finished_max(hf_core_t *core, uint32_t finished_max) {
    queue_of(core)->finished_max = finished_max;
}

/* A slot for a new ticket: a forgotten one's, or a new one. */
static uint32_t ticket_slot_take(queue_state_t *queue) {
    if (queue->free_first) {
        uint32_t index = queue->free_first - 1;
        queue->free_first = queue->tickets[index].next_finished;
        return index;
    }
    queue->tickets = grow(queue->tickets, &queue->ticket_capacity, queue->ticket_count + 1,
                          sizeof *queue->tickets);
    return queue->ticket_count++;
}

/* The ticket's record as it stands, numbered as its newest change. */
static void ticket_emit(hf_core_t *core, uint32_t index, bool created, hf_time_ms_t at_ms) {
    hf_ticket_t *ticket = &core->queue->tickets[index];
    ticket_record_t record = {ticket->id,     created ? hf_core_ticket_user(core, index) : NULL,
                              ticket->event,  ticket->seq,
                              ticket->status, ticket->admitted_at_ms};
    record_ticket(core, &record, created, at_ms);
    ticket->last_change = core->change_count;
}

/* ---- the rooms' deadlines ---- */

static bool entry_stale(const void *context, const hf_timer_entry_t *entry) {
    const hf_core_t *core = context;
    const queue_state_t *queue = core->queue;
    if (entry->kind == HF_TIMER_QUEUE_ADMIT) {
        const room_t *room = room_find(core, entry->index);
        return !room || room->admit_armed_ms != entry->deadline_ms;
    }
    if (entry->kind == HF_TIMER_QUEUE_OPEN) {
        const room_t *room = room_find(core, entry->index);
        return !room || room->lined || room->open_armed_ms != entry->deadline_ms;
    }
    const hf_ticket_t *ticket = &queue->tickets[entry->index];
    return (ticket->status != HF_TICKET_WAITING && ticket->status != HF_TICKET_ADMITTED) ||
           ticket->armed_ms != entry->deadline_ms;
}

static void timer_prune(hf_core_t *core) { hf_timer_prune(&core->queue->timer, entry_stale, core); }

bool queue_entry_stale(const hf_core_t *core, const hf_timer_entry_t *entry) {
    return entry_stale(core, entry);
}

hf_timer_t *queue_timer(const hf_core_t *core) { return core->queue ? &core->queue->timer : NULL; }

static void ticket_arm(queue_state_t *queue, uint32_t index, hf_time_ms_t deadline) {
    queue->tickets[index].armed_ms = deadline;
    hf_timer_push(&queue->timer, deadline, HF_TIMER_QUEUE_TICKET, index);
}

int64_t hf_core_ticket_issued_s(const hf_core_t *core, uint32_t index) {
    hf_time_ms_t at = core->queue->tickets[index].admitted_at_ms;
    return at >= 0 ? at / 1000 : (at - 999) / 1000;
}

int64_t hf_core_ticket_expires_s(const hf_core_t *core, uint32_t index) {
    const hf_ticket_t *ticket = &core->queue->tickets[index];
    return hf_core_ticket_issued_s(core, index) +
           core->events.slots[ticket->event]->waiting_room.token_ttl_s;
}

/* ---- admission ---- */

static void room_refill(room_t *room, const hf_room_definition_t *settings, hf_time_ms_t now) {
    if (now <= room->refilled_ms) return;
    room->tokens += (double)(now - room->refilled_ms) * settings->admit_per_s / 1000.0;
    double capacity = bucket_capacity(settings);
    if (room->tokens > capacity) room->tokens = capacity;
    room->refilled_ms = now;
}

/* The lowest waiting join number's ticket: the head moves forward past tickets that left,
 * a word of join numbers at a time. */
static uint32_t room_head(room_t *room) {
    while (room->head <= room->seq_count) {
        uint32_t word = (room->head - 1) / 64;
        uint64_t ahead = room->bits[word] >> ((room->head - 1) % 64);
        if (ahead) {
            room->head += (uint32_t)__builtin_ctzll(ahead);
            return room->seq_tickets[room->head - 1];
        }
        room->head = (word + 1) * 64 + 1;
    }
    return NO_INDEX;
}

static void ticket_admit(hf_core_t *core, room_t *room, uint32_t index, hf_time_ms_t now) {
    queue_state_t *queue = core->queue;
    hf_ticket_t *ticket = &queue->tickets[index];
    ticket->status = HF_TICKET_ADMITTED;
    ticket->admitted_at_ms = now;
    line_leave(room, ticket->seq);
    room->waiting--;
    room->active++;
    room->tokens -= 1.0;
    room->admissions++;
    hf_admission_window_count(&room->window, now);
    ticket_arm(queue, index, hf_core_ticket_expires_s(core, index) * 1000);
    ticket_emit(core, index, false, now);
}

static bool room_has_slot(const room_t *room, const hf_room_definition_t *settings) {
    return settings->max_active == 0 || room->active < settings->max_active;
}

/* Admits from the head of the line while the bucket holds a unit and max_active allows, then
 * arms the next admission when people still wait and only the bucket holds them back. */
static void room_admit(hf_core_t *core, uint32_t event_index, hf_time_ms_t now) {
    queue_state_t *queue = core->queue;
    room_t *room = queue->rooms[event_index];
    const hf_room_definition_t *settings = &core->events.slots[event_index]->waiting_room;
    room_refill(room, settings, now);
    if (!room->lined) return; /* admission starts once the pre-queue has its places */
    while (room->waiting > 0 && room->tokens >= 1.0 - BUCKET_EPSILON &&
           room_has_slot(room, settings)) {
        uint32_t index = room_head(room);
        assert(index != NO_INDEX);
        ticket_admit(core, room, index, now);
    }
    if (room->waiting == 0 || !room_has_slot(room, settings)) return;
    double missing = 1.0 - room->tokens;
    hf_time_ms_t next = now + (hf_time_ms_t)ceil(missing * 1000.0 / settings->admit_per_s);
    if (next <= now) next = now + 1;
    if (next == room->admit_armed_ms) return;
    room->admit_armed_ms = next;
    hf_timer_push(&queue->timer, next, HF_TIMER_QUEUE_ADMIT, event_index);
}

bool queue_room_exists(const hf_core_t *core, uint32_t event_index) {
    return room_find(core, event_index) != NULL;
}

/* The bucket fills at the new rate up to the new size; the next admission is due at once. */
void queue_room_changed(hf_core_t *core, uint32_t event_index, hf_time_ms_t now) {
    room_t *room = room_find(core, event_index);
    if (!room) return;
    const hf_room_definition_t *settings = &core->events.slots[event_index]->waiting_room;
    room_refill(room, settings, now);
    /* A moved opens_at (only ever before the opening: event_update.c) moves the opening. */
    if (!room->lined && !room->opening && room->open_armed_ms != settings->opens_at_ms) {
        room->open_armed_ms = settings->opens_at_ms;
        hf_timer_push(&core->queue->timer, settings->opens_at_ms, HF_TIMER_QUEUE_OPEN, event_index);
    }
    if (room->waiting == 0 || room->admit_armed_ms <= now) return;
    room->admit_armed_ms = now;
    hf_timer_push(&core->queue->timer, now, HF_TIMER_QUEUE_ADMIT, event_index);
}

/* A ticket leaves the line or its slot: finished with status at at_ms. */
static void ticket_finish(hf_core_t *core, uint32_t index, uint8_t status, hf_time_ms_t at_ms) {
    queue_state_t *queue = core->queue;
    hf_ticket_t *ticket = &queue->tickets[index];
    room_t *room = queue->rooms[ticket->event];
    if (ticket->status == HF_TICKET_WAITING) {
        line_leave(room, ticket->seq);
        room->waiting--;
    } else {
        assert(ticket->status == HF_TICKET_ADMITTED);
        room->active--;
    }
    ticket->status = status;
    ticket_finished_push(queue, index);
    ticket_emit(core, index, false, at_ms);
}

/* A ticket's deadline: a waiting ticket not polled since is abandoned (one polled since is
 * armed again at its new deadline), an admitted one's token expires. */
static void ticket_due(hf_core_t *core, uint32_t index, hf_time_ms_t now) {
    queue_state_t *queue = core->queue;
    hf_ticket_t *ticket = &queue->tickets[index];
    const hf_room_definition_t *settings = &core->events.slots[ticket->event]->waiting_room;
    if (ticket->status == HF_TICKET_ADMITTED) {
        hf_time_ms_t at = ticket->armed_ms;
        ticket_finish(core, index, HF_TICKET_EXPIRED, at);
        room_admit(core, ticket->event, now);
        return;
    }
    /* A pre-queue ticket's clock starts at opens_at, and none runs out before it has its
     * place: nobody can be dropped from a line that is still being drawn. */
    hf_time_ms_t seen = ticket->last_seen_ms;
    if (ticket->seq <= queue->rooms[ticket->event]->pre_count && seen < settings->opens_at_ms)
        seen = settings->opens_at_ms;
    hf_time_ms_t due = seen + settings->abandon_after_ms;
    if (!queue->rooms[ticket->event]->lined && due <= now) due = now + settings->abandon_after_ms;
    if (due > now) ticket_arm(queue, index, due);
    else ticket_finish(core, index, HF_TICKET_ABANDONED, due);
}

void queue_admit_due(hf_core_t *core, const hf_timer_entry_t *entry, hf_time_ms_t now) {
    core->queue->rooms[entry->index]->admit_armed_ms = INT64_MAX;
    room_admit(core, entry->index, now);
}

void queue_ticket_due(hf_core_t *core, const hf_timer_entry_t *entry, hf_time_ms_t now) {
    ticket_due(core, entry->index, now);
}

/* A slice of the opening; the next is due a millisecond later, so the loop answers what
 * arrived meanwhile (hf_core_advance runs every entry due at its now). Once lined up, the
 * admissions start. */
void queue_open_due(hf_core_t *core, const hf_timer_entry_t *entry, hf_time_ms_t now) {
    room_t *room = core->queue->rooms[entry->index];
    const hf_room_definition_t *settings = &core->events.slots[entry->index]->waiting_room;
    room->open_armed_ms = INT64_MAX;
    if (line_open_step(room, settings->shuffle_seed)) {
        room_admit(core, entry->index, now);
        return;
    }
    room->open_armed_ms = now + 1;
    hf_timer_push(&core->queue->timer, now + 1, HF_TIMER_QUEUE_OPEN, entry->index);
}

/* ---- commands ---- */

/* A new ticket at the back of the line. */
static uint32_t ticket_join(hf_core_t *core, uint32_t event_index, uint32_t entry_index,
                            const text_key_t *id, hf_time_ms_t now) {
    queue_state_t *queue = core->queue;
    room_t *room = queue->rooms[event_index];
    uint32_t index = ticket_slot_take(queue);
    hf_ticket_t *ticket = &queue->tickets[index];
    memset(ticket, 0, sizeof *ticket);
    text_key_t key = server_id_copy(ticket->id, id);
    hf_index_map_insert(&queue->ticket_ids, key.hash, index);
    ticket->status = HF_TICKET_WAITING;
    ticket->event = event_index;
    ticket->entry = entry_index;
    ticket->seq = room->seq_count + 1;
    line_reserve(room, ticket->seq);
    room->seq_tickets[room->seq_count++] = index;
    line_enter(room, ticket->seq);
    room->waiting++;
    ticket->last_seen_ms = now;
    const hf_room_definition_t *settings = &core->events.slots[event_index]->waiting_room;
    hf_time_ms_t seen = now;
    if (!room->lined && now < settings->opens_at_ms) {
        room->pre_count = ticket->seq; /* a join of the pre-queue: its clock starts at opens_at */
        seen = settings->opens_at_ms;
    }
    ticket_arm(queue, index, seen + settings->abandon_after_ms);
    queue->entries[entry_index].ticket = index;
    ticket_emit(core, index, true, now);
    /* Admitted by the room's next admission, due at once when none is armed: the join
     * answers its place in the line, and the admission is a change of its own. */
    if (room->admit_armed_ms == INT64_MAX) {
        room->admit_armed_ms = now;
        hf_timer_push(&queue->timer, now, HF_TIMER_QUEUE_ADMIT, event_index);
    }
    return index;
}

/* The event of a queue command with its room's settings checked. */
static hf_error_t room_event(hf_core_t *core, const char *event_id, uint32_t *event_index) {
    const hf_event_t *event = hf_core_event(core, event_id, event_index);
    if (!event) return HF_ERROR_EVENT_NOT_FOUND;
    if (event->cancelled) return HF_ERROR_EVENT_CANCELLED;
    if (!event->waiting_room.enabled) return HF_ERROR_WAITING_ROOM_DISABLED;
    return HF_OK;
}

hf_error_t hf_core_queue_join(hf_core_t *core, const char *event_id, const char *user_id,
                              const char *ticket_id, hf_time_ms_t now, uint32_t *index,
                              bool *created) {
    command_at(core, now);
    *created = false;
    uint32_t event_index;
    hf_error_t error = room_event(core, event_id, &event_index);
    if (error) return error;
    size_t length = user_id ? strlen(user_id) : 0;
    if (length == 0 || length > HF_USER_ID_SIZE_MAX) return HF_ERROR_INVALID_REQUEST;
    room_t *room = room_make(core, event_index, now, true);
    queue_state_t *queue = core->queue;
    uint32_t entry_index = entry_intern(queue, event_index, user_id, length);
    uint32_t live = entry_live_ticket(queue, entry_index);
    if (live != NO_INDEX) {
        if (queue->tickets[live].status == HF_TICKET_WAITING)
            queue->tickets[live].last_seen_ms = now;
        *index = live;
        return HF_OK;
    }
    if (room->waiting >= core->events.slots[event_index]->waiting_room.max_waiting)
        return HF_ERROR_WAITING_ROOM_FULL;
    if (room->seq_count >= HF_QUEUE_JOINS_MAX) return HF_ERROR_CAPACITY;
    if (!ticket_id) return HF_ERROR_INVALID_REQUEST;
    text_key_t key = server_id_key(ticket_id);
    uint32_t taken;
    if (key.length == 0 || ticket_index_find(core, &key, &taken)) return HF_ERROR_INVALID_REQUEST;
    *index = ticket_join(core, event_index, entry_index, &key, now);
    *created = true;
    timer_prune(core);
    return HF_OK;
}

/* The event's ticket named ticket_id (a ticket of another event is not found). */
static hf_error_t room_ticket(hf_core_t *core, const char *event_id, const char *ticket_id,
                              uint32_t *index) {
    uint32_t event_index;
    hf_error_t error = room_event(core, event_id, &event_index);
    if (error == HF_ERROR_WAITING_ROOM_DISABLED) return HF_ERROR_TICKET_NOT_FOUND;
    if (error) return error;
    const hf_ticket_t *ticket = hf_core_ticket_find(core, ticket_id, index);
    if (!ticket || ticket->event != event_index) return HF_ERROR_TICKET_NOT_FOUND;
    return HF_OK;
}

hf_error_t hf_core_queue_poll(hf_core_t *core, const char *event_id, const char *ticket_id,
                              hf_time_ms_t now, uint32_t *index) {
    command_at(core, now);
    hf_error_t error = room_ticket(core, event_id, ticket_id, index);
    if (error) return error;
    hf_ticket_t *ticket = &core->queue->tickets[*index];
    if (ticket->status == HF_TICKET_WAITING) ticket->last_seen_ms = now;
    return HF_OK;
}

hf_error_t hf_core_queue_complete(hf_core_t *core, const char *event_id, const char *ticket_id,
                                  hf_time_ms_t now, uint32_t *index) {
    command_at(core, now);
    hf_error_t error = room_ticket(core, event_id, ticket_id, index);
    if (error) return error;
    hf_ticket_t *ticket = &core->queue->tickets[*index];
    if (ticket->status != HF_TICKET_WAITING && ticket->status != HF_TICKET_ADMITTED) return HF_OK;
    bool admitted = ticket->status == HF_TICKET_ADMITTED;
    ticket_finish(core, *index, HF_TICKET_COMPLETED, now);
    /* A freed max_active slot goes to the head of the line at once. */
    if (admitted) room_admit(core, ticket->event, now);
    timer_prune(core);
    return HF_OK;
}

hf_admission_t hf_core_queue_admission(const hf_core_t *core, uint32_t event_index,
                                       const char *ticket_id, const char *user_id) {
    uint32_t index;
    const hf_ticket_t *ticket = hf_core_ticket_find(core, ticket_id, &index);
    if (!ticket || ticket->event != event_index || !user_id ||
        strcmp(hf_core_ticket_user(core, index), user_id) != 0)
        return HF_ADMISSION_INVALID;
    if (ticket->status == HF_TICKET_ADMITTED) return HF_ADMISSION_VALID;
    return ticket->status == HF_TICKET_EXPIRED ? HF_ADMISSION_EXPIRED : HF_ADMISSION_INVALID;
}

/* ---- reads ---- */

uint32_t hf_core_ticket_position(const hf_core_t *core, uint32_t index) {
    const hf_ticket_t *ticket = &core->queue->tickets[index];
    if (ticket->status != HF_TICKET_WAITING || hf_core_ticket_pre_queue(core, index)) return 0;
    const room_t *room = core->queue->rooms[ticket->event];
    return line_prefix(room, line_place(room, ticket->seq));
}

bool hf_core_ticket_pre_queue(const hf_core_t *core, uint32_t index) {
    const hf_ticket_t *ticket = &core->queue->tickets[index];
    /* Only a waiting ticket's room is sure to exist (a finished one may be revived alone). */
    if (ticket->status != HF_TICKET_WAITING) return false;
    const room_t *room = core->queue->rooms[ticket->event];
    return !room->lined && ticket->seq <= room->pre_count;
}

int64_t hf_core_ticket_wait_s(const hf_core_t *core, uint32_t index, uint32_t position,
                              hf_time_ms_t now) {
    const hf_ticket_t *ticket = &core->queue->tickets[index];
    const room_t *room = core->queue->rooms[ticket->event];
    const hf_room_definition_t *settings = &core->events.slots[ticket->event]->waiting_room;
    hf_estimate_room_t estimate = {settings, &room->window, !room_has_slot(room, settings)};
    return hf_estimate_wait_s(&estimate, position, now);
}

uint32_t hf_core_room_waiting(const hf_core_t *core, uint32_t event_index) {
    return room_find(core, event_index) ? room_find(core, event_index)->waiting : 0;
}

uint32_t hf_core_room_active(const hf_core_t *core, uint32_t event_index) {
    return room_find(core, event_index) ? room_find(core, event_index)->active : 0;
}

uint64_t hf_core_room_admissions(const hf_core_t *core, uint32_t event_index) {
    return room_find(core, event_index) ? room_find(core, event_index)->admissions : 0;
}

/* ---- invariants (hf_core_check) ---- */

static const char *room_check(const hf_core_t *core, uint32_t event_index, const room_t *room) {
    const queue_state_t *queue = core->queue;
    uint32_t waiting = 0, active = 0;
    for (uint32_t place = 1; place <= room->seq_count; place++) {
        uint32_t index = room->seq_tickets[place - 1];
        bool bit = (room->bits[(place - 1) / 64] >> ((place - 1) % 64)) & 1;
        const hf_ticket_t *ticket = index == NO_INDEX ? NULL : &queue->tickets[index];
        /* A slot reused by another ticket: the one of this place was finished. */
        if (ticket && (ticket->event != event_index || line_place(room, ticket->seq) != place))
            ticket = NULL;
        bool is_waiting = ticket && ticket->status == HF_TICKET_WAITING;
        if (bit != is_waiting) return "a place's bit differs from its ticket";
        if (!ticket) continue;
        if (is_waiting && place < room->head) return "a waiting ticket is ahead of the line's head";
        waiting += is_waiting;
        active += ticket->status == HF_TICKET_ADMITTED;
        if (line_prefix(room, place) != waiting) return "a position differs from the tickets ahead";
    }
    if (room->lined && room->opening) return "a room lined up with its opening still running";
    if (waiting != room->waiting) return "a room's waiting count differs from its tickets";
    if (active != room->active) return "a room's admitted count differs from its tickets";
    return NULL;
}

const char *queue_check(const hf_core_t *core) {
    const queue_state_t *queue = core->queue;
    if (!queue) return NULL;
    for (uint32_t e = 0; e < queue->room_capacity; e++) {
        const char *fault = queue->rooms[e] ? room_check(core, e, queue->rooms[e]) : NULL;
        if (fault) return fault;
    }
    uint32_t finished = 0;
    for (uint32_t i = 0; i < queue->ticket_count; i++) {
        uint8_t status = queue->tickets[i].status;
        finished += status >= HF_TICKET_COMPLETED && status <= HF_TICKET_ABANDONED;
    }
    return finished == queue->finished_count ? NULL : "the finished tickets' count is off";
}

/* ---- restore ---- */

/* A stored ticket placed as the store has it, with no record and no deadline. */
static hf_error_t stored_place(hf_core_t *core, const hf_stored_ticket_t *stored,
                               uint32_t *event_index, uint32_t *index) {
    const hf_event_t *event = hf_core_event(core, stored->event_id, event_index);
    if (!event) return HF_ERROR_EVENT_NOT_FOUND;
    size_t length = stored->user_id ? strlen(stored->user_id) : 0;
    if (event->waiting_room.admit_per_s <= 0 ||
        /* a room turned off keeps its settings */ length == 0 || length > HF_USER_ID_SIZE_MAX ||
        stored->status > HF_TICKET_ABANDONED || !stored->ticket_id || stored->seq == 0)
        return HF_ERROR_INVALID_REQUEST;
    queue_of(core);
    text_key_t key = server_id_key(stored->ticket_id);
    uint32_t taken;
    if (key.length == 0 || ticket_index_find(core, &key, &taken)) return HF_ERROR_INVALID_REQUEST;
    queue_state_t *queue = core->queue;
    uint32_t entry_index = entry_intern(queue, *event_index, stored->user_id, length);
    *index = ticket_slot_take(queue);
    hf_ticket_t *ticket = &queue->tickets[*index];
    memset(ticket, 0, sizeof *ticket);
    key = server_id_copy(ticket->id, &key);
    hf_index_map_insert(&queue->ticket_ids, key.hash, *index);
    ticket->status = stored->status;
    ticket->event = *event_index;
    ticket->entry = entry_index;
    ticket->seq = stored->seq;
    ticket->admitted_at_ms = stored->admitted_at_ms;
    return HF_OK;
}

hf_error_t hf_core_restore_ticket(hf_core_t *core, const hf_stored_ticket_t *stored,
                                  hf_time_ms_t now) {
    uint32_t event_index, index;
    const hf_event_t *event = hf_core_event(core, stored->event_id, &event_index);
    if (!event) return HF_ERROR_EVENT_NOT_FOUND;
    if (event->waiting_room.admit_per_s <= 0) return HF_ERROR_INVALID_REQUEST;
    room_t *room = room_make(core, event_index, now, false);
    if (stored->seq <= room->seq_count) return HF_ERROR_INVALID_REQUEST;
    hf_error_t error = stored_place(core, stored, &event_index, &index);
    if (error) return error;
    queue_state_t *queue = core->queue;
    line_reserve(room, stored->seq);
    while (room->seq_count + 1 < stored->seq) room->seq_tickets[room->seq_count++] = NO_INDEX;
    room->seq_tickets[room->seq_count++] = index;
    queue->entries[queue->tickets[index].entry].ticket = index;
    /* Joined before opens_at: of the pre-queue, placed again by the opening from the seed. */
    hf_time_ms_t opens_at = event->waiting_room.opens_at_ms;
    if (stored->created_at_ms < opens_at) room->pre_count = stored->seq;
    if (stored->status == HF_TICKET_WAITING) {
        line_enter(room, stored->seq);
        room->waiting++;
        queue->tickets[index].last_seen_ms = now;
        hf_time_ms_t seen = stored->seq <= room->pre_count && now < opens_at ? opens_at : now;
        ticket_arm(queue, index, seen + event->waiting_room.abandon_after_ms);
        /* The first hf_core_advance arms the room's next admission. */
        if (room->admit_armed_ms == INT64_MAX) {
            room->admit_armed_ms = now;
            hf_timer_push(&queue->timer, now, HF_TIMER_QUEUE_ADMIT, event_index);
        }
    } else if (stored->status == HF_TICKET_ADMITTED) {
        room->active++;
        ticket_arm(queue, index, hf_core_ticket_expires_s(core, index) * 1000);
    } else {
        ticket_finished_push(queue, index);
    }
    return HF_OK;
}

hf_error_t hf_core_revive_ticket(hf_core_t *core, const hf_stored_ticket_t *stored,
                                 uint32_t *index) {
    if (stored->status != HF_TICKET_COMPLETED && stored->status != HF_TICKET_EXPIRED &&
        stored->status != HF_TICKET_ABANDONED)
        return HF_ERROR_INVALID_REQUEST;
    uint32_t event_index;
    hf_error_t error = stored_place(core, stored, &event_index, index);
    if (error) return error;
    ticket_finished_push(core->queue, *index);
    return HF_OK;
}
