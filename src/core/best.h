/* Best-available seat selection (API.md section 3), used by the core's hold command. */
#ifndef HF_BEST_H
#define HF_BEST_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"

/* Whether a seat may be picked (free, or freed by the same command). */
typedef bool (*hf_best_free_fn)(void *context, uint32_t seat_index);

typedef struct hf_best_query {
    uint32_t count;
    int32_t section; /* index, or -1 for every section in listed order */
    bool adjacent;
    bool rows_exact; /* row->available counts every pickable seat: rows with fewer
                                   than needed can be skipped without looking at them */
    hf_best_free_fn is_free;
    void *context;
    /* Only rows row_first to row_last (indexes, inclusive) are read: an allocation's request
     * reads the rows its seats are in, not the event's (0 and UINT32_MAX: every row). */
    uint32_t row_first, row_last;
} hf_best_query_t;

/* Writes query->count seat indexes into out, best first; false when no choice fits. With
 * rows_exact, rows are skipped by their counts and free-run bounds, and every row read has
 * its bound made exact. */
bool hf_best_pick(hf_event_t *event, const hf_best_query_t *query, uint32_t *out);

#endif
