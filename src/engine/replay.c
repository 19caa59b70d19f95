/* Stream ids and the replay window of an event (replay.h). */
#include "engine/replay.h"

#include <assert.h>
#include <stdlib.h>

#define COUNTER_MASK ((UINT64_C(1) << HF_STREAM_ID_COUNTER_BITS) - 1)
/* Epochs at or past this would make ids pass INT64_MAX (the year 2248). */
#define EPOCH_LIMIT (UINT64_C(1) << (63 - HF_STREAM_ID_COUNTER_BITS))

uint64_t hf_replay_id_rebase(uint64_t last_id, int64_t now_ms) {
    uint64_t epoch = now_ms > 0 ? (uint64_t)now_ms : 0;
    uint64_t after_last = (last_id >> HF_STREAM_ID_COUNTER_BITS) + 1;
    if (epoch < after_last) epoch = after_last;
    assert(epoch < EPOCH_LIMIT);
    return epoch << HF_STREAM_ID_COUNTER_BITS;
}

uint64_t hf_replay_id_next(uint64_t last_id, int64_t now_ms) {
    /* Wrapping would hand out the ids of this epoch's first changes again: a client holding
     * one would be replayed the wrong changes. A new epoch makes it a snapshot instead. */
    if ((last_id & COUNTER_MASK) == COUNTER_MASK) return hf_replay_id_rebase(last_id, now_ms) + 1;
    return last_id + 1;
}

bool hf_replay_id_parse(const char *text, size_t length, uint64_t *id) {
    /* INT64_MAX has 19 digits: a longer value cannot be an id, and 19 digits fit a uint64. */
    if (length == 0 || length > 19) return false;
    uint64_t value = 0;
    for (size_t i = 0; i < length; i++) {
        if (text[i] < '0' || text[i] > '9') return false;
        value = value * 10 + (uint64_t)(text[i] - '0');
    }
    if (value > (uint64_t)INT64_MAX) return false;
    *id = value;
    return true;
}

void hf_replay_ring_init(hf_replay_ring_t *ring, uint64_t start_id) {
    ring->changes = malloc(HF_STREAM_REPLAY_CHANGES_MAX * sizeof *ring->changes);
    if (!ring->changes) abort();
    hf_replay_ring_reset(ring, start_id);
}

void hf_replay_ring_free(hf_replay_ring_t *ring) {
    free(ring->changes);
    ring->changes = NULL;
    ring->count = 0;
}

void hf_replay_ring_reset(hf_replay_ring_t *ring, uint64_t start_id) {
    ring->start_id = start_id;
    ring->count = 0;
    ring->oldest = 0;
}

uint64_t hf_replay_ring_last(const hf_replay_ring_t *ring) { return ring->start_id + ring->count; }

void hf_replay_ring_append(hf_replay_ring_t *ring, uint64_t id, const hf_replay_change_t *change) {
    uint64_t last = hf_replay_ring_last(ring);
    if (id <= last) return;
    if (id != last + 1) hf_replay_ring_reset(ring, id - 1);
    if (ring->count == HF_STREAM_REPLAY_CHANGES_MAX) {
        /* Full: the newest takes the oldest's slot, and the window starts one later. */
        ring->changes[ring->oldest] = *change;
        ring->oldest = (ring->oldest + 1) % HF_STREAM_REPLAY_CHANGES_MAX;
        ring->start_id++;
        return;
    }
    ring->changes[(ring->oldest + ring->count) % HF_STREAM_REPLAY_CHANGES_MAX] = *change;
    ring->count++;
}

bool hf_replay_ring_covers(const hf_replay_ring_t *ring, uint64_t id) {
    return id >= ring->start_id && id <= hf_replay_ring_last(ring);
}

const hf_replay_change_t *hf_replay_ring_at(const hf_replay_ring_t *ring, uint64_t id) {
    assert(id > ring->start_id && id <= hf_replay_ring_last(ring));
    uint64_t offset = id - ring->start_id - 1;
    return &ring->changes[(ring->oldest + offset) % HF_STREAM_REPLAY_CHANGES_MAX];
}
