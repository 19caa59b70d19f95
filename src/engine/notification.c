/* A notification's id, type, body and retries (notification.h). */
#include "engine/notification.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "lib/json.h"

static const char *const STATUS_NAMES[] = {[HF_NOTIFY_PENDING] = "pending",
                                           [HF_NOTIFY_DELIVERED] = "delivered",
                                           [HF_NOTIFY_FAILED] = "failed"};

const char *hf_notify_status_name(int status) {
    return status >= 0 && status <= HF_NOTIFY_FAILED ? STATUS_NAMES[status] : NULL;
}

int hf_notify_status_parse(const char *word) {
    for (int status = 0; status <= HF_NOTIFY_FAILED; status++)
        if (strcmp(word, STATUS_NAMES[status]) == 0) return status;
    return -1;
}

/* What each history type tells: what it is about, then what happened. A booking is an order
 * confirmed without a hold, told as any confirmed order so that fulfilment has one type to
 * hear; its data's own type says which. */
static const struct {
    const char *history, *notification;
} TYPES[] = {
    {"hold", "hold.created"},
    {"extend", "hold.extended"},
    {"release", "hold.released"},
    {"expiry", "hold.expired"},
    {"commit", "order.confirmed"},
    {"booking", "order.confirmed"},
    {"cancel", "order.cancelled"},
    {"exchange", "order.exchanged"},
    {"payment", "payment.recorded"},
    {"event_update", "event.updated"},
    {"event_cancel", "event.cancelled"},
    {"waitlist_offer", "offer.created"},
    {"waitlist_fulfilled", "offer.fulfilled"},
    {"waitlist_lapsed", "offer.lapsed"},
    {"rebooking_offer", "offer.created"},
    {"job_done", "job.done"},
    {"allocation", "allocation.created"},
    {"allocation_release", "allocation.released"},
};

void hf_notify_type_of(const char *history_type, char *type, size_t size) {
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++) {
        if (strcmp(TYPES[i].history, history_type) == 0) {
            snprintf(type, size, "%s", TYPES[i].notification);
            return;
        }
    }
    snprintf(type, size, "history.%s", history_type);
}

void hf_notify_id_write(const char *unit, int64_t seq, char id[HF_NOTIFY_ID_SIZE]) {
    snprintf(id, HF_NOTIFY_ID_SIZE, "nt_%" PRId64 "_%s", seq, unit);
}

bool hf_notify_id_parse(const char *id, char unit[HF_ID_SIZE_MAX + 1], int64_t *seq) {
    if (strncmp(id, "nt_", 3) != 0) return false;
    const char *digits = id + 3;
    size_t count = strspn(digits, "0123456789");
    if (count == 0 || count > 18 || digits[0] == '0' || digits[count] != '_') return false;
    const char *name = digits + count + 1;
    if (strlen(name) > HF_ID_SIZE_MAX || !hf_core_id_valid(name)) return false;
    *seq = strtoll(digits, NULL, 10);
    snprintf(unit, HF_ID_SIZE_MAX + 1, "%s", name);
    return true;
}

int64_t hf_notify_backoff_ms(uint32_t attempts) {
    int64_t delay = HF_NOTIFY_BACKOFF_FIRST_MS;
    for (uint32_t i = 1; i < attempts && delay < HF_NOTIFY_BACKOFF_MAX_MS; i++) delay *= 2;
    return delay < HF_NOTIFY_BACKOFF_MAX_MS ? delay : HF_NOTIFY_BACKOFF_MAX_MS;
}

int64_t hf_notify_next_attempt_ms(int64_t at_ms, int64_t now_ms, uint32_t attempts) {
    int64_t next = now_ms + hf_notify_backoff_ms(attempts);
    return next > at_ms + HF_NOTIFY_RETRY_FOR_MS ? -1 : next;
}

void hf_notify_body_write(hf_buffer_t *out, const char *kind, const char *unit, int64_t seq,
                          int64_t at_ms, const char *history_type, const char *entry,
                          size_t entry_length) {
    char id[HF_NOTIFY_ID_SIZE], type[64], unit_name[HF_ID_SIZE_MAX + 16];
    hf_notify_id_write(unit, seq, id);
    hf_notify_type_of(history_type, type, sizeof type);
    snprintf(unit_name, sizeof unit_name, "%s:%s", kind, unit);
    hf_json_t json;
    hf_json_init(&json, out);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "id");
    hf_json_string(&json, id);
    HF_JSON_KEY(&json, "type");
    hf_json_string(&json, type);
    HF_JSON_KEY(&json, "unit");
    hf_json_string(&json, unit_name);
    HF_JSON_KEY(&json, "seq");
    hf_json_int(&json, seq);
    HF_JSON_KEY(&json, "at");
    hf_json_time(&json, at_ms);
    HF_JSON_KEY(&json, "data");
    hf_json_raw(&json, entry, entry_length);
    hf_json_object_end(&json);
}
