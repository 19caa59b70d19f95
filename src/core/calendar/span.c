/* The span index (span.h): a treap over a calendar's pool of nodes. */
#include "core/calendar/span.h"

#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

/* Below any sum a tree can hold, with room to add to it. */
#define NO_PREFIX (INT64_MIN / 4)
/* The walks' stack: a treap of a few million nodes is some 60 deep; far more is a bug. */
#define SPAN_DEPTH_MAX 256

typedef struct span_range {
    int64_t sum, max_prefix;
} span_range_t;

static const span_range_t EMPTY_RANGE = {0, NO_PREFIX};

static span_range_t range_then(span_range_t first, span_range_t second) {
    int64_t after = first.sum + second.max_prefix;
    return (span_range_t){first.sum + second.sum,
                          first.max_prefix > after ? first.max_prefix : after};
}

static span_range_t node_alone(const span_node_t *node) {
    return (span_range_t){node->delta, node->delta};
}

static span_range_t subtree(const span_pool_t *pool, uint32_t index) {
    if (index == 0) return EMPTY_RANGE;
    return (span_range_t){pool->nodes[index].sum, pool->nodes[index].max_prefix};
}

static void pull(span_pool_t *pool, uint32_t index) {
    span_node_t *node = &pool->nodes[index];
    span_range_t whole = range_then(range_then(subtree(pool, node->left), node_alone(node)),
                                    subtree(pool, node->right));
    node->sum = whole.sum;
    node->max_prefix = whole.max_prefix;
}

void span_pool_init(span_pool_t *pool) {
    memset(pool, 0, sizeof *pool);
    pool->seed = 0x9e3779b9u;
}

void span_pool_free(span_pool_t *pool) {
    free(pool->nodes);
    memset(pool, 0, sizeof *pool);
}

/* xorshift32: deterministic, never 0 from a seed that is not. */
static uint32_t next_priority(span_pool_t *pool) {
    uint32_t x = pool->seed;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    pool->seed = x;
    return x;
}

static uint32_t node_new(span_pool_t *pool, int32_t key, int64_t delta) {
    uint32_t index;
    if (pool->free_first != 0) {
        index = pool->free_first;
        pool->free_first = pool->nodes[index].left;
    } else {
        uint32_t needed = pool->count ? pool->count + 1 : 2;
        pool->nodes = grow(pool->nodes, &pool->capacity, needed, sizeof *pool->nodes);
        if (pool->count == 0) {
            memset(&pool->nodes[0], 0, sizeof pool->nodes[0]);
            pool->count = 1;
        }
        index = pool->count++;
    }
    pool->nodes[index] = (span_node_t){delta, delta, delta, key, 0, 0, next_priority(pool)};
    pool->live++;
    return index;
}

static void node_release(span_pool_t *pool, uint32_t index) {
    pool->nodes[index].left = pool->free_first;
    pool->free_first = index;
    pool->live--;
}

/* The two trees joined, every key of left below every key of right. */
static uint32_t merge(span_pool_t *pool, uint32_t left, uint32_t right) {
    if (left == 0) return right;
    if (right == 0) return left;
    if (pool->nodes[left].priority > pool->nodes[right].priority) {
        uint32_t joined = merge(pool, pool->nodes[left].right, right);
        pool->nodes[left].right = joined;
        pull(pool, left);
        return left;
    }
    uint32_t joined = merge(pool, left, pool->nodes[right].left);
    pool->nodes[right].left = joined;
    pull(pool, right);
    return right;
}

static uint32_t rotate_right(span_pool_t *pool, uint32_t index) {
    uint32_t left = pool->nodes[index].left;
    pool->nodes[index].left = pool->nodes[left].right;
    pool->nodes[left].right = index;
    pull(pool, index);
    pull(pool, left);
    return left;
}

static uint32_t rotate_left(span_pool_t *pool, uint32_t index) {
    uint32_t right = pool->nodes[index].right;
    pool->nodes[index].right = pool->nodes[right].left;
    pool->nodes[right].left = index;
    pull(pool, index);
    pull(pool, right);
    return right;
}

static uint32_t add_at(span_pool_t *pool, uint32_t index, int32_t key, int64_t delta) {
    if (index == 0) return node_new(pool, key, delta);
    span_node_t *node = &pool->nodes[index];
    if (key == node->key) {
        node->delta += delta;
        if (node->delta != 0) {
            pull(pool, index);
            return index;
        }
        uint32_t joined = merge(pool, node->left, node->right);
        node_release(pool, index);
        return joined;
    }
    if (key < node->key) {
        uint32_t child = add_at(pool, node->left, key, delta);
        pool->nodes[index].left = child;
        if (child && pool->nodes[child].priority > pool->nodes[index].priority)
            return rotate_right(pool, index);
    } else {
        uint32_t child = add_at(pool, node->right, key, delta);
        pool->nodes[index].right = child;
        if (child && pool->nodes[child].priority > pool->nodes[index].priority)
            return rotate_left(pool, index);
    }
    pull(pool, index);
    return index;
}

void span_add(span_pool_t *pool, uint32_t *root, int32_t key, int64_t delta) {
    if (delta != 0) *root = add_at(pool, *root, key, delta);
}

