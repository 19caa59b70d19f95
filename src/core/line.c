/* One room's line (line.h): positions from a Fenwick tree over bits of places, and the
 * opening that gives the pre-queue its places, a slice at a time. */
#include "core/line.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

/* ---- positions ---- */

static void tree_add(room_t *room, uint32_t place, int32_t delta) {
    uint32_t word = (place - 1) / 64;
    uint64_t bit = UINT64_C(1) << ((place - 1) % 64);
    if (delta > 0) room->bits[word] |= bit;
    else room->bits[word] &= ~bit;
    for (uint32_t i = word + 1; i <= room->tree_size; i += i & (0u - i))
        room->tree[i] += (uint32_t)delta;
}

uint32_t line_prefix(const room_t *room, uint32_t place) {
    uint32_t word = (place - 1) / 64, offset = (place - 1) % 64;
    uint64_t mask = offset == 63 ? UINT64_MAX : (UINT64_C(1) << (offset + 1)) - 1;
    uint32_t sum = (uint32_t)__builtin_popcountll(room->bits[word] & mask);
    for (uint32_t i = word; i > 0; i -= i & (0u - i)) sum += room->tree[i];
    return sum;
}

/* Doubling keeps every node of the old tree (each covers the same words), the new ones below
 * the top cover words nobody has yet, and the new top covers everything: the waiting count. */
void line_reserve(room_t *room, uint32_t seq) {
    room->seq_tickets = grow(room->seq_tickets, &room->seq_capacity, seq,
                             sizeof *room->seq_tickets);
    uint32_t words = (seq + 63) / 64, old_words = room->word_capacity;
    if (words > old_words) {
        room->bits = grow(room->bits, &room->word_capacity, words, sizeof *room->bits);
        memset(room->bits + old_words, 0, (room->word_capacity - old_words) * sizeof *room->bits);
    }
    if (words <= room->tree_size) return;
    uint32_t old = room->tree_size, size = old ? old : 16;
    while (size < words) size *= 2;
    uint32_t *tree = realloc(room->tree, ((size_t)size + 1) * sizeof *tree);
    if (!tree) abort();
    if (old == 0) {
        memset(tree, 0, ((size_t)size + 1) * sizeof *tree);
    } else {
        for (uint32_t half = old; half < size; half *= 2) {
            memset(tree + half + 1, 0, (size_t)half * sizeof *tree);
            tree[2 * half] = room->waiting;
        }
    }
    room->tree = tree;
    room->tree_size = size;
}

void line_enter(room_t *room, uint32_t seq) { tree_add(room, line_place(room, seq), 1); }

/* While the opening copies the line, a pre-queue ticket already copied leaves the copy too. */
void line_leave(room_t *room, uint32_t seq) {
    tree_add(room, line_place(room, seq), -1);
    line_opening_t *opening = room->opening;
    if (!opening || seq > room->pre_count || opening->places[seq - 1] == 0) return;
    uint32_t place = opening->places[seq - 1] - 1;
    opening->bits[place / 64] &= ~(UINT64_C(1) << (place % 64));
}

/* ---- the opening ---- */

static line_opening_t *opening_begin(const room_t *room, const uint8_t *seed) {
    line_opening_t *opening = calloc(1, sizeof *opening);
    uint32_t count = room->pre_count;
    if (!opening) abort();
    hf_shuffle_begin(&opening->shuffle, seed, count);
    /* Zeroed by opening_prepare, a slice at a time: calloc would clear them all at once
     * (memory reused from the heap is not the kernel's zero pages). */
    opening->places = malloc((size_t)count * sizeof *opening->places);
    opening->tickets = malloc((size_t)count * sizeof *opening->tickets);
    opening->bits = calloc((count + 63) / 64, sizeof *opening->bits);
    if (!opening->places || !opening->tickets || !opening->bits) abort();
    return opening;
}

/* Zeroes the next HF_QUEUE_OPENING_PREPARE_SIZE bytes of the opening's arrays (the shuffle's
 * order, the places, the copy's tickets: zero stands for "not yet" in the first two). Their
 * pages are cleared and faulted in here, a slice at a time, rather than all at once by a
 * calloc or by the shuffle's first random steps, which would stall one turn for the whole
 * 12 MB of a million tickets. */
