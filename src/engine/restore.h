/* Restore: the state read back from the store's tables into the core and the idempotency
 * table (at start, and after a store failure through a fresh connection), and a hold the
 * core has forgotten taken back from the store when asked for.
 *
 * Ownership: nothing is returned but ids and indexes; context, store and error are borrowed
 * for the call. Loop thread only (or the creating thread, before the loop runs). */
#ifndef HF_ENGINE_RESTORE_H
#define HF_ENGINE_RESTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/context.h"
#include "lib/progress.h"
#include "store/store.h"

/* Loads what store holds into context's core and idempotency table, keeping at most
 * finished_holds_max released and expired holds in memory. Returns 0, or -1 with a sentence
 * in error. */
int hf_restore_load(hf_context_t *context, hf_store_t *store, uint64_t finished_holds_max,
                    char *error, size_t error_size);
/* The same, counting each hold, order and refund read into progress (NULL: none). */
int hf_restore_load_progress(hf_context_t *context, hf_store_t *store, uint64_t finished_holds_max,
                             hf_progress_t *progress, char *error, size_t error_size);
/* The same for one unit (an event or a fleet, API.md section 11) added to what the core
 * holds: a node taking the unit over (cluster/cluster.h). The store must have leases. */
int hf_restore_load_unit(hf_context_t *context, hf_store_t *store, const char *unit,
                         uint64_t finished_holds_max, char *error, size_t error_size);
/* hf_restore_load_unit in two halves (store.h's hf_store_unit_fetch): the fetch reads the
 * unit's rows into *rows on any thread (now_ms: the engine's clock when the work was
 * asked for, which names the idempotency keys and deliveries still kept), touching no
 * context; the delivery, on the engine's thread, adds them to context's core as
 * hf_restore_load_unit would, and frees rows. */
int hf_restore_unit_fetch(hf_store_t *store, const char *unit, int64_t now_ms, void **rows,
                          char *error, size_t error_size);
int hf_restore_unit_deliver(hf_context_t *context, hf_store_t *store, void *rows, int64_t now_ms,
                            uint64_t finished_holds_max, char *error, size_t error_size);
/* Takes a hold the core has forgotten back from context's store (hf_core_revive_hold): true
 * and *index when the store has a released or expired hold of this id. */
bool hf_restore_hold_revive(hf_context_t *context, const char *hold_id, uint32_t *index);
/* The same for a finished waiting-room ticket the core has forgotten: true and *index when the
 * store had it and the core took it back. */
bool hf_restore_ticket_revive(hf_context_t *context, const char *ticket_id, uint32_t *index);

#endif
