/* Names of the core's statuses, as API.md spells them (core.h). The errors' codes, HTTP statuses
 * and messages are the engine's (engine/errors.h): the core knows no HTTP. */
#include "core/core.h"
#include "core/queue.h"

#include <assert.h>
#include <string.h>

static const char *const SEAT_STATUS_NAMES[] = {"available", "held", "sold", "allocated"};
static const char *const HOLD_STATUS_NAMES[] = {"held", "confirmed", "released", "expired"};

const char *hf_seat_status_name(uint8_t status) {
    assert(status <= HF_SEAT_ALLOCATED);
    return SEAT_STATUS_NAMES[status];
}

const char *hf_hold_status_name(uint8_t status) {
    assert(status <= HF_HOLD_EXPIRED);
    return HOLD_STATUS_NAMES[status];
}

bool hf_seat_status_parse(const char *text, uint8_t *status) {
    for (int i = 0; i <= HF_SEAT_ALLOCATED; i++) {
        if (strcmp(text, SEAT_STATUS_NAMES[i]) != 0) continue;
        *status = (uint8_t)i;
        return true;
    }
    return false;
}

/* A waiting room's tickets (core/queue.h). */
static const char *const TICKET_STATUS_NAMES[] = {"waiting", "admitted", "completed", "expired",
                                                  "abandoned"};

const char *hf_ticket_status_name(uint8_t status) {
    assert(status <= HF_TICKET_ABANDONED);
    return TICKET_STATUS_NAMES[status];
}

bool hf_ticket_status_parse(const char *text, uint8_t *status) {
    for (uint8_t i = 0; text && i <= HF_TICKET_ABANDONED; i++) {
        if (strcmp(TICKET_STATUS_NAMES[i], text) != 0) continue;
        *status = i;
        return true;
    }
    return false;
}

/* The words of the stored rows and of the staff's status filters, read back: each parse
 * beside its name, so a word exists once (the store's rows, store/decoder.h, and the engine's
 * query filters read them here). NULL reads as no status. */
static const char *const ORDER_STATUS_NAMES[] = {"confirmed", "cancelled", "exchanged"};

const char *hf_order_status_name(uint8_t status) {
    assert(status <= HF_ORDER_EXCHANGED);
    return ORDER_STATUS_NAMES[status];
}

static bool name_find(const char *const *names, uint8_t count, const char *text, uint8_t *status) {
    for (uint8_t i = 0; text != NULL && i < count; i++) {
        if (strcmp(names[i], text) != 0) continue;
        *status = i;
        return true;
    }
    return false;
}

bool hf_hold_status_parse(const char *text, uint8_t *status) {
    return name_find(HOLD_STATUS_NAMES, HF_HOLD_EXPIRED + 1, text, status);
}

bool hf_order_status_parse(const char *text, uint8_t *status) {
    return name_find(ORDER_STATUS_NAMES, HF_ORDER_EXCHANGED + 1, text, status);
}
