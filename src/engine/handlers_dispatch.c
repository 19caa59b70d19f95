/* Handlers of dispatch: drivers, rides and offers (handlers_dispatch.h). */
#include "engine/handlers_dispatch.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/dispatch/dispatch.h"
#include "engine/decode.h"

/* ---- decoding ---- */

static bool reject(hf_request_t *request, const char *field, const char *message) {
    hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, message, field);
    return false;
}

/* What each field must be, said when the core or the decoder refuses it. */
static const char *rule_of(const char *field) {
    static const struct {
        const char *field, *rule;
    } RULES[] = {
        {"lat", "lat must be a number from -90 to 90"},
        {"lng", "lng must be a number from -180 to 180"},
        {"rating", "rating must be a number from 0 to 5"},
        {"radius_m", "radius_m must be an integer from 1 to 50000 (metres)"},
        {"offer_ttl_s", "offer_ttl_s must be a number of seconds above 0 and at most 600"},
        {"available", "available must be true or false"},
        {"rider_id", "rider_id must be a string of 1 to 128 bytes"},
        {"ride_id", "ride_id must match [A-Za-z0-9_.]{1,64}"},
        {"driver_id", "driver_id must match [A-Za-z0-9_.]{1,64}"},
        {"fleet", "the fleet's id must match [A-Za-z0-9_.]{1,64}"},
        {"driver", "the driver's id must match [A-Za-z0-9_.]{1,64}"},
    };
    for (size_t i = 0; i < sizeof RULES / sizeof RULES[0]; i++)
        if (strcmp(RULES[i].field, field) == 0) return RULES[i].rule;
    return "invalid value";
}

static void reply_core_error(hf_request_t *request, hf_error_t error,
                             const hf_error_detail_t *detail) {
    if (error == HF_ERROR_INVALID_REQUEST && detail && detail->field)
        reject(request, detail->field, rule_of(detail->field));
    else hf_reply_core_error(request, error, NULL, NULL);
}

/* A number member: required, or absent (value untouched); false after answering 400. */
static bool number_decode(hf_request_t *request, const char *name, bool required, bool *given,
                          double *value) {
    hf_member_t member = hf_decode_member(request, name);
    if (given) *given = false;
    if (member.kind == HF_MEMBER_ABSENT || member.kind == HF_MEMBER_NULL) {
        if (!required) return true;
        char message[64];
        snprintf(message, sizeof message, "%s is required", name);
        return reject(request, name, message);
    }
    if ((member.kind != HF_MEMBER_INTEGER && member.kind != HF_MEMBER_REAL) ||
        !isfinite(member.number))
        return reject(request, name, rule_of(name));
    *value = member.number;
    if (given) *given = true;
    return true;
}

/* A client-chosen id: required, [A-Za-z0-9_.]{1,64}. */
static bool id_decode(hf_request_t *request, const char *name, const char **value) {
    if (!hf_decode_string(request, name, HF_ID_SIZE_MAX, true, value)) return false;
    return hf_core_id_valid(*value) || reject(request, name, rule_of(name));
}

/* ---- rendering ---- */

static void number_write(hf_json_t *json, double value) {
    char text[32];
    int length = snprintf(text, sizeof text, "%.15g", value);
    hf_json_raw(json, text, (size_t)length);
}

static void render_driver(hf_json_t *json, const hf_core_t *core, const hf_driver_t *driver) {
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "fleet"); hf_json_string(json, hf_dispatch_fleet_id(core, driver->fleet));
    HF_JSON_KEY(json, "driver_id"); hf_json_string(json, driver->id);
    HF_JSON_KEY(json, "lat"); number_write(json, driver->lat);
    HF_JSON_KEY(json, "lng"); number_write(json, driver->lng);
    HF_JSON_KEY(json, "available"); hf_json_bool(json, driver->available);
    HF_JSON_KEY(json, "rating"); number_write(json, driver->rating);
    HF_JSON_KEY(json, "offer");
    if (driver->offer) {
        const hf_ride_t *ride = hf_dispatch_ride_at(core, driver->offer - 1);
        hf_json_object_begin(json);
        HF_JSON_KEY(json, "ride_id"); hf_json_string(json, ride->id);
        HF_JSON_KEY(json, "distance_m"); hf_json_int(json, ride->offer_distance_m);
        HF_JSON_KEY(json, "expires_at"); hf_json_time(json, ride->offer_expires_at_ms);
        hf_json_object_end(json);
    } else {
        hf_json_null(json);
    }
    HF_JSON_KEY(json, "assigned_ride_id");
    if (driver->assigned) hf_json_string(json, hf_dispatch_ride_at(core, driver->assigned - 1)->id);
    else hf_json_null(json);
    hf_json_object_end(json);
}

