/* The audit history of an event (API.md section 7): every state change of an event becomes one
 * entry, appended by the store in the same transaction as the change. The entries are derived
 * here from the batch's records, on the writer thread, so the core stays as it is and a failed
 * batch leaves no entry. Which kinds make entries, and their functions, is their rows' in the
 * table of record kinds (records.h). Every backend uses these; each numbers the entries per event (seq,
 * from 1, without gaps) and keeps them in its table history(event_id, seq, type, at, data).
 *
 * data is compact JSON, an object of the entry's own fields in the API's shapes (times written
 * as RFC 3339 with milliseconds), so a reader splices it into an answer without parsing it:
 *   hold     {"reservation_id","total","expires_at"}
 *   extend   {"reservation_id","expires_at"}
 *   release  {"reservation_id"}
 *   expiry   {"reservation_id","expires_at"}
 *   commit   {"reservation_id","order_id","total","payment_ref"} (and "replaces": an exchange)
 *   cancel   {"order_id","refund_id"} (refund_id null when the order was not paid)
 *   booking  {"order_id","total","payment_ref"}
 *   payment  {"reservation_id","payment_intent_id","payment_type","amount","result", and
 *            "order_id" (committed), "late" (when true), "refund_id" and "reason" (a refund)}
 * payment_ref is null when the order has none. A reader joins each entry that names a
 * reservation_id or an order_id with that hold or order (store.h, hf_stored_history_t), which
 * gives the entry its user_id and its seats and pools (a calendar's items): the row repeats
 * none of them (rows written by older builds do, and a read skips them: api/history.c). */
#ifndef HF_STORE_HISTORY_H
#define HF_STORE_HISTORY_H

#include "core/mutation.h"
#include "lib/buffer.h"

/* The entry a record makes: its type word ("hold", "extend", ...) and the event it belongs to
 * (borrowed from the record), or false when the record is no change of an event's history
 * (seats, pools, order items, idempotency keys, an event's creation or its sales switch). */
bool hf_history_entry_of(const hf_mutation_t *mutation, const char **type, const char **event_id);
/* Appends the entry's data (above) for a record hf_history_entry_of accepted. */
void hf_history_data_write(hf_buffer_t *out, const hf_mutation_t *mutation);

#endif
