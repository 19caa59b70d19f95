/* The table of every error the API answers (errors.h). */
#include "engine/errors.h"

#include <assert.h>

static const hf_api_error_entry_t ENTRIES[HF_API_ERROR_COUNT] = {
    [HF_API_ERROR_INVALID_JSON] = {"invalid_json", 400, "the body is not valid JSON"},
    [HF_API_ERROR_INVALID_REQUEST] = {"invalid_request", 400, "invalid request"},
    [HF_API_ERROR_UNAUTHORIZED] = {"unauthorized", 401, "missing or wrong API key"},
    /* A valid user token on a route that needs the API key (API.md section 16). */
    [HF_API_ERROR_FORBIDDEN] = {"forbidden", 403, "this route needs the API key"},
    [HF_API_ERROR_NOT_FOUND] = {"not_found", 404, "no such route"},
    [HF_API_ERROR_METHOD_NOT_ALLOWED] = {"method_not_allowed", 405, "method not allowed here"},
    /* The HTTP layer refuses a body over HF_HTTP_BODY_SIZE_MAX before reading it, with these
     * words (net/http.c); a route's own smaller limit answers the same way. */
    [HF_API_ERROR_BODY_TOO_LARGE] = {"body_too_large", 413, "the request body is too large"},
    [HF_API_ERROR_IDEMPOTENCY_KEY_REUSED] = {"idempotency_key_reused", 422,
                                             "this Idempotency-Key was used with another body"},
    [HF_API_ERROR_UNAVAILABLE] = {"unavailable", 503, "the store failed; restart the server"},
    /* No --webhook-secret: a secret cannot be made up, the payment provider must know it. */
    [HF_API_ERROR_WEBHOOKS_NOT_CONFIGURED] = {"webhooks_not_configured", 503,
                                              "no webhook secret is configured"},
    [HF_API_ERROR_INVALID_SIGNATURE] = {"invalid_signature", 401,
                                        "missing, malformed, wrong or stale Holdfast-Signature"},
    [HF_API_ERROR_EVENT_EXISTS] = {"event_exists", 409, "an event with this id exists"},
    [HF_API_ERROR_EVENT_NOT_FOUND] = {"event_not_found", 404, "no such event"},
    [HF_API_ERROR_SEAT_NOT_FOUND] = {"seat_not_found", 404, "no such seat"},
    [HF_API_ERROR_SEATS_UNAVAILABLE] = {"seats_unavailable", 409, "seats are held or sold"},
    [HF_API_ERROR_POOL_NOT_FOUND] = {"pool_not_found", 404, "no such pool"},
    [HF_API_ERROR_INSUFFICIENT_QUANTITY] = {"insufficient_quantity", 409,
                                            "not enough units left in the pool"},
    [HF_API_ERROR_USER_LIMIT_EXCEEDED] = {"user_limit_exceeded", 429,
                                          "this would exceed the seats allowed per user"},
    [HF_API_ERROR_HOLD_NOT_FOUND] = {"hold_not_found", 404, "no such hold"},
    [HF_API_ERROR_NOT_OWNER] = {"not_owner", 403, "this belongs to another user"},
    [HF_API_ERROR_HOLD_EXPIRED] = {"hold_expired", 410, "the hold expired"},
    [HF_API_ERROR_HOLD_NOT_ACTIVE] = {"hold_not_active", 409, "the hold is released or confirmed"},
    [HF_API_ERROR_ALREADY_CONFIRMED] = {"already_confirmed", 409, "the hold is already confirmed"},
    [HF_API_ERROR_HOLD_RELEASED] = {"hold_released", 409, "the hold was released"},
    [HF_API_ERROR_ORDER_NOT_FOUND] = {"order_not_found", 404, "no such order"},
    [HF_API_ERROR_CAPACITY_EXCEEDED] = {"capacity_exceeded", 503, "a server limit is reached"},
    [HF_API_ERROR_SECTION_NOT_FOUND] = {"section_not_found", 404, "no such section"},
    [HF_API_ERROR_VERSION_CONFLICT] = {"version_conflict", 409,
                                       "seats changed since they were read"},
    [HF_API_ERROR_SALES_CLOSED] = {"sales_closed", 409,
                                   "sales of this event are closed: no new holds or bookings"},
    [HF_API_ERROR_REFUND_NOT_FOUND] = {"refund_not_found", 404, "no such refund"},
    [HF_API_ERROR_WAITING_ROOM_DISABLED] = {"waiting_room_disabled", 409,
                                            "this event has no waiting room"},
    [HF_API_ERROR_WAITING_ROOM_FULL] = {"waiting_room_full", 429,
                                        "the waiting room's line is full; try again later"},
    [HF_API_ERROR_TICKET_NOT_FOUND] = {"ticket_not_found", 404,
                                       "no such ticket in this event's line"},
    [HF_API_ERROR_ADMISSION_REQUIRED] =
        {"admission_required", 403,
         "this event has a waiting room: an admission token is required"},
    [HF_API_ERROR_ADMISSION_INVALID] = {"admission_invalid", 403,
                                        "the admission token is not valid"},
    [HF_API_ERROR_ADMISSION_EXPIRED] = {"admission_expired", 403, "the admission token expired"},
    /* Dispatch (API.md section 8). */
    [HF_API_ERROR_FLEET_NOT_FOUND] = {"fleet_not_found", 404,
                                      "no such fleet: a fleet is made by its first driver's PUT"},
    [HF_API_ERROR_RIDE_NOT_FOUND] = {"ride_not_found", 404, "no such ride"},
    [HF_API_ERROR_RIDE_EXISTS] = {"ride_exists", 409, "a ride with this id exists"},
    [HF_API_ERROR_OFFER_EXPIRED] = {"offer_expired", 410, "this driver's offer of the ride lapsed"},
    [HF_API_ERROR_NOT_OFFERED] = {"not_offered", 409, "this driver holds no offer of the ride"},
    /* Changing and deleting events (API.md section 2). */
    [HF_API_ERROR_CAPACITY_BELOW_TAKEN] = {"capacity_below_taken", 409,
                                           "a pool's capacity may not go below its held + sold"},
    [HF_API_ERROR_EVENT_IN_USE] =
        {"event_in_use", 409, "the event had holds, orders or queue tickets: cancel it instead"},
    [HF_API_ERROR_NOT_ASSIGNED] = {"not_assigned", 409, "the ride is not assigned to this driver"},
    [HF_API_ERROR_DRIVER_NOT_FOUND] = {"driver_not_found", 404, "no such driver in this fleet"},
    [HF_API_ERROR_DRIVER_BUSY] = {"driver_busy", 409,
                                  "a ride is assigned to this driver: complete or cancel it first"},
    [HF_API_ERROR_RIDE_FINISHED] = {"ride_finished", 409,
                                    "the ride is completed: it can no longer be cancelled"},
    [HF_API_ERROR_NOTIFICATION_NOT_FOUND] = {"notification_not_found", 404, "no such notification"},
    [HF_API_ERROR_ALREADY_DELIVERED] = {"already_delivered", 409,
                                        "the notification is delivered: nothing to retry"},
    /* Calendars (API.md section 12). */
    [HF_API_ERROR_CALENDAR_EXISTS] = {"calendar_exists", 409, "a calendar with this id exists"},
    [HF_API_ERROR_CALENDAR_NOT_FOUND] = {"calendar_not_found", 404, "no such calendar"},
    [HF_API_ERROR_RESOURCE_NOT_FOUND] = {"resource_not_found", 404,
                                         "no such resource in this calendar"},
    [HF_API_ERROR_RESOURCE_EXISTS] = {"resource_exists", 409,
                                      "a resource with this id exists in this calendar"},
    [HF_API_ERROR_RANGE_UNAVAILABLE] = {"range_unavailable", 409,
                                        "part of a span asked for is not free"},
    /* Exchanges (API.md section 13). */
    [HF_API_ERROR_ORDER_NOT_ACTIVE] = {"order_not_active", 409,
                                       "the order is not confirmed (cancelled or exchanged)"},
    /* Allocations (API.md section 14). */
    [HF_API_ERROR_ALLOCATION_NOT_FOUND] = {"allocation_not_found", 404,
                                           "no such allocation on this event"},
    [HF_API_ERROR_ALLOCATION_EXISTS] = {"allocation_exists", 409,
                                        "an allocation with this id exists on this event"},
    /* Cancelling an event (API.md section 13). */
    [HF_API_ERROR_EVENT_CANCELLED] = {"event_cancelled", 409,
                                      "the event is cancelled: no new holds, bookings or joins"},
    [HF_API_ERROR_JOB_NOT_FOUND] = {"job_not_found", 404, "no such job"},
    /* Waitlists (API.md section 14). */
    [HF_API_ERROR_WAITLIST_DISABLED] = {"waitlist_disabled", 409, "this event has no waitlist"},
    [HF_API_ERROR_WAITLIST_NOT_FOUND] = {"waitlist_not_found", 404,
                                         "no such waitlist entry on this event"},
};

