/* The span index of a resource: a treap of breakpoints keyed by step, each with its delta
 * (+q where a use starts, -q where it ends, merged per step), every node carrying its
 * subtree's sum of deltas and its largest prefix sum. The quantity taken at step x is the sum
 * of the deltas at steps <= x; the most taken over [a, b) is that at a plus the largest prefix
 * within (a, b). Adding a use, a query and a walk of k breakpoints are O(log n) (and + k) in
 * the tree's breakpoints. The nodes of every tree of one calendar live in one growable array
 * with a free list (span_pool_t), named by 32-bit indexes, 0 for none: a use costs no
 * allocation of its own. Priorities come from a seeded generator, so the same calls always
 * build the same trees. Private to src/core/calendar/. */
#ifndef HF_CORE_CALENDAR_SPAN_H
#define HF_CORE_CALENDAR_SPAN_H

#include <stdbool.h>
#include <stdint.h>

typedef struct span_node {
    int64_t delta, sum, max_prefix;
    int32_t key;
    uint32_t left, right;
    uint32_t priority;
} span_node_t;

typedef struct span_pool {
    span_node_t *nodes; /* nodes[0] is the empty tree's stand-in */
    uint32_t count, capacity;
    uint32_t free_first; /* a free node's left links the next one */
    uint32_t live;       /* nodes in some tree */
    uint32_t seed;
} span_pool_t;

void span_pool_init(span_pool_t *pool);
void span_pool_free(span_pool_t *pool);

/* Adds delta at key in the tree rooted at *root (a node whose delta falls to 0 goes). */
void span_add(span_pool_t *pool, uint32_t *root, int32_t key, int64_t delta);
/* The quantity at step x: the sum of the deltas at keys <= x. */
int64_t span_at(const span_pool_t *pool, uint32_t root, int64_t x);
/* The most quantity at any step of [from, to) (from < to). */
int64_t span_max(const span_pool_t *pool, uint32_t root, int64_t from, int64_t to);
/* The least quantity at any step of [from, to) (from < to). */
int64_t span_min(const span_pool_t *pool, uint32_t root, int64_t from, int64_t to);

/* The breakpoints with keys in (after, before), in order: visit is called with each key and
 * the quantity from it on, until it returns false. */
typedef bool (*span_visit_fn)(void *context, int32_t key, int64_t quantity);
void span_walk(const span_pool_t *pool, uint32_t root, int64_t after, int64_t before,
               int64_t start_quantity, span_visit_fn visit, void *context);

/* hf_core_check's part: each node's sums and priorities, keys in order; the number of nodes
 * reached is added to *nodes. NULL or the first fault. */
const char *span_check(const span_pool_t *pool, uint32_t root, uint32_t *nodes);

#endif
