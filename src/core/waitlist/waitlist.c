/* Waitlists (API.md section 14): the setting, joins, reads, cancels and the staff's list.
 * What happens when inventory comes free is offer.c's. */
#include <stdio.h>

#include "core/internal.h"
#include "core/waitlist/waitlist.h"

static const char *const STATUS_NAMES[] = {"waiting", "offered", "fulfilled", "lapsed",
                                           "cancelled"};

const char *hf_waitlist_status_name(uint8_t status) {
    return status < sizeof STATUS_NAMES / sizeof STATUS_NAMES[0] ? STATUS_NAMES[status] : "";
}

static struct waitlists *waitlists_of(hf_core_t *core) {
    if (!core->waitlists) {
        core->waitlists = calloc(1, sizeof *core->waitlists);
        if (!core->waitlists) abort();
        hf_map_init(&core->waitlists->ids);
        hf_pair_map_init(&core->waitlists->user_entries);
    }
    return core->waitlists;
}

/* The event's waitlist, made (off) when missing. */
static event_waitlist_t *event_waitlist_of(hf_core_t *core, uint32_t event) {
    struct waitlists *waitlists = waitlists_of(core);
    if (event >= waitlists->event_capacity) {
        uint32_t old = waitlists->event_capacity;
        waitlists->events = grow(waitlists->events, &waitlists->event_capacity, event + 1,
                                 sizeof *waitlists->events);
        memset(waitlists->events + old, 0,
               (size_t)(waitlists->event_capacity - old) * sizeof *waitlists->events);
    }
    return &waitlists->events[event];
}

hf_error_t hf_core_waitlist_configure(hf_core_t *core, const char *event_id, bool enabled,
                                      int64_t offer_ttl_ms) {
    uint32_t event;
    if (!hf_core_event(core, event_id, &event)) return HF_ERROR_EVENT_NOT_FOUND;
    if (offer_ttl_ms <= 0 || offer_ttl_ms > HF_HOLD_TTL_MS_MAX) return HF_ERROR_INVALID_REQUEST;
    event_waitlist_t *list = event_waitlist_of(core, event);
    list->enabled = enabled;
    list->offer_ttl_ms = offer_ttl_ms;
    return HF_OK;
}

hf_waitlist_setting_t hf_core_waitlist_setting(const hf_core_t *core, const char *event_id) {
    hf_waitlist_setting_t setting = {false, HF_WAITLIST_OFFER_TTL_MS_DEFAULT};
    uint32_t event;
    if (!hf_core_event(core, event_id, &event) || !core->waitlists ||
        event >= core->waitlists->event_capacity || !core->waitlists->events[event].enabled)
        return setting;
    setting.enabled = true;
    setting.offer_ttl_ms = core->waitlists->events[event].offer_ttl_ms;
    return setting;
}

bool hf_core_waitlist_counts(const hf_core_t *core, uint64_t counts[HF_WAITLIST_CANCELLED + 1]) {
    if (!core->waitlists) return false;
    memcpy(counts, core->waitlists->by_status, sizeof core->waitlists->by_status);
    return true;
}

void entry_view(const hf_core_t *core, uint32_t index, hf_waitlist_view_t *view) {
    const struct waitlists *waitlists = core->waitlists;
    const waitlist_entry_t *entry = &waitlists->entries[index];
    const hf_event_t *event = core->events.slots[entry->event];
    const event_waitlist_t *list = &waitlists->events[entry->event];
    *view = (hf_waitlist_view_t){.waitlist_id = entry->id,
                                 .user_id = core->strings + entry->user_string,
                                 .status = entry->status,
                                 .quantity = entry->quantity,
                                 .sequence = entry->sequence,
                                 .joined_at_ms = entry->joined_at_ms,
                                 .changed_at_ms = entry->changed_at_ms};
    if (entry->target >= 1 && entry->target <= event->section_count)
        view->section = event->sections[entry->target - 1].id;
    else if (entry->target > event->section_count)
        view->pool = event->pools[entry->target - 1 - event->section_count].id;
    if (entry->status == HF_WAITLIST_WAITING) view->position = waiting_rank(list, entry->sequence);
    if (entry->offered) {
        snprintf(view->offer_hold_id, sizeof view->offer_hold_id, "res_%s", entry->id + 2);
        view->reservation_id = view->offer_hold_id;
    }
    if (entry->status == HF_WAITLIST_OFFERED && entry->hold)
        view->expires_at_ms = core->holds.slots[entry->hold - 1].expires_at_ms;
}

