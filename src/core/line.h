/* Private to queue.c and line.c: one room's line (queue.h). Its tickets sit at places: a
 * ticket's place is its join number, except for the pre-queue's (join numbers 1..pre_count,
 * joined before opens_at), whose places are the opening's shuffle of them (shuffle.h). Until
 * the opening has placed them all, every ticket sits at its join number, so a ticket joined
 * after opens_at has its position at once (all the pre-queue is ahead of it, wherever each one
 * lands), and a pre-queue ticket has none yet.
 *
 * Positions: a bit per place says who waits and a Fenwick tree over 64-bit words of those bits
 * counts them, so a position is a prefix sum and a popcount, O(log n), and never grows (only
 * tickets ahead can leave). The head of the line is the lowest waiting place, found by a cursor
 * that only moves forward. */
#ifndef HF_CORE_LINE_H
#define HF_CORE_LINE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "core/estimate.h"
#include "core/shuffle.h"

/* The opening in progress: its memory touched, then the shuffle, then the copy of the line
 * into place order, a slice a loop turn each. */
typedef struct line_opening {
    hf_shuffle_t shuffle;
    uint32_t *places;  /* join number -> place, 0 until copied */
    uint32_t *tickets; /* place -> ticket index, for places 1..copied */
    uint64_t *bits;    /* which of places 1..copied wait */
    uint32_t copied;
    size_t prepared; /* bytes of the three arrays touched so far (opening_prepare) */
} line_opening_t;

/* One room: the line of one event. */
typedef struct room {
    /* place (from 1) -> ticket index, NO_INDEX for a place no ticket has (restore). */
    uint32_t *seq_tickets;
    /* Which places wait: bit (place - 1) % 64 of word (place - 1) / 64. */
    uint64_t *bits;
    /* Fenwick tree over those words: the waiting tickets of each 64 places; tree[1..tree_size].
     * A position is a prefix of it (log2 of a 64th of the joins: small enough to stay in
     * cache) and a popcount of one word. */
    uint32_t *tree;
    uint32_t seq_count, seq_capacity, word_capacity, tree_size;
    uint32_t head; /* no ticket below this place waits */
    uint32_t waiting, active;
    uint64_t admissions;
    double tokens; /* the bucket, refilled up to refilled_ms */
    hf_time_ms_t refilled_ms;
    hf_time_ms_t admit_armed_ms;  /* the live HF_TIMER_QUEUE_ADMIT entry, INT64_MAX: none */
    hf_admission_window_t window; /* the recent admissions, for estimated_wait_s */
    /* The pre-queue: join numbers 1..pre_count joined before opens_at. */
    uint32_t pre_count;
    uint32_t *places;           /* join number -> place for the pre-queue, once lined */
    bool lined;                 /* every ticket has its place: admissions may run */
    line_opening_t *opening;    /* while the opening places the pre-queue */
    hf_time_ms_t open_armed_ms; /* the live HF_TIMER_QUEUE_OPEN entry, INT64_MAX: none */
} room_t;

/* A join number's place (its own until the line is lined up). */
static inline uint32_t line_place(const room_t *room, uint32_t seq) {
    return room->places && seq <= room->pre_count ? room->places[seq - 1] : seq;
}

/* Room for join number seq (grows the line's arrays). */
void line_reserve(room_t *room, uint32_t seq);
/* Waiting tickets at places up to place. */
uint32_t line_prefix(const room_t *room, uint32_t place);
/* The ticket of join number seq starts or stops waiting. */
void line_enter(room_t *room, uint32_t seq);
void line_leave(room_t *room, uint32_t seq);
/* One slice (HF_QUEUE_OPENING_SLICE steps) of the opening under seed, begun at the first
 * call; true when the line is lined up (lined set, the opening's memory freed). */
bool line_open_step(room_t *room, const uint8_t seed[HF_QUEUE_SEED_SIZE]);
void line_free(room_t *room);

#endif