static void render_ride(hf_json_t *json, const hf_core_t *core, const hf_ride_t *ride) {
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "ride_id"); hf_json_string(json, ride->id);
    HF_JSON_KEY(json, "fleet"); hf_json_string(json, hf_dispatch_fleet_id(core, ride->fleet));
    HF_JSON_KEY(json, "rider_id"); hf_json_string(json, hf_core_string(core, ride->rider));
    HF_JSON_KEY(json, "status"); hf_json_string(json, hf_ride_status_name(ride->status));
    HF_JSON_KEY(json, "lat"); number_write(json, ride->lat);
    HF_JSON_KEY(json, "lng"); number_write(json, ride->lng);
    HF_JSON_KEY(json, "radius_m"); hf_json_int(json, ride->radius_m);
    HF_JSON_KEY(json, "offer_ttl_s"); hf_json_seconds(json, ride->offer_ttl_ms);
    HF_JSON_KEY(json, "created_at"); hf_json_time(json, ride->created_at_ms);
    HF_JSON_KEY(json, "offer");
    if (ride->status == HF_RIDE_OFFERED) {
        hf_json_object_begin(json);
        HF_JSON_KEY(json, "driver_id");
        hf_json_string(json, hf_dispatch_driver_at(core, ride->offer_driver - 1)->id);
        HF_JSON_KEY(json, "distance_m"); hf_json_int(json, ride->offer_distance_m);
        HF_JSON_KEY(json, "expires_at"); hf_json_time(json, ride->offer_expires_at_ms);
        hf_json_object_end(json);
    } else {
        hf_json_null(json);
    }
    HF_JSON_KEY(json, "driver_id");
    if (ride->driver) hf_json_string(json, hf_dispatch_driver_at(core, ride->driver - 1)->id);
    else hf_json_null(json);
    hf_json_object_end(json);
}

/* The ride as it stands, its answer resting on its newest record. */
static void reply_ride(hf_request_t *request, int status, uint32_t index) {
    const hf_core_t *core = request->context->core;
    request->rests_on_known = true;
    request->rests_on_change = hf_dispatch_ride_change(core, index);
    hf_json_t json;
    hf_reply_begin(request, status, &json);
    render_ride(&json, core, hf_dispatch_ride_at(core, index));
}

/* ---- drivers ---- */

static bool driver_update_decode(hf_request_t *request, hf_driver_update_t *update) {
    *update = (hf_driver_update_t){.fleet_id = request->params[0],
                                   .driver_id = request->params[1]};
    if (!hf_core_id_valid(update->fleet_id)) return reject(request, "fleet", rule_of("fleet"));
    if (!hf_core_id_valid(update->driver_id)) return reject(request, "driver", rule_of("driver"));
    if (!number_decode(request, "lat", true, NULL, &update->lat) ||
        !number_decode(request, "lng", true, NULL, &update->lng) ||
        !number_decode(request, "rating", false, &update->has_rating, &update->rating))
        return false;
    hf_member_t available = hf_decode_member(request, "available");
    if (available.kind == HF_MEMBER_ABSENT || available.kind == HF_MEMBER_NULL) return true;
    if (available.kind != HF_MEMBER_BOOL) return reject(request, "available", rule_of("available"));
    update->has_available = true;
    update->available = available.truth;
    return true;
}

/* Soft: the answer waits only for the records the driver's state rests on (an offer made by
 * this PUT is one of them: it waits for that). */
static void handle_driver_put(hf_request_t *request) {
    hf_context_t *context = request->context;
    hf_driver_update_t update;
    if (!driver_update_decode(request, &update)) return;
    uint32_t index;
    hf_error_t error = hf_dispatch_driver_put(context->core, &update, request->now_ms, &index,
                                              &context->detail);
    if (error) {
        reply_core_error(request, error, &context->detail);
        return;
    }
    request->rests_on_known = true;
    request->rests_on_change = hf_dispatch_driver_change(context->core, index);
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    render_driver(&json, context->core, hf_dispatch_driver_at(context->core, index));
}

static void handle_driver_get(hf_request_t *request) {
    const hf_core_t *core = request->context->core;
    uint32_t index;
    const hf_driver_t *driver = hf_dispatch_driver_find(core, request->params[0],
                                                        request->params[1], &index);
    if (!driver) {
        bool fleet_known = hf_dispatch_fleet_find(core, request->params[0], &index);
        hf_reply_error(request, fleet_known ? HF_API_ERROR_NOT_FOUND : HF_API_ERROR_FLEET_NOT_FOUND,
                       fleet_known ? "no such driver in this fleet" : NULL, NULL);
        return;
    }
    request->rests_on_known = true;
    request->rests_on_change = hf_dispatch_driver_change(core, index);
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    render_driver(&json, core, driver);
}

/* ---- rides ---- */

