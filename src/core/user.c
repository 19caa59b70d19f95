/* Users and their records per event: a user's id interned once, the record of what the user
 * holds and has bought on each event (for max_seats_per_user and replace_existing), and each
 * user's orders. */
#include "core/internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* A user id being looked up in core->users.ids, which keeps no keys: a candidate matches when
 * the user at its index has this id. */
typedef struct user_key {
    const hf_core_t *core;
    const text_key_t *id;
} user_key_t;

static bool user_key_match(const void *context, uint32_t index) {
    const user_key_t *key = context;
    const user_t *user = &key->core->users.slots[index];
    size_t length = key->id->length;
    if (user->name_length != length) return false;
    size_t start = length < USER_NAME_INLINE ? length : USER_NAME_INLINE;
    if (memcmp(user->name_start, key->id->text, start) != 0) return false;
    const char *rest = key->core->strings + user->name + start;
    return length == start || memcmp(rest, key->id->text + start, length - start) == 0;
}

static bool user_index_find(const hf_core_t *core, const text_key_t *id, uint32_t *index) {
    user_key_t key = {core, id};
    return hf_index_map_find(&core->users.ids, id->hash, user_key_match, &key, index);
}

static bool user_find(const hf_core_t *core, const char *user_id, uint32_t *index) {
    if (!user_id) return false;
    text_key_t key = text_key_of(user_id, strlen(user_id));
    return user_index_find(core, &key, index);
}

const char *hf_core_user_id(const hf_core_t *core, uint32_t user_index) {
    return core->strings + core->users.slots[user_index].name;
}

const uint32_t *hf_core_user_orders(const hf_core_t *core, const char *user_id, uint32_t *count) {
    uint32_t index;
    *count = 0;
    if (!user_find(core, user_id, &index)) return NULL;
    const user_t *user = &core->users.slots[index];
    *count = user->orders.count;
    return user->orders.count == 1 ? &user->first_order : user->orders.items;
}

/* Looks the user of a command up once, by the key of its id. */
user_ref_t user_ref_find(const hf_core_t *core, const text_key_t *key) {
    user_ref_t user = {*key, NO_INDEX};
    uint32_t index;
    if (user_index_find(core, key, &index)) user.index = index;
    return user;
}

/* The same by the id itself; user_id must not be NULL. */
user_ref_t user_ref_of(const hf_core_t *core, const char *user_id) {
    text_key_t key = text_key_of(user_id, strlen(user_id));
    return user_ref_find(core, &key);
}

/* The slow half of user_intern (internal.h): a user named for the first time. */
uint32_t user_create(hf_core_t *core, user_ref_t *user) {
    assert(user->index == NO_INDEX);
    core->users.slots = grow(core->users.slots, &core->users.capacity, core->users.count + 1,
                             sizeof *core->users.slots);
    uint32_t index = core->users.count++;
    assert(index < OWNER_IN_TABLE); /* user indexes are record handles too */
    user_t *record = &core->users.slots[index];
    memset(record, 0, sizeof *record);
    record->name = string_store(core, user->key.text, user->key.length);
    record->name_length = (uint32_t)user->key.length;
    memcpy(record->name_start, user->key.text,
           user->key.length < USER_NAME_INLINE ? user->key.length : USER_NAME_INLINE);
    hf_index_map_insert(&core->users.ids, user->key.hash, index);
    user->index = index;
    return index;
}

uint32_t user_intern_id(hf_core_t *core, const char *user_id) {
    user_ref_t user = user_ref_of(core, user_id);
    return user_intern(core, &user);
}

/* True when the user at user_index has this id: read from the user's record, which the
 * command that made the hold has just read too. */
bool user_has_id(const hf_core_t *core, uint32_t user_index, const char *user_id) {
    text_key_t id = {user_id, strlen(user_id), 0};
    user_key_t key = {core, &id};
    return user_key_match(&key, user_index);
}

/* ---- records per event ---- */

/* The handle of the user's record on the event, or NO_INDEX when the user (NO_INDEX: not
 * known at all) has none yet. */
uint32_t event_user_handle(const hf_core_t *core, uint32_t event, uint32_t user) {
    if (user == NO_INDEX) return NO_INDEX;
    const user_t *record = &core->users.slots[user];
    if (record->first_event == event + 1) return user;
    uint32_t index;
    if (record->first_event == 0 ||
        !hf_pair_map_get(&core->users.per_event_ids, event, user, &index))
        return NO_INDEX;
    return index | OWNER_IN_TABLE;
}

/* The user's record on the event (borrowed until the next user or record is made), or NULL. */
event_user_t *event_user_find(hf_core_t *core, uint32_t event, uint32_t user) {
    uint32_t handle = event_user_handle(core, event, user);
    return handle == NO_INDEX ? NULL : owner_record(core, handle);
}

/* The slow half of event_user_intern (internal.h): the user's first hold or order on the
 * event. The record on the user's first event lives in the user's own record. */
uint32_t event_user_create(hf_core_t *core, uint32_t event, uint32_t user) {
    user_t *record = &core->users.slots[user];
    if (record->first_event == 0) {
        record->first_event = event + 1;
        memset(&record->first_event_record, 0, sizeof record->first_event_record);
        return user;
    }
    core->users.per_event = grow(core->users.per_event, &core->users.per_event_capacity,
                                 core->users.per_event_count + 1, sizeof *core->users.per_event);
    uint32_t index = core->users.per_event_count++;
    assert(index < OWNER_IN_TABLE);
    memset(&core->users.per_event[index], 0, sizeof core->users.per_event[index]);
    hf_pair_map_put(&core->users.per_event_ids, event, user, index);
    return index | OWNER_IN_TABLE;
}

/* ---- orders of a user ---- */

void index_list_push(index_list_t *list, uint32_t value) {
    list->items = grow(list->items, &list->capacity, list->count + 1, sizeof *list->items);
    list->items[list->count++] = value;
}

void user_order_push(user_t *user, uint32_t order) {
    index_list_t *orders = &user->orders;
    if (orders->count == 0) {
        user->first_order = order;
        orders->count = 1;
        return;
    }
    if (orders->count == 1) { /* the second order: both move to the array */
        orders->count = 0;
        index_list_push(orders, user->first_order);
    }
    index_list_push(orders, order);
}
