/* The handlers of the box office's staff (API.md section 2, last paragraphs): an event's holds
 * and orders, listed with who holds and who bought, and the closing and reopening of its
 * sales; and their routes. The handlers are private to their file: the dispatcher (routes.c)
 * reaches them only through this table.
 *
 * Ownership: the table is static and constant. A handler borrows its request for the call
 * and reaches the engine only through request->context (context.h). */
#ifndef HF_API_STAFF_H
#define HF_API_STAFF_H

#include "engine/route.h"

extern const hf_route_table_t hf_handlers_staff_routes;

#endif
