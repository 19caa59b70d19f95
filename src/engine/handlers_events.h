/* The handlers of health, events, seats and an event's live stream (API.md sections 2, 5
 * and 9), and their routes. The handlers are private to their file: the dispatcher
 * (routes.c) reaches them only through this table.
 *
 * Ownership: the table is static and constant. A handler borrows its request for the call
 * and reaches the engine only through request->context (context.h). */
#ifndef HF_ENGINE_HANDLERS_EVENTS_H
#define HF_ENGINE_HANDLERS_EVENTS_H

#include "engine/route.h"

extern const hf_route_table_t hf_handlers_events_routes;

#endif
