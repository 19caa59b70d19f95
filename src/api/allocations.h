/* The handlers of allocations (API.md section 14): inventory of an event set aside for a
 * partner, a presale or the artist's guests, made, listed, read and released by the platform
 * and its staff (the API key: section 16); and their routes. The handlers are private to
 * their file: the dispatcher (routes.c) reaches them only through this table.
 *
 * Ownership: the table is static and constant. A handler borrows its request for the call. */
#ifndef HF_API_ALLOCATIONS_H
#define HF_API_ALLOCATIONS_H

#include "engine/route.h"

extern const hf_route_table_t hf_handlers_allocations_routes;

#endif