static bool opening_prepare(line_opening_t *opening, uint32_t count) {
    size_t size = (size_t)count * sizeof(uint32_t), end = opening->prepared;
    uint32_t *arrays[3] = {opening->shuffle.order, opening->places, opening->tickets};
    end += HF_QUEUE_OPENING_PREPARE_SIZE;
    if (end > 3 * size) end = 3 * size;
    for (size_t at = opening->prepared; at < end;) {
        size_t array = at / size, offset = at % size;
        size_t length = size - offset < end - at ? size - offset : end - at;
        memset((char *)arrays[array] + offset, 0, length);
        at += length;
    }
    opening->prepared = end;
    return end == 3 * size;
}

/* Places up to slice more join numbers at the places the shuffle gave them. */
static bool opening_copy(room_t *room, line_opening_t *opening, uint32_t slice) {
    uint32_t end = room->pre_count - opening->copied > slice ? opening->copied + slice
                                                             : room->pre_count;
    for (uint32_t place = opening->copied; place < end; place++) {
        uint32_t seq = hf_shuffle_at(&opening->shuffle, place) - 1;
        opening->places[seq] = place + 1;
        opening->tickets[place] = room->seq_tickets[seq];
        uint64_t waits = (room->bits[seq / 64] >> (seq % 64)) & 1;
        opening->bits[place / 64] |= waits << (place % 64);
    }
    opening->copied = end;
    return end == room->pre_count;
}

/* Every node from the words of bits, in one pass: each node passes its sum to its parent. */
static void tree_rebuild(room_t *room) {
    for (uint32_t i = 1; i <= room->tree_size; i++)
        room->tree[i] = i - 1 < room->word_capacity
                            ? (uint32_t)__builtin_popcountll(room->bits[i - 1])
                            : 0;
    for (uint32_t i = 1; i <= room->tree_size; i++) {
        uint32_t parent = i + (i & (0u - i));
        if (parent <= room->tree_size) room->tree[parent] += room->tree[i];
    }
}

/* The copy becomes the line: places 1..pre_count hold the shuffled tickets, the joins after
 * the opening keep theirs. */
static void opening_finish(room_t *room, line_opening_t *opening) {
    uint32_t count = room->pre_count, words = count / 64, rest = count % 64;
    memcpy(room->seq_tickets, opening->tickets, (size_t)count * sizeof *room->seq_tickets);
    memcpy(room->bits, opening->bits, (size_t)words * sizeof *room->bits);
    if (rest) {
        uint64_t low = (UINT64_C(1) << rest) - 1;
        room->bits[words] = (room->bits[words] & ~low) | (opening->bits[words] & low);
    }
    room->places = opening->places;
    hf_shuffle_free(&opening->shuffle);
    free(opening->tickets);
    free(opening->bits);
    free(opening);
    room->opening = NULL;
    tree_rebuild(room);
    room->lined = true;
}

bool line_open_step(room_t *room, const uint8_t seed[HF_QUEUE_SEED_SIZE]) {
    if (room->lined) return true;
    if (room->pre_count == 0) {
        room->lined = true;
        return true;
    }
    if (!room->opening) room->opening = opening_begin(room, seed);
    line_opening_t *opening = room->opening;
    /* Each turn does one slice of one phase: the last of one and the first of the next are two
     * turns. */
    if (opening->prepared < 3 * (size_t)room->pre_count * sizeof(uint32_t)) {
        opening_prepare(opening, room->pre_count);
        return false;
    }
    if (opening->shuffle.cipher) {
        hf_shuffle_advance(&opening->shuffle, HF_QUEUE_OPENING_SLICE);
        return false;
    }
    if (!opening_copy(room, opening, HF_QUEUE_OPENING_SLICE)) return false;
    opening_finish(room, opening);
    return true;
}

void line_free(room_t *room) {
    if (room->opening) {
        hf_shuffle_free(&room->opening->shuffle);
        free(room->opening->places);
        free(room->opening->tickets);
        free(room->opening->bits);
        free(room->opening);
    }
    free(room->places);
    free(room->seq_tickets);
    free(room->bits);
    free(room->tree);
    free(room);
}
