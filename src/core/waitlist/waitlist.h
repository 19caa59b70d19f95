/* The waitlists' state (API.md section 14, "Waitlist"), private to src/core/waitlist/: the
 * entries of every event, the index that finds the first fillable entry when inventory comes
 * free, and the links between offered entries and their holds. Made at the first waitlist
 * setting (hf_core_waitlist_configure): core->waitlists is NULL in a core that never had one.
 *
 * The index. An entry asks for a target: any section, one section, or one pool. Per event and
 * target there is one queue per quantity (1 to max_seats_per_hold), each in join order. The
 * first entry a target's free count F can fill is the smallest join number among the heads of
 * the queues of quantity <= F: at most max_seats_per_hold heads are read, never the entries.
 * Entries that leave (offered, cancelled) stay in their queue and are skipped at its head. */
#ifndef HF_CORE_WAITLIST_H
#define HF_CORE_WAITLIST_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "lib/limits.h"
#include "lib/map.h"

/* A queue of entry indexes in join order: a ring, so an entry set aside during one settle
 * (its offer refused) goes back in front. */
typedef struct entry_queue {
    uint32_t *items;
    uint32_t head, count, capacity; /* capacity a power of two */
} entry_queue_t;

/* The queues of one target, by quantity - 1; made at the target's first entry. */
typedef struct target_queues {
    entry_queue_t *by_quantity;
    uint32_t quantity_count; /* queues made: the largest quantity asked so far */
    bool dirty;              /* inventory of the target came free in this command */
} target_queues_t;

/* One event's waitlist. Targets: 0 any section, 1 + s section s, 1 + sections + p pool p. */
typedef struct event_waitlist {
    bool enabled;
    int64_t offer_ttl_ms;
    uint32_t *entries; /* entry indexes by join number (0-based) */
    uint32_t joined, joined_capacity;
    /* A Fenwick tree per status over join numbers, 1 where the entry has that status: a
     * waiting entry's position is the count of waiting entries joined up to it, and the
     * staff's list by status finds each next entry of it, both in O(log n). */
    uint32_t *status_tree[HF_WAITLIST_CANCELLED + 1];
    uint32_t waiting;
    target_queues_t *targets; /* 1 + sections + pools, made with the first entry */
    uint32_t target_count;
    bool dirty; /* on the waitlists' dirty list */
} event_waitlist_t;

typedef struct waitlist_entry {
    char id[HF_SERVER_ID_SIZE + 1];
    uint32_t event, user; /* indexes (event slot, user) */
    uint32_t user_string; /* offset of the user's id in core->strings */
    uint32_t target, quantity;
    uint32_t sequence; /* join number within the event */
    uint8_t status;    /* hf_waitlist_status_t */
    uint32_t hold;     /* the offer's hold index + 1 while offered, else 0 */
    bool offered;      /* an offer was made (its hold's id is "res_" and the id after "w_") */
    hf_time_ms_t joined_at_ms, changed_at_ms;
} waitlist_entry_t;

struct waitlists {
    waitlist_entry_t *entries;
    uint32_t count, capacity;
    hf_map_t ids;               /* an entry's id -> its index */
    hf_pair_map_t user_entries; /* (event, user) -> slot of latest (the user's newest entry) */
    uint32_t *latest;
    uint32_t latest_count, latest_capacity;
    event_waitlist_t *events; /* by event slot */
    uint32_t event_capacity;
    uint32_t *hold_entries; /* by hold index: entry index + 1 while that hold is an offer */
    uint32_t hold_capacity;
    uint32_t *dirty_events; /* events with a dirty target, this command */
    uint32_t dirty_count, dirty_capacity;
    bool settling; /* within waitlist_settle: the offers' own holds settle nothing */
    uint64_t by_status[HF_WAITLIST_CANCELLED + 1]; /* entries of each status (metrics) */
    /* Records of freed seats and pools held back until the settle (waitlist_defer): as
     * many as the command freed, each told once. */
    struct deferred_record *deferred;
    uint32_t deferred_count, deferred_capacity;
};

/* ---- waitlist.c ---- */

void entry_view(const hf_core_t *core, uint32_t index, hf_waitlist_view_t *view);
/* Adds an entry as given (a join, or one restored with its join number) to every index. */
uint32_t entry_insert(hf_core_t *core, uint32_t event, const waitlist_entry_t *fields);

/* ---- offer.c ---- */

/* The entry as it stands, to the store. */
void record_waitlist(hf_core_t *core, uint32_t index);
/* The entry's status changes (its position leaves the count when it stops waiting). */
void entry_status_set(hf_core_t *core, uint32_t index, uint8_t status, hf_time_ms_t now);
void waitlist_link_hold(hf_core_t *core, uint32_t hold_index, uint32_t entry);

/* ---- index.c: the queues and the positions ---- */

void queue_push(entry_queue_t *queue, uint32_t entry);
void queue_push_front(entry_queue_t *queue, uint32_t entry);
void queue_pop(entry_queue_t *queue);
/* The head that still waits (done entries popped on the way), else NO_INDEX. */
uint32_t queue_head(struct waitlists *waitlists, entry_queue_t *queue);
void target_add(event_waitlist_t *list, uint32_t target, uint32_t quantity, uint32_t entry);
/* The waiting entry of target with the smallest join number whose quantity is at most free,
 * else NO_INDEX; *quantity_queue is its queue's quantity - 1. */
uint32_t target_first_fillable(struct waitlists *waitlists, event_waitlist_t *list, uint32_t target,
                               int64_t free, uint32_t *quantity_queue);
/* The entry of join number sequence counted in (delta 1) or out of (-1) status's tree. */
void status_add(event_waitlist_t *list, uint8_t status, uint32_t sequence, int32_t delta);
/* Waiting entries joined up to sequence, included. */
uint32_t waiting_rank(const event_waitlist_t *list, uint32_t sequence);
/* The smallest join number after after (-1: from the first) of an entry with status, else
 * NO_INDEX. */
uint32_t status_next(const event_waitlist_t *list, uint8_t status, int64_t after);
void event_waitlist_free(event_waitlist_t *list);

#endif
