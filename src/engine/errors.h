/* The errors module: one table of every error the API answers (API.md section 1), each with
 * its code, its HTTP status and its default message, and the mapping from the core's
 * hf_error_t onto it. Every error reply of the engine takes its code and status from here;
 * the HTTP layer's own 400/413/431/505 answers to malformed requests are the only ones made
 * elsewhere (net/http.c).
 *
 * Ownership: entries and their strings are static and constant; a pointer returned here is
 * valid for the life of the process. Any thread may read them. */
#ifndef HF_ENGINE_ERRORS_H
#define HF_ENGINE_ERRORS_H

#include "core/core.h"

typedef enum hf_api_error {
    /* The engine's own. */
    HF_API_ERROR_INVALID_JSON,
    HF_API_ERROR_INVALID_REQUEST,
    HF_API_ERROR_UNAUTHORIZED,
    HF_API_ERROR_FORBIDDEN,
    HF_API_ERROR_NOT_FOUND,
    HF_API_ERROR_METHOD_NOT_ALLOWED,
    HF_API_ERROR_BODY_TOO_LARGE,
    HF_API_ERROR_IDEMPOTENCY_KEY_REUSED,
    HF_API_ERROR_UNAVAILABLE,
    HF_API_ERROR_WEBHOOKS_NOT_CONFIGURED,
    HF_API_ERROR_INVALID_SIGNATURE,
    /* The core's (hf_error_t), by hf_errors_from_core. */
    HF_API_ERROR_EVENT_EXISTS,
    HF_API_ERROR_EVENT_NOT_FOUND,
    HF_API_ERROR_SEAT_NOT_FOUND,
    HF_API_ERROR_SEATS_UNAVAILABLE,
    HF_API_ERROR_POOL_NOT_FOUND,
    HF_API_ERROR_INSUFFICIENT_QUANTITY,
    HF_API_ERROR_USER_LIMIT_EXCEEDED,
    HF_API_ERROR_HOLD_NOT_FOUND,
    HF_API_ERROR_NOT_OWNER,
    HF_API_ERROR_HOLD_EXPIRED,
    HF_API_ERROR_HOLD_NOT_ACTIVE,
    HF_API_ERROR_ALREADY_CONFIRMED,
    HF_API_ERROR_HOLD_RELEASED,
    HF_API_ERROR_ORDER_NOT_FOUND,
    HF_API_ERROR_CAPACITY_EXCEEDED,
    HF_API_ERROR_SECTION_NOT_FOUND,
    HF_API_ERROR_VERSION_CONFLICT,
    HF_API_ERROR_SALES_CLOSED,
    HF_API_ERROR_REFUND_NOT_FOUND,
    /* The waiting room (API.md section 6): the core's, then the admission check's. */
    HF_API_ERROR_WAITING_ROOM_DISABLED,
    HF_API_ERROR_WAITING_ROOM_FULL,
    HF_API_ERROR_TICKET_NOT_FOUND,
    HF_API_ERROR_ADMISSION_REQUIRED,
    HF_API_ERROR_ADMISSION_INVALID,
    HF_API_ERROR_ADMISSION_EXPIRED,
    HF_API_ERROR_FLEET_NOT_FOUND,
    HF_API_ERROR_RIDE_NOT_FOUND,
    HF_API_ERROR_RIDE_EXISTS,
    HF_API_ERROR_OFFER_EXPIRED,
    HF_API_ERROR_NOT_OFFERED,
    /* Changing and deleting events (API.md section 2). */
    HF_API_ERROR_CAPACITY_BELOW_TAKEN,
    HF_API_ERROR_EVENT_IN_USE,
    HF_API_ERROR_NOT_ASSIGNED,
    HF_API_ERROR_DRIVER_NOT_FOUND,
    HF_API_ERROR_DRIVER_BUSY,
    HF_API_ERROR_RIDE_FINISHED,
    /* Outbound notifications (API.md section 15). */
    HF_API_ERROR_NOTIFICATION_NOT_FOUND,
    HF_API_ERROR_ALREADY_DELIVERED,
    HF_API_ERROR_CALENDAR_EXISTS,
    HF_API_ERROR_CALENDAR_NOT_FOUND,
    HF_API_ERROR_RESOURCE_NOT_FOUND,
    HF_API_ERROR_RESOURCE_EXISTS,
    HF_API_ERROR_RANGE_UNAVAILABLE,
    /* Exchanges (API.md section 13). */
    HF_API_ERROR_ORDER_NOT_ACTIVE,
    /* Allocations (API.md section 14). */
    HF_API_ERROR_ALLOCATION_NOT_FOUND,
    HF_API_ERROR_ALLOCATION_EXISTS,
    /* Cancelling an event (API.md section 13). */
    HF_API_ERROR_EVENT_CANCELLED,
    HF_API_ERROR_JOB_NOT_FOUND,
    /* Waitlists (API.md section 14). */
    HF_API_ERROR_WAITLIST_DISABLED,
    HF_API_ERROR_WAITLIST_NOT_FOUND,
    HF_API_ERROR_COUNT
} hf_api_error_t;

typedef struct hf_api_error_entry {
    const char *code;    /* snake case, as API.md names it */
    int status;          /* HTTP status */
    const char *message; /* said when the reply gives no message of its own */
} hf_api_error_entry_t;

/* The table's entry for id; static. */
const hf_api_error_entry_t *hf_errors_entry(hf_api_error_t id);
/* The table's id of a core error (not HF_OK). */
hf_api_error_t hf_errors_from_core(hf_error_t error);

#endif