/* The target a request names (0 any section, 1 + s, 1 + sections + p), or an error. */
static hf_error_t target_of(const hf_event_t *event, const hf_waitlist_request_t *request,
                            uint32_t *target) {
    const event_tables_t *tables = event->internal;
    uint32_t index;
    if (request->section && request->pool) return HF_ERROR_INVALID_REQUEST;
    if (request->section) {
        if (!hf_map_get(&tables->sections, request->section, strlen(request->section), &index))
            return HF_ERROR_SECTION_NOT_FOUND;
        *target = 1 + index;
    } else if (request->pool) {
        if (!hf_map_get(&tables->pools, request->pool, strlen(request->pool), &index))
            return HF_ERROR_POOL_NOT_FOUND;
        *target = 1 + event->section_count + index;
    } else {
        if (event->seat_count == 0) return HF_ERROR_SECTION_NOT_FOUND;
        *target = 0;
    }
    return HF_OK;
}

/* The user's newest entry on the event (its index), else NO_INDEX. */
static uint32_t user_latest(const struct waitlists *waitlists, uint32_t event, uint32_t user) {
    uint32_t slot;
    if (!hf_pair_map_get(&waitlists->user_entries, event, user, &slot)) return NO_INDEX;
    return waitlists->latest[slot];
}

static void user_latest_set(struct waitlists *waitlists, uint32_t event, uint32_t user,
                            uint32_t entry) {
    uint32_t slot;
    if (hf_pair_map_get(&waitlists->user_entries, event, user, &slot)) {
        waitlists->latest[slot] = entry;
        return;
    }
    waitlists->latest = grow(waitlists->latest, &waitlists->latest_capacity,
                             waitlists->latest_count + 1, sizeof *waitlists->latest);
    waitlists->latest[waitlists->latest_count] = entry;
    hf_pair_map_put(&waitlists->user_entries, event, user, waitlists->latest_count++);
}

/* Room for one more join number: the Fenwick tree is rebuilt when its array doubles. */
static void joined_grow(struct waitlists *waitlists, event_waitlist_t *list) {
    if (list->joined < list->joined_capacity) return;
    uint32_t capacity = list->joined_capacity;
    list->entries = grow(list->entries, &capacity, list->joined + 1, sizeof *list->entries);
    for (unsigned s = 0; s <= HF_WAITLIST_CANCELLED; s++) {
        free(list->status_tree[s]);
        list->status_tree[s] = calloc(capacity, sizeof *list->status_tree[s]);
        if (!list->status_tree[s]) abort();
    }
    list->joined_capacity = capacity;
    uint32_t waiting = list->waiting;
    for (uint32_t s = 0; s < list->joined; s++)
        if (list->entries[s] != NO_INDEX)
            status_add(list, waitlists->entries[list->entries[s]].status, s, 1);
    list->waiting = waiting;
}

uint32_t entry_insert(hf_core_t *core, uint32_t event, const waitlist_entry_t *fields) {
    struct waitlists *waitlists = core->waitlists;
    event_waitlist_t *list = &waitlists->events[event];
    const hf_event_t *slot = core->events.slots[event];
    if (!list->targets) {
        list->target_count = 1 + slot->section_count + slot->pool_count;
        list->targets = calloc(list->target_count, sizeof *list->targets);
        if (!list->targets) abort();
    }
    uint32_t index = waitlists->count;
    waitlists->entries = grow(waitlists->entries, &waitlists->capacity, index + 1,
                              sizeof *waitlists->entries);
    waitlists->entries[index] = *fields;
    waitlists->count++;
    waitlists->by_status[fields->status]++;
    hf_map_put(&waitlists->ids, fields->id, strlen(fields->id), index);
    while (list->joined <= fields->sequence) {
        joined_grow(waitlists, list);
        list->entries[list->joined++] = NO_INDEX;
    }
    list->entries[fields->sequence] = index;
    status_add(list, fields->status, fields->sequence, 1);
    if (fields->status == HF_WAITLIST_WAITING)
        target_add(list, fields->target, fields->quantity, index);
    if (fields->hold) waitlist_link_hold(core, fields->hold - 1, index);
    user_latest_set(waitlists, event, fields->user, index);
    return index;
}

