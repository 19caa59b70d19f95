/* The state of the orders' domain (order.c): the orders and their id index, and the list of
 * order indexes users and events keep theirs in. Private to src/core, held by value in
 * struct hf_core (internal.h) as core->orders.
 *
 * Each domain's state is one struct in a header of its own (events.h, users.h, holds.h,
 * orders.h, payments.h; the waiting rooms' and dispatch's, made at first use, are private to
 * queue.c and dispatch/ and held by pointer). These headers include only the leaves below
 * the core's interface (lib/, limits.h, timer.h), so the core's container includes them all
 * without any of them including the core back; what each domain's files offer the others
 * is declared, by file, in internal.h. */
#ifndef HF_CORE_ORDERS_H
#define HF_CORE_ORDERS_H

#include <stdint.h>

#include "lib/map.h"

struct hf_order;

/* A growable array of uint32: order indexes, oldest first (a user's orders, an event's). */
typedef struct index_list {
    uint32_t *items;
    uint32_t count, capacity;
} index_list_t;

typedef struct orders {
    struct hf_order *slots; /* by index, which only grows: orders are never forgotten */
    uint32_t count, capacity;
    hf_index_map_t ids; /* an order's id -> its index; the id lives in the order */
    uint64_t exchanged; /* exchanges committed since the core was made (exchange/) */
} orders_t;

#endif
