/* The state of the users' domain (user.c): each user's id and orders, and what a user has on
 * each event (for max_seats_per_user and replace_existing). Private to src/core, held by value
 * in struct hf_core (internal.h) as core->users; see orders.h for the shape every domain's
 * state has. */
#ifndef HF_CORE_USERS_H
#define HF_CORE_USERS_H

#include <stdint.h>

#include "core/orders.h"
#include "lib/map.h"

/* What one user has on one event: for max_seats_per_user and replace_existing. */
typedef struct event_user {
    uint32_t held_units, sold_units;
    /* The user's held holds on the event, oldest first: a list threaded through
     * core->holds.states, so a hold joins and leaves it without allocating (an array per user
     * was one malloc per new buyer). Hold index + 1; 0 marks none. */
    uint32_t first_active, last_active;
} event_user_t;

/* A user's id bytes kept in the user's record: an id this short is compared without reading
 * the copy in core->strings, which was one more cache miss per command on a large crowd. */
#define USER_NAME_INLINE 16u

/* 64 bytes: a lookup reads one cache line of the record for the id's check and the counts. */
typedef struct user {
    uint32_t name; /* the id in core->strings, NUL-terminated */
    uint32_t name_length;
    char name_start[USER_NAME_INLINE]; /* its first bytes (zero-filled when shorter) */
    /* The user's record on the first event the user held or bought on (event index + 1; 0
     * while there is none) lives here, beside the id's offset: most buyers touch one event,
     * and a lookup in core->users.per_event_ids was a cache miss per command on a large
     * crowd. Records on further events are in core->users.per_event. */
    uint32_t first_event;
    event_user_t first_event_record;
    /* The user's orders, oldest first. The first is kept here while it is the only one, so a
     * buyer with one order (most of them) costs no allocation; from the second on, all of them
     * are in orders.items. orders.count counts them in both cases. */
    uint32_t first_order;
    index_list_t orders;
} user_t;
_Static_assert(sizeof(user_t) == 64, "a user's record is one cache line");

/* A user's record on an event is named by a handle, which holds and orders keep (owner): the
 * user's index for the record in user_t, or an index into core->users.per_event with this
 * bit. */
#define OWNER_IN_TABLE 0x80000000u

typedef struct users {
    user_t *slots;
    uint32_t count, capacity;
    hf_index_map_t ids; /* a user's id -> its index; the id is in the user's record */
    /* Users' records on events other than their first (see user_t). */
    event_user_t *per_event;
    uint32_t per_event_count, per_event_capacity;
    hf_pair_map_t per_event_ids; /* (event index, user index) -> per_event index */
} users_t;

#endif