static hf_error_t join_check(hf_core_t *core, const hf_waitlist_request_t *request, uint32_t *event,
                             uint32_t *target) {
    const hf_event_t *slot = hf_core_event(core, request->event_id, event);
    if (!slot) return HF_ERROR_EVENT_NOT_FOUND;
    if (slot->cancelled) return HF_ERROR_EVENT_CANCELLED;
    if (!core->waitlists || *event >= core->waitlists->event_capacity ||
        !core->waitlists->events[*event].enabled)
        return HF_ERROR_WAITLIST_DISABLED;
    if (!request->user_id || !request->user_id[0] || !request->waitlist_id)
        return HF_ERROR_INVALID_REQUEST;
    hf_error_t error = target_of(slot, request, target);
    if (error) return error;
    if (request->quantity < 1 || request->quantity > slot->max_seats_per_hold)
        return HF_ERROR_INVALID_REQUEST;
    return HF_OK;
}

hf_error_t hf_core_waitlist_join(hf_core_t *core, const hf_waitlist_request_t *request,
                                 hf_time_ms_t now, hf_waitlist_view_t *view, bool *existing) {
    command_at(core, now);
    uint32_t event, target;
    hf_error_t error = join_check(core, request, &event, &target);
    if (error) return error;
    struct waitlists *waitlists = core->waitlists;
    user_ref_t user = user_ref_of(core, request->user_id);
    uint32_t latest = user.index == NO_INDEX ? NO_INDEX : user_latest(waitlists, event, user.index);
    if (latest != NO_INDEX && waitlists->entries[latest].status <= HF_WAITLIST_OFFERED) {
        *existing = true;
        entry_view(core, latest, view);
        return HF_OK;
    }
    event_waitlist_t *list = &waitlists->events[event];
    if (list->joined >= HF_WAITLIST_ENTRIES_MAX) return HF_ERROR_CAPACITY;
    if (strlen(request->waitlist_id) > HF_SERVER_ID_SIZE ||
        hf_map_get(&waitlists->ids, request->waitlist_id, strlen(request->waitlist_id), NULL))
        return HF_ERROR_INVALID_REQUEST;
    waitlist_entry_t fields = {.event = event,
                               .user = user_intern(core, &user),
                               .target = target,
                               .quantity = request->quantity,
                               .sequence = list->joined,
                               .status = HF_WAITLIST_WAITING,
                               .joined_at_ms = now,
                               .changed_at_ms = now};
    fields.user_string = string_store(core, request->user_id, strlen(request->user_id));
    memcpy(fields.id, request->waitlist_id, strlen(request->waitlist_id) + 1);
    uint32_t index = entry_insert(core, event, &fields);
    record_waitlist(core, index);
    *existing = false;
    entry_view(core, index, view);
    return HF_OK;
}

/* The entry of the event with that id, else NO_INDEX. */
static uint32_t entry_find(const hf_core_t *core, const char *event_id, const char *waitlist_id) {
    uint32_t event, index;
    if (!core->waitlists || !waitlist_id) return NO_INDEX;
    if (!hf_core_event(core, event_id, &event)) return NO_INDEX;
    if (!hf_map_get(&core->waitlists->ids, waitlist_id, strlen(waitlist_id), &index))
        return NO_INDEX;
    return core->waitlists->entries[index].event == event ? index : NO_INDEX;
}

hf_error_t hf_core_waitlist_get(hf_core_t *core, const char *event_id, const char *waitlist_id,
                                hf_waitlist_view_t *view) {
    uint32_t event;
    if (!hf_core_event(core, event_id, &event)) return HF_ERROR_EVENT_NOT_FOUND;
    uint32_t index = entry_find(core, event_id, waitlist_id);
    if (index == NO_INDEX) return HF_ERROR_WAITLIST_NOT_FOUND;
    entry_view(core, index, view);
    return HF_OK;
}

hf_error_t hf_core_waitlist_cancel(hf_core_t *core, const char *event_id, const char *waitlist_id,
                                   const char *user_id, hf_time_ms_t now,
                                   hf_waitlist_view_t *view) {
    command_at(core, now);
    uint32_t event;
    if (!hf_core_event(core, event_id, &event)) return HF_ERROR_EVENT_NOT_FOUND;
    uint32_t index = entry_find(core, event_id, waitlist_id);
    if (index == NO_INDEX) return HF_ERROR_WAITLIST_NOT_FOUND;
    waitlist_entry_t *entry = &core->waitlists->entries[index];
    if (!user_id || !user_has_id(core, entry->user, user_id)) return HF_ERROR_NOT_OWNER;
    if (entry->status == HF_WAITLIST_WAITING) {
        entry_status_set(core, index, HF_WAITLIST_CANCELLED, now);
    } else if (entry->status == HF_WAITLIST_OFFERED) {
        /* Cancelled first, so the hold's end does not read as a lapse. */
        uint32_t hold = entry->hold - 1;
        entry_status_set(core, index, HF_WAITLIST_CANCELLED, now);
        hold_finish(core, hold, HF_HOLD_RELEASED, now, true);
        waitlist_settle(core, now);
    }
    entry_view(core, index, view);
    return HF_OK;
}

