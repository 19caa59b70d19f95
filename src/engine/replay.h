/* The replay window of an event's stream (API.md section 5): its stream ids, and a ring of
 * its last HF_STREAM_REPLAY_CHANGES_MAX durable seat and pool changes, each in 12 bytes, so a
 * client that reconnects with Last-Event-ID gets every change it missed instead of a
 * snapshot. Pure: no I/O, no clock (time is passed in), no core.
 *
 * Ids. An id is epoch * 2^HF_STREAM_ID_COUNTER_BITS + n: epoch is a time in ms, n counts the
 * event's changes in that epoch, and "id X" means "every change up to X". An event's epoch
 * starts when its changes start being numbered (hf_replay_id_rebase): at its first subscriber
 * in a run, again when it was left with neither subscriber nor window, and when n would pass
 * its bits (after 1,048,575 changes). A new epoch is the time of the moment, and always after
 * the event's previous one, so its ids are above every id the event had before, and above
 * every id of an earlier run, whose epochs all began before this run started (as long as the
 * wall clock does not run back across a restart). So an id this run never gave out, one from
 * an earlier run or from before a new epoch can never name a position of the window: it gets
 * a snapshot, never a wrong replay. Clients must take ids as opaque decimal strings: they
 * pass 2^53. Ids are not stored: a window's changes are consecutive.
 *
 * Ownership: the caller owns the ring struct; hf_replay_ring_init allocates its slots and
 * hf_replay_ring_free releases them. */
#ifndef HF_ENGINE_REPLAY_H
#define HF_ENGINE_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/limits.h"

/* hf_replay_change_t.target of a pool's change; without it, a seat's. */
#define HF_REPLAY_POOL 0x80000000u

/* One change as the window keeps it. */
typedef struct hf_replay_change {
    uint32_t target; /* the seat's index, or HF_REPLAY_POOL | the pool's index; a calendar's
                        change: the resource's index */
    uint32_t value;  /* a seat: its version; a pool: its held units; a calendar: from */
    uint32_t other;  /* a seat: its status; a pool: its sold units; a calendar: to */
    int32_t delta;   /* a calendar: the quantity given back (negative: taken); a pool: its
                        units available to the public */
} hf_replay_change_t;

typedef struct hf_replay_ring {
    hf_replay_change_t *changes; /* HF_STREAM_REPLAY_CHANGES_MAX slots */
    uint64_t start_id;           /* the position the window starts at: its oldest change has
                                    id start_id + 1 */
    uint32_t count;              /* changes kept */
    uint32_t oldest;             /* slot of the oldest change */
} hf_replay_ring_t;

/* The first id of a new epoch, which names the position before its first change: the time
 * now_ms, or just after the epoch of last_id (the event's newest id, 0 for none) when that
 * is not earlier. */
uint64_t hf_replay_id_rebase(uint64_t last_id, int64_t now_ms);
/* The id of the change after last_id: the next number, or the first change of a new epoch
 * when the counter would pass its bits. */
uint64_t hf_replay_id_next(uint64_t last_id, int64_t now_ms);
/* A Last-Event-ID's value: decimal digits only, at most INT64_MAX; false for anything else. */
bool hf_replay_id_parse(const char *text, size_t length, uint64_t *id);

/* An empty window starting at position start_id; aborts when out of memory. */
void hf_replay_ring_init(hf_replay_ring_t *ring, uint64_t start_id);
void hf_replay_ring_free(hf_replay_ring_t *ring);
/* Empties the window, now starting at position start_id (its slots are kept). */
void hf_replay_ring_reset(hf_replay_ring_t *ring, uint64_t start_id);
/* The id of the newest change kept; start_id when empty. */
uint64_t hf_replay_ring_last(const hf_replay_ring_t *ring);
/* Keeps change number id, the oldest dropped when full. Changes come in id order: an id not
 * above the newest is of before the window and ignored; one past the next (a new epoch)
 * empties the window first, which then starts just before it. */
void hf_replay_ring_append(hf_replay_ring_t *ring, uint64_t id, const hf_replay_change_t *change);
/* Whether a client that has every change up to id can be given the rest from the window:
 * start_id <= id <= the newest id. */
bool hf_replay_ring_covers(const hf_replay_ring_t *ring, uint64_t id);
/* The change with id, which must be kept: start_id < id <= the newest id. */
const hf_replay_change_t *hf_replay_ring_at(const hf_replay_ring_t *ring, uint64_t id);

#endif
