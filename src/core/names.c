/* Names of the core's errors and statuses, as API.md spells them (core.h).
 *
 * hf_error_status is leaving the core for the engine's table of error codes (code, HTTP
 * status and message in one table, DESIGN.md): the core knows no HTTP status. It stays here,
 * unchanged, only while the engine still calls it. */
#include "core/core.h"

#include <assert.h>
#include <string.h>

const char *hf_error_code(hf_error_t error) {
    switch (error) {
    case HF_OK: return "ok";
    case HF_ERROR_INVALID_REQUEST: return "invalid_request";
    case HF_ERROR_EVENT_EXISTS: return "event_exists";
    case HF_ERROR_EVENT_NOT_FOUND: return "event_not_found";
    case HF_ERROR_SEAT_NOT_FOUND: return "seat_not_found";
    case HF_ERROR_SEATS_UNAVAILABLE: return "seats_unavailable";
    case HF_ERROR_POOL_NOT_FOUND: return "pool_not_found";
    case HF_ERROR_INSUFFICIENT_QUANTITY: return "insufficient_quantity";
    case HF_ERROR_USER_LIMIT_EXCEEDED: return "user_limit_exceeded";
    case HF_ERROR_HOLD_NOT_FOUND: return "hold_not_found";
    case HF_ERROR_NOT_OWNER: return "not_owner";
    case HF_ERROR_HOLD_EXPIRED: return "hold_expired";
    case HF_ERROR_HOLD_NOT_ACTIVE: return "hold_not_active";
    case HF_ERROR_ALREADY_CONFIRMED: return "already_confirmed";
    case HF_ERROR_HOLD_RELEASED: return "hold_released";
    case HF_ERROR_ORDER_NOT_FOUND: return "order_not_found";
    case HF_ERROR_CAPACITY: return "capacity_exceeded";
    case HF_ERROR_SECTION_NOT_FOUND: return "section_not_found";
    case HF_ERROR_VERSION_CONFLICT: return "version_conflict";
    }
    return "internal";
}

int hf_error_status(hf_error_t error) {
    switch (error) {
    case HF_OK: return 200;
    case HF_ERROR_INVALID_REQUEST: return 400;
    case HF_ERROR_NOT_OWNER: return 403;
    case HF_ERROR_EVENT_NOT_FOUND:
    case HF_ERROR_SEAT_NOT_FOUND:
    case HF_ERROR_POOL_NOT_FOUND:
    case HF_ERROR_HOLD_NOT_FOUND:
    case HF_ERROR_ORDER_NOT_FOUND:
    case HF_ERROR_SECTION_NOT_FOUND: return 404;
    case HF_ERROR_HOLD_EXPIRED: return 410;
    case HF_ERROR_USER_LIMIT_EXCEEDED: return 429;
    case HF_ERROR_CAPACITY: return 503;
    default: return 409;
    }
}

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
