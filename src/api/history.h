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
#include "lib/buffer.h"
#include "store/store.h"

extern const hf_route_table_t hf_handlers_history_routes;

/* Appends one entry's JSON object as a page of history shows it: what a notification's data
 * is (engine/outbox.h). calendar_unit: the hf_calendar_unit_t of a calendar's entry, -1 for an
 * event's. false for a damaged row (its data no flat object). */
bool hf_history_entry_write(hf_buffer_t *out, const hf_stored_history_t *entry, int calendar_unit);

#endif
