/* One outbound notification as the platform sees it (API.md section 15): its id, its type
 * from its history entry's, its body, and the schedule of its retries. Pure functions (no
 * clock, no I/O), so unit tests drive them; the outbox (outbox.h) delivers.
 *
 * Ownership: nothing is allocated but into the caller's buffer. Any thread. */
#ifndef HF_ENGINE_NOTIFICATION_H
#define HF_ENGINE_NOTIFICATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buffer.h"
#include "lib/limits.h"

/* A notification's delivery state, as the history's notify_status column keeps it. */
typedef enum hf_notify_status {
    HF_NOTIFY_PENDING = 0,
    HF_NOTIFY_DELIVERED = 1,
    HF_NOTIFY_FAILED = 2,
} hf_notify_status_t;

/* "pending", "delivered", "failed"; NULL out of range. */
const char *hf_notify_status_name(int status);
/* The status a word names, or -1. */
int hf_notify_status_parse(const char *word);

/* The notification's type for a history entry's type word: "hold" is "hold.created", "commit"
 * "order.confirmed", ... (docs/API.md lists them all); a word the table does not have (a
 * newer domain's) is "history." and the word, so that nothing goes untold. Writes at most
 * size bytes, NUL included. */
void hf_notify_type_of(const char *history_type, char *type, size_t size);

/* The id of the notification of entry seq of unit: "nt_" SEQ "_" UNIT (units' ids have no
 * character that needs escaping in a path). The same every time, so receivers deduplicate on
 * it across redeliveries. */
#define HF_NOTIFY_ID_SIZE (3 + 20 + 1 + HF_ID_SIZE_MAX + 1)
void hf_notify_id_write(const char *unit, int64_t seq, char id[HF_NOTIFY_ID_SIZE]);
/* Reads an id back: false for anything hf_notify_id_write would not write. */
bool hf_notify_id_parse(const char *id, char unit[HF_ID_SIZE_MAX + 1], int64_t *seq);

/* The delay before the next attempt after attempts failed ones (attempts >= 1): 1 s doubling,
 * at most HF_NOTIFY_BACKOFF_MAX_MS. */
int64_t hf_notify_backoff_ms(uint32_t attempts);
/* When a notification of a change at at_ms whose attempt failed at now_ms is due again, or -1
 * when its time is up (HF_NOTIFY_RETRY_FOR_MS after its change): it is then failed. */
int64_t hf_notify_next_attempt_ms(int64_t at_ms, int64_t now_ms, uint32_t attempts);

/* Appends the body: {"id","type","unit":"KIND:ID","seq","at","data":ENTRY}, where kind is the
 * unit's ("event" or "calendar") and entry the history entry's JSON object as GET .../history
 * shows it (entry_length bytes). */
void hf_notify_body_write(hf_buffer_t *out, const char *kind, const char *unit, int64_t seq,
                          int64_t at_ms, const char *history_type, const char *entry,
                          size_t entry_length);

#endif