void waitlist_event_cancelled(hf_core_t *core, uint32_t event, hf_time_ms_t now) {
    if (!core->waitlists || event >= core->waitlists->event_capacity) return;
    const event_waitlist_t *list = &core->waitlists->events[event];
    for (uint32_t s = 0; s < list->joined; s++) {
        uint32_t index = list->entries[s];
        if (index == NO_INDEX) continue;
        uint8_t status = core->waitlists->entries[index].status;
        if (status == HF_WAITLIST_WAITING || status == HF_WAITLIST_OFFERED)
            entry_status_set(core, index, HF_WAITLIST_CANCELLED, now);
    }
}

uint32_t hf_core_waitlist_list(hf_core_t *core, const char *event_id, bool status_filter,
                               uint8_t status, int64_t after, uint32_t limit,
                               hf_waitlist_view_t *views, bool *more) {
    uint32_t event, written = 0;
    *more = false;
    if (!hf_core_event(core, event_id, &event) || !core->waitlists ||
        event >= core->waitlists->event_capacity)
        return 0;
    const event_waitlist_t *list = &core->waitlists->events[event];
    /* A page by status costs its page: each next entry of the status is found in its tree. */
    for (int64_t s = status_filter ? status_next(list, status, after) : after + 1;
         s != NO_INDEX && s < (int64_t)list->joined;
         s = status_filter ? status_next(list, status, s) : s + 1) {
        uint32_t index = list->entries[s];
        if (index == NO_INDEX) continue;
        if (written == limit) {
            *more = true;
            break;
        }
        entry_view(core, index, &views[written++]);
    }
    return written;
}

hf_error_t hf_core_restore_waitlist(hf_core_t *core, const hf_stored_waitlist_t *stored) {
    uint32_t event, target;
    const hf_event_t *slot = hf_core_event(core, stored->event_id, &event);
    if (!slot) return HF_ERROR_EVENT_NOT_FOUND;
    hf_waitlist_request_t shape = {.section = stored->section, .pool = stored->pool};
    hf_error_t error = target_of(slot, &shape, &target);
    if (error) return error;
    if (!stored->waitlist_id || strlen(stored->waitlist_id) > HF_SERVER_ID_SIZE ||
        stored->sequence >= HF_WAITLIST_ENTRIES_MAX || stored->status > HF_WAITLIST_CANCELLED ||
        stored->quantity < 1)
        return HF_ERROR_INVALID_REQUEST;
    event_waitlist_of(core, event);
    uint32_t hold_index = 0;
    if (stored->hold_id && hf_core_hold_find(core, stored->hold_id, &hold_index)) hold_index++;
    else hold_index = 0;
    /* An offer's hold is held (the holds load first); an entry the store has offered whose
     * hold is not is refused rather than shown without one. */
    if (stored->status == HF_WAITLIST_OFFERED && !hold_index) return HF_ERROR_HOLD_NOT_FOUND;
    user_ref_t user = user_ref_of(core, stored->user_id);
    waitlist_entry_t fields = {.event = event,
                               .user = user_intern(core, &user),
                               .target = target,
                               .quantity = stored->quantity,
                               .sequence = stored->sequence,
                               .status = stored->status,
                               .hold = hold_index,
                               .offered = stored->hold_id != NULL,
                               .joined_at_ms = stored->joined_at_ms,
                               .changed_at_ms = stored->changed_at_ms};
    fields.user_string = string_store(core, stored->user_id, strlen(stored->user_id));
    memcpy(fields.id, stored->waitlist_id, strlen(stored->waitlist_id) + 1);
    entry_insert(core, event, &fields);
    return HF_OK;
}

void waitlist_free(hf_core_t *core) {
    struct waitlists *waitlists = core->waitlists;
    if (!waitlists) return;
    for (uint32_t e = 0; e < waitlists->event_capacity; e++)
        event_waitlist_free(&waitlists->events[e]);
    free(waitlists->events);
    free(waitlists->entries);
    free(waitlists->latest);
    free(waitlists->hold_entries);
    free(waitlists->dirty_events);
    free(waitlists->deferred);
    hf_map_free(&waitlists->ids);
    hf_pair_map_free(&waitlists->user_entries);
    free(waitlists);
    core->waitlists = NULL;
}