/* radius_m (an integer) and offer_ttl_s (seconds); -1 when absent. */
static bool ride_limits_decode(hf_request_t *request, hf_ride_request_t *ride) {
    ride->radius_m = ride->offer_ttl_ms = -1;
    hf_member_t radius = hf_decode_member(request, "radius_m");
    if (radius.kind != HF_MEMBER_ABSENT && radius.kind != HF_MEMBER_NULL) {
        if (radius.kind != HF_MEMBER_INTEGER || radius.integer < 1 ||
            radius.integer > HF_DISPATCH_RADIUS_M_MAX)
            return reject(request, "radius_m", rule_of("radius_m"));
        ride->radius_m = radius.integer;
    }
    double seconds;
    bool given;
    if (!number_decode(request, "offer_ttl_s", false, &given, &seconds)) return false;
    if (!given) return true;
    if (seconds <= 0 || seconds * 1000 > (double)HF_DISPATCH_OFFER_TTL_MS_MAX)
        return reject(request, "offer_ttl_s", rule_of("offer_ttl_s"));
    ride->offer_ttl_ms = llround(seconds * 1000);
    if (ride->offer_ttl_ms < 1) ride->offer_ttl_ms = 1;
    return true;
}

static void handle_ride_create(hf_request_t *request) {
    hf_context_t *context = request->context;
    if (!hf_core_id_valid(request->params[0])) {
        reject(request, "fleet", rule_of("fleet"));
        return;
    }
    hf_ride_request_t ride = {.fleet_id = request->params[0]};
    if (!id_decode(request, "ride_id", &ride.ride_id) ||
        !hf_decode_string(request, "rider_id", HF_USER_ID_SIZE_MAX, true, &ride.rider_id) ||
        !number_decode(request, "lat", true, NULL, &ride.lat) ||
        !number_decode(request, "lng", true, NULL, &ride.lng) || !ride_limits_decode(request, &ride))
        return;
    uint32_t index;
    hf_error_t error = hf_dispatch_ride_create(context->core, &ride, request->now_ms, &index,
                                               &context->detail);
    if (error) reply_core_error(request, error, &context->detail);
    else reply_ride(request, 201, index);
}

static void handle_ride_get(hf_request_t *request) {
    uint32_t index;
    if (!hf_dispatch_ride_find(request->context->core, request->params[0], &index))
        hf_reply_error(request, HF_API_ERROR_RIDE_NOT_FOUND, NULL, NULL);
    else reply_ride(request, 200, index);
}

typedef hf_error_t (*answer_fn)(hf_core_t *core, const char *ride_id, const char *driver_id,
                                hf_time_ms_t now, uint32_t *ride_index);

/* Accept and decline: {"driver_id": "d7"}. */
static void driver_answer(hf_request_t *request, answer_fn answer) {
    const char *driver_id;
    if (!id_decode(request, "driver_id", &driver_id)) return;
    uint32_t index;
    hf_error_t error = answer(request->context->core, request->params[0], driver_id,
                              request->now_ms, &index);
    if (error) reply_core_error(request, error, NULL);
    else reply_ride(request, 200, index);
}

static void handle_accept(hf_request_t *request) { driver_answer(request, hf_dispatch_accept); }

static void handle_decline(hf_request_t *request) { driver_answer(request, hf_dispatch_decline); }

static void handle_cancel(hf_request_t *request) {
    uint32_t index;
    hf_error_t error = hf_dispatch_cancel(request->context->core, request->params[0],
                                          request->now_ms, &index);
    if (error) reply_core_error(request, error, NULL);
    else reply_ride(request, 200, index);
}

/* Bodies are a few members: 4 KiB is ample. */
#define DISPATCH_BODY_SIZE_MAX (4u * 1024)

static const hf_route_t routes[] = {
    {"PUT", "/v1/fleets/{}/drivers/{}", handle_driver_put, HF_ROUTE_BODY | HF_ROUTE_FLAT,
     DISPATCH_BODY_SIZE_MAX},
    {"GET", "/v1/fleets/{}/drivers/{}", handle_driver_get, 0, HF_HTTP_BODY_SIZE_MAX},
    {"POST", "/v1/fleets/{}/rides", handle_ride_create,
     HF_ROUTE_BODY | HF_ROUTE_FLAT | HF_ROUTE_IDEMPOTENT, DISPATCH_BODY_SIZE_MAX},
    {"GET", "/v1/rides/{}", handle_ride_get, 0, HF_HTTP_BODY_SIZE_MAX},
    {"POST", "/v1/rides/{}/accept", handle_accept, HF_ROUTE_BODY | HF_ROUTE_FLAT,
     DISPATCH_BODY_SIZE_MAX},
    {"POST", "/v1/rides/{}/decline", handle_decline, HF_ROUTE_BODY | HF_ROUTE_FLAT,
     DISPATCH_BODY_SIZE_MAX},
    {"POST", "/v1/rides/{}/cancel", handle_cancel, 0, DISPATCH_BODY_SIZE_MAX},
};

const hf_route_table_t hf_handlers_dispatch_routes = {routes, sizeof routes / sizeof routes[0]};
