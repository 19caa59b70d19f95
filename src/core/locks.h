/* Order locks: the old unit's side of an exchange across two owners (docs/DESIGN.md "Exchanges
 * across two owners"). An exchange hold of another unit locks its old order here, in one
 * durable step (HF_MUTATION_ORDER_LOCK), before the hold's unit decides; the lock ends when
 * this unit finishes the exchange (the order exchanged) or learns the hold was not committed
 * (the order confirmed again). A locked order still reads confirmed; its cancel and any other
 * lock or exchange of it answer HF_ERROR_ORDER_NOT_ACTIVE until the lock ends.
 *
 * Ownership: the core's; views borrow its strings until the next command. */
#ifndef HF_CORE_LOCKS_H
#define HF_CORE_LOCKS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"

/* Orders locked at once in one core: each is an exchange in flight between two nodes (a round
 * trip, or a takeover's seconds after a crash), so more means something is stuck; a lock past
 * them is refused (HF_ERROR_CAPACITY) and the exchange is not made. */
#define HF_ORDER_LOCKS_MAX 4096

/* Locks order_id for the exchange hold hold_id of unit hold_unit: HF_ERROR_ORDER_NOT_FOUND,
 * HF_ERROR_ORDER_NOT_ACTIVE (not confirmed, its event cancelled, or locked by another hold),
 * HF_ERROR_INVALID_REQUEST
 * (an id too long), HF_ERROR_CAPACITY; HF_OK once locked (a repeat by the same hold emits
 * nothing). */
hf_error_t hf_core_order_lock(hf_core_t *core, const char *order_id, const char *hold_id,
                              const char *hold_unit, hf_time_ms_t now);
/* Ends the lock of order_id by hold_id, the order confirmed as before: HF_OK, also when it was
 * not locked by that hold (nothing emitted then); HF_ERROR_ORDER_NOT_FOUND. */
hf_error_t hf_core_order_unlock(hf_core_t *core, const char *order_id, const char *hold_id,
                                hf_time_ms_t now);
/* The exchange decided by hold_id's unit, finished here: the order locked by hold_id becomes
 * exchanged, replaced by new_order_id (of another unit), its seats, units and spans are free,
 * and the lock ends, in one step. HF_OK also for a repeat (already exchanged by new_order_id);
 * HF_ERROR_ORDER_NOT_ACTIVE when the order is not locked by hold_id, or no longer confirmed (a
 * cancel job went through it); HF_ERROR_ORDER_NOT_FOUND;
 * HF_ERROR_INVALID_REQUEST for a new_order_id too long. */
hf_error_t hf_core_order_exchange_finish(hf_core_t *core, const char *order_id, const char *hold_id,
                                         const char *new_order_id, hf_time_ms_t now);

/* A lock as the resolution reads it. */
typedef struct hf_order_lock_view {
    const char *order_id, *hold_id, *hold_unit;
    hf_time_ms_t locked_at_ms;
} hf_order_lock_view_t;
/* Locks held now, and the one at index (< the count). */
uint32_t hf_core_order_lock_count(const hf_core_t *core);
hf_order_lock_view_t hf_core_order_lock_at(const hf_core_t *core, uint32_t index);
/* The hold that locks the order at order_index, or NULL. */
const char *hf_core_order_locked_by(const hf_core_t *core, uint32_t order_index);
/* A lock as the store kept it (its row, while locked). */
typedef struct hf_stored_order_lock {
    const char *order_id, *event_id, *hold_id, *hold_unit;
    hf_time_ms_t locked_at_ms;
} hf_stored_order_lock_t;
/* A stored lock, loaded after its order (emits nothing); one whose order is not here, or not
 * confirmed, is dropped. */
void hf_core_order_lock_restore(hf_core_t *core, const hf_stored_order_lock_t *stored);

/* ---- the new unit's side: exchange holds whose old order is another unit's ----
 *
 * Such a hold (a remote exchange hold) names its old order by id only, as read from the old
 * unit's owner (status, user, total); it keeps nothing of it (the units differ). Its commit
 * runs only once that owner locked the order for it (the caller's word: the lock's answer),
 * and is the exchange's decision: the hold confirmed, the new order replacing the remote one,
 * a refund of a negative difference against the old order's payment. Any other commit of it
 * (one without a lock) answers HF_ERROR_ORDER_NOT_ACTIVE. */

/* A restored remote exchange hold's old total, until its commit's lock answers it. */
#define HF_REMOTE_TOTAL_UNKNOWN INT64_MIN

/* The old order as its owner answered (borrowed). */
typedef struct hf_remote_order {
    const char *order_id, *user_id, *payment_ref; /* payment_ref NULL: not paid */
    int64_t total;
    bool confirmed;
} hf_remote_order_t;
/* Places request (its exchange_for names old's order) as a remote exchange hold: as
 * hf_core_hold, with HF_ERROR_NOT_OWNER when old is not user_id's and
 * HF_ERROR_ORDER_NOT_ACTIVE when it is not confirmed. */
hf_error_t hf_core_hold_remote_exchange(hf_core_t *core, const hf_hold_request_t *request,
                                        const hf_remote_order_t *old, hf_time_ms_t now,
                                        uint32_t *hold_index, hf_error_detail_t *detail);
/* As hf_core_hold_remote_exchange, a calendar's hold (hf_core_calendar_hold): its request's
 * exchange_for names old's order, another unit's (restored as it was on return). */
struct hf_calendar_hold_request; /* core/calendars.h */
hf_error_t hf_core_calendar_hold_remote_exchange(hf_core_t *core,
                                                 struct hf_calendar_hold_request *request,
                                                 const hf_remote_order_t *old, hf_time_ms_t now,
                                                 uint32_t *hold_index, hf_error_detail_t *detail);
/* The old order's id of the remote exchange hold hold_id, or NULL for any other hold;
 * *total the old order's total when known (read when placed; a restored hold knows none until
 * its commit's lock says it), *known whether it is. */
const char *hf_core_remote_exchange_of(const hf_core_t *core, const char *hold_id, int64_t *total,
                                       bool *known);
/* The decision: commits the held remote exchange hold hold_id with old as locked for it
 * (old->order_id its own old order), as hf_core_commit_refunding does an exchange. */
hf_error_t hf_core_commit_remote_exchange(hf_core_t *core, const char *hold_id, const char *user_id,
                                          const char *order_id, const char *payment_ref,
                                          const char *refund_id, const hf_remote_order_t *old,
                                          hf_time_ms_t now, uint32_t *order_index);
/* A payment delivery (as hf_core_payment) naming a remote exchange hold, once its old order's
 * owner answered the lock asked for it: locked the old order as locked for that hold, NULL
 * when the owner refused (not confirmed, locked by another, unknown). payment.succeeded then
 * commits the held hold (as its commit would, paid by the intent, its amount the positive
 * difference), else requires the refund: order_not_active when refused. hf_core_payment alone
 * never commits a remote exchange hold (order_not_active: no lock, no decision). */
hf_error_t hf_core_payment_remote(hf_core_t *core, const hf_payment_delivery_t *delivery,
                                  const hf_remote_order_t *locked, hf_time_ms_t now,
                                  hf_payment_outcome_t *outcome);

#endif
