/* The handler of an event's audit history (API.md section 7, last paragraph): its entries,
 * paged by seq, read from the store; and its route. The entries themselves are written by the
 * store with each batch (store/history.h). The handler is private to its file: the dispatcher
 * (routes.c) reaches it only through this table.
 *
 * Ownership: the table is static and constant. The handler borrows its request for the call
 * and reaches the engine only through request->context (context.h). */
#ifndef HF_API_HISTORY_H
#define HF_API_HISTORY_H

#include "engine/route.h"

extern const hf_route_table_t hf_handlers_history_routes;

#endif
