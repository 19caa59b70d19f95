/* Names of the core's statuses, as API.md spells them (core.h). The errors' codes, HTTP statuses
 * and messages are the engine's (engine/errors.h): the core knows no HTTP. */
#include "core/core.h"
#include "core/queue.h"

#include <assert.h>
#include <string.h>

static const char *const SEAT_STATUS_NAMES[] = {"available", "held", "sold"};
static const char *const HOLD_STATUS_NAMES[] = {"held", "confirmed", "released", "expired"};

const char *hf_seat_status_name(uint8_t status) {
    assert(status <= HF_SEAT_SOLD);
    return SEAT_STATUS_NAMES[status];
}

const char *hf_hold_status_name(uint8_t status) {
    assert(status <= HF_HOLD_EXPIRED);
    return HOLD_STATUS_NAMES[status];
}

bool hf_seat_status_parse(const char *text, uint8_t *status) {
    for (int i = 0; i <= HF_SEAT_SOLD; i++) {
        if (strcmp(text, SEAT_STATUS_NAMES[i]) != 0) continue;
        *status = (uint8_t)i;
        return true;
    }
    return false;
}

/* A waiting room's tickets (core/queue.h). */
static const char *const TICKET_STATUS_NAMES[] = {"waiting", "admitted", "completed",
                                                  "expired", "abandoned"};

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

/* An order's statuses, as the store writes them. */
static const char *const ORDER_STATUS_NAMES[] = {"confirmed", "cancelled"};

const char *hf_order_status_name(uint8_t status) {
    assert(status <= HF_ORDER_CANCELLED);
    return ORDER_STATUS_NAMES[status];
}
