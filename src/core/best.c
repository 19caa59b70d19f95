/* Best-available selection. Sections in listed order, rows front first; the first row that can
 * serve the request serves it. Within a row, for adjacent seats: a block that strands no single
 * free seat beside it, then the block whose middle is closest to the row's middle, then lower
 * numbers; for separate seats: closest to the middle, then lower numbers. Rows whose count of
 * available seats is below what is needed are skipped unread, which keeps a nearly sold-out
 * event cheap. */
#include "core/best.h"

#include <stdlib.h>

/* Distance of a block's middle from the row's middle, doubled to stay in integers: a block of
 * count seats from number first has its middle at first + (count - 1) / 2. */
static uint32_t middle_distance(uint32_t first, uint32_t count, uint32_t row_seats) {
    int64_t block = 2 * (int64_t)first + count - 1;
    int64_t row = (int64_t)row_seats + 1;
    return (uint32_t)llabs(block - row);
}

typedef struct candidate {
    bool found;
    bool strands;
    uint32_t distance;
    uint32_t first; /* seat number, from 1 */
} candidate_t;

static bool better(const candidate_t *a, const candidate_t *b) {
    if (!b->found) return true;
    if (a->strands != b->strands) return !a->strands;
    if (a->distance != b->distance) return a->distance < b->distance;
    return a->first < b->first;
}

/* Every block of the free run [start, end] (numbers) is a candidate. */
static void consider_run(candidate_t *best, uint32_t start, uint32_t end, uint32_t count,
                         uint32_t row_seats) {
    if (end - start + 1 < count) return;
    for (uint32_t first = start; first + count - 1 <= end; first++) {
        uint32_t left_gap = first - start, right_gap = end - (first + count - 1);
        candidate_t candidate = {true, left_gap == 1 || right_gap == 1,
                                 middle_distance(first, count, row_seats), first};
        if (better(&candidate, best)) *best = candidate;
    }
}

static bool pick_block(hf_row_t *row, const hf_best_query_t *query, uint32_t *out) {
    candidate_t best = {false, false, 0, 0};
    uint32_t run_start = 0; /* 0: not in a run */
    uint32_t longest = 0;
    for (uint32_t number = 1; number <= row->seat_count + 1; number++) {
        bool free = number <= row->seat_count &&
                    query->is_free(query->context, row->first_seat + number - 1);
        if (free && run_start == 0) run_start = number;
        if (!free && run_start != 0) {
            consider_run(&best, run_start, number - 1, query->count, row->seat_count);
            if (number - run_start > longest) longest = number - run_start;
            run_start = 0;
        }
    }
    /* Every seat was read: the longest run is now known exactly. */
    if (query->rows_exact) row->free_run_bound = longest;
    if (!best.found) return false;
    for (uint32_t i = 0; i < query->count; i++) out[i] = row->first_seat + best.first - 1 + i;
    return true;
}

/* Separate seats: from the row's middle outwards, the lower number first at equal distance. */
static uint32_t pick_separate(const hf_row_t *row, const hf_best_query_t *query, uint32_t *out,
                              uint32_t wanted) {
    uint32_t taken = 0, seats = row->seat_count;
    /* An odd row has one middle seat, an even row two. */
    int64_t low = seats % 2 ? (seats + 1) / 2 : seats / 2;
    int64_t high = low + 1;
    if (seats % 2) {
        if (query->is_free(query->context, row->first_seat + (uint32_t)low - 1))
            out[taken++] = row->first_seat + (uint32_t)low - 1;
        low--;
    }
    for (; taken < wanted && (low >= 1 || high <= seats); low--, high++) {
        if (low >= 1 && query->is_free(query->context, row->first_seat + (uint32_t)low - 1))
            out[taken++] = row->first_seat + (uint32_t)low - 1;
        if (taken < wanted && high <= seats &&
            query->is_free(query->context, row->first_seat + (uint32_t)high - 1))
            out[taken++] = row->first_seat + (uint32_t)high - 1;
    }
    return taken;
}

bool hf_best_pick(hf_event_t *event, const hf_best_query_t *query, uint32_t *out) {
    uint32_t first_section = query->section < 0 ? 0 : (uint32_t)query->section;
    uint32_t last_section = query->section < 0 ? event->section_count : first_section + 1;
    uint32_t taken = 0;
    for (uint32_t s = first_section; s < last_section; s++) {
        const hf_section_t *section = &event->sections[s];
        for (uint32_t r = section->first_row; r < section->first_row + section->row_count; r++) {
            if (r < query->row_first || r > query->row_last) continue;
            hf_row_t *row = &event->rows[r];
            if (query->adjacent) {
                if (query->rows_exact &&
                    (row->available < query->count || row->free_run_bound < query->count))
                    continue;
                if (pick_block(row, query, out)) return true;
            } else {
                if (query->rows_exact && row->available == 0) continue;
                taken += pick_separate(row, query, out + taken, query->count - taken);
                if (taken == query->count) return true;
            }
        }
    }
    return false;
}