/* Every core error but HF_OK, in the order of core.h. */
static const hf_api_error_t FROM_CORE[] = {
    [HF_ERROR_INVALID_REQUEST] = HF_API_ERROR_INVALID_REQUEST,
    [HF_ERROR_EVENT_EXISTS] = HF_API_ERROR_EVENT_EXISTS,
    [HF_ERROR_EVENT_NOT_FOUND] = HF_API_ERROR_EVENT_NOT_FOUND,
    [HF_ERROR_SEAT_NOT_FOUND] = HF_API_ERROR_SEAT_NOT_FOUND,
    [HF_ERROR_SEATS_UNAVAILABLE] = HF_API_ERROR_SEATS_UNAVAILABLE,
    [HF_ERROR_POOL_NOT_FOUND] = HF_API_ERROR_POOL_NOT_FOUND,
    [HF_ERROR_INSUFFICIENT_QUANTITY] = HF_API_ERROR_INSUFFICIENT_QUANTITY,
    [HF_ERROR_USER_LIMIT_EXCEEDED] = HF_API_ERROR_USER_LIMIT_EXCEEDED,
    [HF_ERROR_HOLD_NOT_FOUND] = HF_API_ERROR_HOLD_NOT_FOUND,
    [HF_ERROR_NOT_OWNER] = HF_API_ERROR_NOT_OWNER,
    [HF_ERROR_HOLD_EXPIRED] = HF_API_ERROR_HOLD_EXPIRED,
    [HF_ERROR_HOLD_NOT_ACTIVE] = HF_API_ERROR_HOLD_NOT_ACTIVE,
    [HF_ERROR_ALREADY_CONFIRMED] = HF_API_ERROR_ALREADY_CONFIRMED,
    [HF_ERROR_HOLD_RELEASED] = HF_API_ERROR_HOLD_RELEASED,
    [HF_ERROR_ORDER_NOT_FOUND] = HF_API_ERROR_ORDER_NOT_FOUND,
    [HF_ERROR_CAPACITY] = HF_API_ERROR_CAPACITY_EXCEEDED,
    [HF_ERROR_SECTION_NOT_FOUND] = HF_API_ERROR_SECTION_NOT_FOUND,
    [HF_ERROR_VERSION_CONFLICT] = HF_API_ERROR_VERSION_CONFLICT,
    [HF_ERROR_SALES_CLOSED] = HF_API_ERROR_SALES_CLOSED,
    [HF_ERROR_REFUND_NOT_FOUND] = HF_API_ERROR_REFUND_NOT_FOUND,
    [HF_ERROR_WAITING_ROOM_DISABLED] = HF_API_ERROR_WAITING_ROOM_DISABLED,
    [HF_ERROR_WAITING_ROOM_FULL] = HF_API_ERROR_WAITING_ROOM_FULL,
    [HF_ERROR_TICKET_NOT_FOUND] = HF_API_ERROR_TICKET_NOT_FOUND,
    [HF_ERROR_FLEET_NOT_FOUND] = HF_API_ERROR_FLEET_NOT_FOUND,
    [HF_ERROR_RIDE_NOT_FOUND] = HF_API_ERROR_RIDE_NOT_FOUND,
    [HF_ERROR_RIDE_EXISTS] = HF_API_ERROR_RIDE_EXISTS,
    [HF_ERROR_OFFER_EXPIRED] = HF_API_ERROR_OFFER_EXPIRED,
    [HF_ERROR_NOT_OFFERED] = HF_API_ERROR_NOT_OFFERED,
    [HF_ERROR_CAPACITY_BELOW_TAKEN] = HF_API_ERROR_CAPACITY_BELOW_TAKEN,
    [HF_ERROR_EVENT_IN_USE] = HF_API_ERROR_EVENT_IN_USE,
    [HF_ERROR_NOT_ASSIGNED] = HF_API_ERROR_NOT_ASSIGNED,
    [HF_ERROR_DRIVER_NOT_FOUND] = HF_API_ERROR_DRIVER_NOT_FOUND,
    [HF_ERROR_DRIVER_BUSY] = HF_API_ERROR_DRIVER_BUSY,
    [HF_ERROR_RIDE_FINISHED] = HF_API_ERROR_RIDE_FINISHED,
    [HF_ERROR_CALENDAR_EXISTS] = HF_API_ERROR_CALENDAR_EXISTS,
    [HF_ERROR_CALENDAR_NOT_FOUND] = HF_API_ERROR_CALENDAR_NOT_FOUND,
    [HF_ERROR_RESOURCE_NOT_FOUND] = HF_API_ERROR_RESOURCE_NOT_FOUND,
    [HF_ERROR_RESOURCE_EXISTS] = HF_API_ERROR_RESOURCE_EXISTS,
    [HF_ERROR_RANGE_UNAVAILABLE] = HF_API_ERROR_RANGE_UNAVAILABLE,
    [HF_ERROR_ORDER_NOT_ACTIVE] = HF_API_ERROR_ORDER_NOT_ACTIVE,
    [HF_ERROR_ALLOCATION_NOT_FOUND] = HF_API_ERROR_ALLOCATION_NOT_FOUND,
    [HF_ERROR_ALLOCATION_EXISTS] = HF_API_ERROR_ALLOCATION_EXISTS,
    [HF_ERROR_EVENT_CANCELLED] = HF_API_ERROR_EVENT_CANCELLED,
    [HF_ERROR_JOB_NOT_FOUND] = HF_API_ERROR_JOB_NOT_FOUND,
    [HF_ERROR_WAITLIST_DISABLED] = HF_API_ERROR_WAITLIST_DISABLED,
    [HF_ERROR_WAITLIST_NOT_FOUND] = HF_API_ERROR_WAITLIST_NOT_FOUND,
};

/* A core error added without a line above would map to entry 0: caught here. */
_Static_assert(sizeof FROM_CORE / sizeof FROM_CORE[0] == HF_ERROR_WAITLIST_NOT_FOUND + 1,
               "every core error has an entry");

const hf_api_error_entry_t *hf_errors_entry(hf_api_error_t id) {
    assert(id < HF_API_ERROR_COUNT);
    return &ENTRIES[id];
}

hf_api_error_t hf_errors_from_core(hf_error_t error) {
    assert(error != HF_OK && (size_t)error < sizeof FROM_CORE / sizeof FROM_CORE[0]);
    return FROM_CORE[error];
}