int64_t span_at(const span_pool_t *pool, uint32_t root, int64_t x) {
    int64_t sum = 0;
    uint32_t index = root;
    while (index != 0) {
        const span_node_t *node = &pool->nodes[index];
        if (node->key <= x) {
            sum += subtree(pool, node->left).sum + node->delta;
            index = node->right;
        } else {
            index = node->left;
        }
    }
    return sum;
}

/* The deltas of the keys above after, in order, within the subtree. */
static span_range_t range_above(const span_pool_t *pool, uint32_t index, int64_t after) {
    span_range_t right_part = EMPTY_RANGE;
    /* Walk down: nodes above after are collected with their right subtrees, from the right. */
    span_range_t parts[SPAN_DEPTH_MAX];
    uint32_t depth = 0;
    while (index != 0) {
        const span_node_t *node = &pool->nodes[index];
        if (node->key <= after) {
            index = node->right;
            continue;
        }
        if (depth == SPAN_DEPTH_MAX) abort();
        parts[depth++] = range_then(node_alone(node), subtree(pool, node->right));
        index = node->left;
    }
    while (depth > 0) right_part = range_then(right_part, parts[--depth]);
    return right_part;
}

/* The deltas of the keys below before, in order, within the subtree. */
static span_range_t range_below(const span_pool_t *pool, uint32_t index, int64_t before) {
    span_range_t left_part = EMPTY_RANGE;
    while (index != 0) {
        const span_node_t *node = &pool->nodes[index];
        if (node->key >= before) {
            index = node->left;
            continue;
        }
        left_part = range_then(left_part, range_then(subtree(pool, node->left), node_alone(node)));
        index = node->right;
    }
    return left_part;
}

/* The deltas of the keys in (after, before), in order. */
static span_range_t range_between(const span_pool_t *pool, uint32_t root, int64_t after,
                                  int64_t before) {
    uint32_t index = root;
    while (index != 0) {
        const span_node_t *node = &pool->nodes[index];
        if (node->key <= after) index = node->right;
        else if (node->key >= before) index = node->left;
        else
            return range_then(range_then(range_above(pool, node->left, after), node_alone(node)),
                              range_below(pool, node->right, before));
    }
    return EMPTY_RANGE;
}

int64_t span_max(const span_pool_t *pool, uint32_t root, int64_t from, int64_t to) {
    int64_t start = span_at(pool, root, from);
    span_range_t inside = range_between(pool, root, from, to);
    return inside.max_prefix > 0 ? start + inside.max_prefix : start;
}

typedef struct least {
    int64_t value;
} least_t;

static bool least_visit(void *context, int32_t key, int64_t quantity) {
    least_t *least = context;
    (void)key;
    if (quantity < least->value) least->value = quantity;
    return true;
}

int64_t span_min(const span_pool_t *pool, uint32_t root, int64_t from, int64_t to) {
    int64_t start = span_at(pool, root, from);
    least_t least = {start};
    span_walk(pool, root, from, to, start, least_visit, &least);
    return least.value;
}

void span_walk(const span_pool_t *pool, uint32_t root, int64_t after, int64_t before,
               int64_t start_quantity, span_visit_fn visit, void *context) {
    uint32_t stack[SPAN_DEPTH_MAX];
    uint32_t depth = 0;
    uint32_t index = root;
    int64_t quantity = start_quantity;
    /* The path to the first key above after: nodes above it wait on the stack. */
    while (index != 0 || depth > 0) {
        while (index != 0) {
            const span_node_t *node = &pool->nodes[index];
            if (node->key <= after) {
                index = node->right;
                continue;
            }
            if (depth == SPAN_DEPTH_MAX) abort();
            stack[depth++] = index;
            index = node->left;
        }
        if (depth == 0) return;
        const span_node_t *node = &pool->nodes[stack[--depth]];
        if (node->key >= before) return;
        quantity += node->delta;
        if (!visit(context, node->key, quantity)) return;
        index = node->right;
    }
}

static const char *check_node(const span_pool_t *pool, uint32_t index, int64_t low, int64_t high,
                              uint32_t *nodes, uint32_t depth) {
    if (index == 0) return NULL;
    if (index >= pool->count || depth > SPAN_DEPTH_MAX) return "span index: a link out of range";
    const span_node_t *node = &pool->nodes[index];
    (*nodes)++;
    if (node->key <= low || node->key >= high) return "span index: keys out of order";
    if (node->delta == 0) return "span index: a breakpoint without delta";
    const uint32_t children[2] = {node->left, node->right};
    for (int c = 0; c < 2; c++)
        if (children[c] && pool->nodes[children[c]].priority > node->priority)
            return "span index: a priority above its parent's";
    const char *fault = check_node(pool, node->left, low, node->key, nodes, depth + 1);
    if (!fault) fault = check_node(pool, node->right, node->key, high, nodes, depth + 1);
    if (fault) return fault;
    span_range_t whole = range_then(range_then(subtree(pool, node->left), node_alone(node)),
                                    subtree(pool, node->right));
    if (whole.sum != node->sum || whole.max_prefix != node->max_prefix)
        return "span index: a node's sums are not its subtree's";
    return NULL;
}

const char *span_check(const span_pool_t *pool, uint32_t root, uint32_t *nodes) {
    return check_node(pool, root, INT64_MIN, INT64_MAX, nodes, 0);
}
