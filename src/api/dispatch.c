/* Handlers of dispatch: drivers, rides and offers (dispatch.h). */
#include "api/dispatch.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "core/dispatch/dispatch.h"
#include "api/decode.h"
#include "api/query.h"
#include "lib/log.h"

/* The domain's own context (route.h: hf_route_table_t.scratch_size): scratch its handlers
 * share, one request at a time, too large for the stack. */
typedef struct scratch {
    hf_error_detail_t detail; /* a refusal's detail (items is large) */
} scratch_t;

static scratch_t *scratch_of(const hf_request_t *request) { return request->scratch; }

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

static void render_driver(hf_json_t *json, const hf_core_t *core, const hf_driver_t *driver) {
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "fleet");
    hf_json_string(json, hf_dispatch_fleet_id(core, driver->fleet));
    HF_JSON_KEY(json, "driver_id");
    hf_json_string(json, driver->id);
    HF_JSON_KEY(json, "lat");
    hf_json_decimal(json, driver->lat);
    HF_JSON_KEY(json, "lng");
    hf_json_decimal(json, driver->lng);
    HF_JSON_KEY(json, "available");
    hf_json_bool(json, driver->available);
    HF_JSON_KEY(json, "rating");
    hf_json_decimal(json, driver->rating);
    HF_JSON_KEY(json, "offer");
    if (driver->offer) {
        const hf_ride_t *ride = hf_dispatch_ride_at(core, driver->offer - 1);
        hf_json_object_begin(json);
        HF_JSON_KEY(json, "ride_id");
        hf_json_string(json, ride->id);
        HF_JSON_KEY(json, "distance_m");
        hf_json_int(json, ride->offer_distance_m);
        HF_JSON_KEY(json, "expires_at");
        hf_json_time(json, ride->offer_expires_at_ms);
        hf_json_object_end(json);
    } else {
        hf_json_null(json);
    }
    HF_JSON_KEY(json, "assigned_ride_id");
    if (driver->assigned) hf_json_string(json, hf_dispatch_ride_at(core, driver->assigned - 1)->id);
    else hf_json_null(json);
    hf_json_object_end(json);
}

/* A ride as an answer shows it: from the core, or from the store's row of a forgotten one. */
typedef struct ride_view {
    const char *ride_id, *fleet, *rider_id;
    uint8_t status;
    double lat, lng;
    int64_t radius_m, offer_ttl_ms;
    hf_time_ms_t created_at_ms;
    const char *offer_driver_id; /* NULL without a live offer */
    int64_t offer_distance_m;
    hf_time_ms_t offer_expires_at_ms;
    const char *driver_id; /* NULL until assigned */
} ride_view_t;

static ride_view_t ride_view(const hf_core_t *core, const hf_ride_t *ride) {
    ride_view_t view = {.ride_id = ride->id,
                        .fleet = hf_dispatch_fleet_id(core, ride->fleet),
                        .rider_id = ride->rider_id,
                        .status = ride->status,
                        .lat = ride->lat,
                        .lng = ride->lng,
                        .radius_m = ride->radius_m,
                        .offer_ttl_ms = ride->offer_ttl_ms,
                        .created_at_ms = ride->created_at_ms,
                        .offer_distance_m = ride->offer_distance_m,
                        .offer_expires_at_ms = ride->offer_expires_at_ms};
    if (ride->status == HF_RIDE_OFFERED)
        view.offer_driver_id = hf_dispatch_driver_at(core, ride->offer_driver - 1)->id;
    if (ride->driver) view.driver_id = hf_dispatch_driver_at(core, ride->driver - 1)->id;
    return view;
}

static ride_view_t stored_ride_view(const hf_stored_ride_t *ride) {
    return (ride_view_t){.ride_id = ride->ride_id,
                         .fleet = ride->fleet_id,
                         .rider_id = ride->rider_id,
                         .status = ride->status,
                         .lat = ride->lat,
                         .lng = ride->lng,
                         .radius_m = ride->radius_m,
                         .offer_ttl_ms = ride->offer_ttl_ms,
                         .created_at_ms = ride->created_at_ms,
                         .offer_driver_id = ride->status == HF_RIDE_OFFERED ? ride->offer_driver_id
                                                                            : NULL,
                         .offer_distance_m = ride->offer_distance_m,
                         .offer_expires_at_ms = ride->offer_expires_at_ms,
                         .driver_id = ride->driver_id};
}

static void render_ride(hf_json_t *json, const ride_view_t *ride) {
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "ride_id");
    hf_json_string(json, ride->ride_id);
    HF_JSON_KEY(json, "fleet");
    hf_json_string(json, ride->fleet);
    HF_JSON_KEY(json, "rider_id");
    hf_json_string(json, ride->rider_id);
    HF_JSON_KEY(json, "status");
    hf_json_string(json, hf_ride_status_name(ride->status));
    HF_JSON_KEY(json, "lat");
    hf_json_decimal(json, ride->lat);
    HF_JSON_KEY(json, "lng");
    hf_json_decimal(json, ride->lng);
    HF_JSON_KEY(json, "radius_m");
    hf_json_int(json, ride->radius_m);
    HF_JSON_KEY(json, "offer_ttl_s");
    hf_json_seconds(json, ride->offer_ttl_ms);
    HF_JSON_KEY(json, "created_at");
    hf_json_time(json, ride->created_at_ms);
    HF_JSON_KEY(json, "offer");
    if (ride->offer_driver_id) {
        hf_json_object_begin(json);
        HF_JSON_KEY(json, "driver_id");
        hf_json_string(json, ride->offer_driver_id);
        HF_JSON_KEY(json, "distance_m");
        hf_json_int(json, ride->offer_distance_m);
        HF_JSON_KEY(json, "expires_at");
        hf_json_time(json, ride->offer_expires_at_ms);
        hf_json_object_end(json);
    } else {
        hf_json_null(json);
    }
    HF_JSON_KEY(json, "driver_id");
    if (ride->driver_id) hf_json_string(json, ride->driver_id);
    else hf_json_null(json);
    hf_json_object_end(json);
}

/* The ride as it stands, its answer resting on its newest record. */
static void reply_ride(hf_request_t *request, int status, uint32_t index) {
    const hf_core_t *core = request->core;
    request->rests_on_known = true;
    request->rests_on_change = hf_dispatch_ride_change(core, index);
    hf_json_t json;
    hf_reply_begin(request, status, &json);
    ride_view_t view = ride_view(core, hf_dispatch_ride_at(core, index));
    render_ride(&json, &view);
}

/* ---- forgotten rides, read back from the store ---- */

typedef enum ride_lookup {
    RIDE_ABSENT,     /* no such ride */
    RIDE_IN_MEMORY,  /* the core has it (again, when it was forgotten) */
    RIDE_ELSEWHERE,  /* stored, of a fleet this core does not have */
    RIDE_UNREADABLE, /* the store could not be read: answered 503 */
} ride_lookup_t;

typedef struct ride_revival {
    hf_core_t *core;
    ride_lookup_t found;
} ride_revival_t;

static int ride_revive(void *context, const hf_stored_ride_t *stored) {
    ride_revival_t *revival = context;
    uint32_t fleet, index;
    if (!hf_dispatch_fleet_find(revival->core, stored->fleet_id, &fleet)) {
        revival->found = RIDE_ELSEWHERE;
        return 0;
    }
    /* Only a finished ride is forgotten: a stored ride in progress the core lacks is one whose
     * creation was never acknowledged (its batch failed), so it stays unknown. */
    if (!hf_ride_status_finished(stored->status)) return 0;
    if (hf_dispatch_revive_ride(revival->core, stored, &index) != HF_OK) return -1;
    revival->found = RIDE_IN_MEMORY;
    return 0;
}

/* Whether ride_id names a ride, taken back from the store when the core forgot it. A ride the
 * core does not have and never forgot (its filter says) is none, and the store is not asked:
 * so a new ride's id costs no read. */
static ride_lookup_t ride_lookup(hf_request_t *request, const char *ride_id) {
    hf_context_t *context = request->context;
    if (hf_dispatch_ride_find(request->core, ride_id, NULL)) return RIDE_IN_MEMORY;
    if (!hf_dispatch_ride_maybe_forgotten(request->core, ride_id) || !context->store ||
        !hf_core_id_valid(ride_id))
        return RIDE_ABSENT;
    ride_revival_t revival = {request->core, RIDE_ABSENT};
    hf_store_loader_t loader = {.ride = ride_revive, .context = &revival};
    bool found = false;
    char error[512] = "";
    if (hf_store_read_ride(context->store, ride_id, &loader, &found, error, sizeof error) != 0) {
        hf_log(HF_LOG_WARNING, "ride %s not taken back from the store: %s", ride_id, error);
        hf_reply_error(request, HF_API_ERROR_UNAVAILABLE, "reading the ride failed; retry", NULL);
        return RIDE_UNREADABLE;
    }
    return revival.found;
}

/* The ride of the path, in memory; false after answering (404, 503). */
static bool path_ride(hf_request_t *request) {
    ride_lookup_t found = ride_lookup(request, request->params[0]);
    if (found == RIDE_IN_MEMORY) return true;
    if (found != RIDE_UNREADABLE) hf_reply_error(request, HF_API_ERROR_RIDE_NOT_FOUND, NULL, NULL);
    return false;
}

/* ---- drivers ---- */

static bool driver_update_decode(hf_request_t *request, hf_driver_update_t *update) {
    *update = (hf_driver_update_t){.fleet_id = request->params[0], .driver_id = request->params[1]};
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
    hf_driver_update_t update;
    if (!driver_update_decode(request, &update)) return;
    uint32_t index;
    hf_error_t error = hf_dispatch_driver_put(request->core, &update, request->now_ms, &index,
                                              &scratch_of(request)->detail);
    if (error) {
        reply_core_error(request, error, &scratch_of(request)->detail);
        return;
    }
    request->rests_on_known = true;
    request->rests_on_change = hf_dispatch_driver_change(request->core, index);
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    render_driver(&json, request->core, hf_dispatch_driver_at(request->core, index));
}

/* The fleet of the path; false after answering 404 fleet_not_found. */
static bool path_fleet(hf_request_t *request, uint32_t *fleet) {
    if (hf_dispatch_fleet_find(request->core, request->params[0], fleet)) return true;
    hf_reply_error(request, HF_API_ERROR_FLEET_NOT_FOUND, NULL, NULL);
    return false;
}

static void handle_driver_get(hf_request_t *request) {
    const hf_core_t *core = request->core;
    uint32_t fleet, index;
    if (!path_fleet(request, &fleet)) return;
    const hf_driver_t *driver = hf_dispatch_driver_find(core, request->params[0],
                                                        request->params[1], &index);
    if (!driver) {
        hf_reply_error(request, HF_API_ERROR_DRIVER_NOT_FOUND, NULL, NULL);
        return;
    }
    request->rests_on_known = true;
    request->rests_on_change = hf_dispatch_driver_change(core, index);
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    render_driver(&json, core, driver);
}

/* 200 {"fleet", "driver_id", "deleted": true} once the deletion is durable (the answer waits
 * for the open batch, as every change's). */
static void handle_driver_delete(hf_request_t *request) {
    hf_error_t error = hf_dispatch_driver_delete(request->core, request->params[0],
                                                 request->params[1], request->now_ms);
    if (error) {
        hf_reply_core_error(request, error, NULL, NULL);
        return;
    }
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "fleet");
    hf_json_string(&json, request->params[0]);
    HF_JSON_KEY(&json, "driver_id");
    hf_json_string(&json, request->params[1]);
    HF_JSON_KEY(&json, "deleted");
    hf_json_bool(&json, true);
    hf_json_object_end(&json);
}

/* ---- pages (API.md section 1: after, limit, next) ---- */

typedef struct page {
    int status; /* -1: any */
    uint32_t limit;
    const char *after; /* NULL: from the first */
    char after_id[HF_ID_SIZE_MAX + 1];
} page_t;

/* Reads status (one of count words of name_of), limit and after (an id); false after
 * answering 400 with the field. */
static bool page_read(hf_request_t *request, const char *(*name_of)(uint8_t), int count,
                      const char *status_rule, page_t *page) {
    const char *query = request->http->query;
    /* As long as a head may be: a value too long for it would read as absent. */
    char value[HF_HTTP_HEAD_SIZE_MAX];
    *page = (page_t){.status = -1, .limit = HF_DISPATCH_PAGE_DEFAULT};
    if (hf_query_get(query, "status", value, sizeof value)) {
        for (int i = 0; i < count && page->status < 0; i++)
            if (strcmp(value, name_of((uint8_t)i)) == 0) page->status = i;
        if (page->status < 0) return reject(request, "status", status_rule);
    }
    if (hf_query_get(query, "limit", value, sizeof value)) {
        char *end;
        long limit = strtol(value, &end, 10);
        if (value[0] == '\0' || *end != '\0' || limit < 1 || limit > (long)HF_DISPATCH_PAGE_MAX)
            return reject(request, "limit", "limit must be an integer from 1 to 1000");
        page->limit = (uint32_t)limit;
    }
    if (hf_query_get(query, "after", value, sizeof value)) {
        if (!hf_core_id_valid(value))
            return reject(request, "after", "after must be an id: [A-Za-z0-9_.]{1,64}");
        memcpy(page->after_id, value, strlen(value) + 1); /* at most HF_ID_SIZE_MAX bytes */
        page->after = page->after_id;
    }
    return true;
}

/* The end of a page: "next" is the last id shown when more follow, else null. */
static void page_end(hf_json_t *json, bool more, const char *last) {
    hf_json_array_end(json);
    HF_JSON_KEY(json, "next");
    if (more && last) hf_json_string(json, last);
    else hf_json_null(json);
    hf_json_object_end(json);
}

/* In id order (bytewise), which pages stably whatever comes and goes: a page resumes after
 * its after id whether or not that driver still exists. */
static void handle_driver_list(hf_request_t *request) {
    const hf_core_t *core = request->core;
    uint32_t fleet;
    page_t page;
    if (!path_fleet(request, &fleet) ||
        !page_read(request, hf_driver_status_name, HF_DRIVER_STATUS_COUNT,
                   "status must be available, offered, assigned or unavailable", &page))
        return;
    uint32_t indexes[HF_DISPATCH_PAGE_MAX];
    bool more;
    uint32_t count = hf_dispatch_drivers_page(core, fleet, page.status, page.after, page.limit,
                                              indexes, &more);
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "drivers");
    hf_json_array_begin(&json);
    for (uint32_t i = 0; i < count; i++)
        render_driver(&json, core, hf_dispatch_driver_at(core, indexes[i]));
    page_end(&json, more, count ? hf_dispatch_driver_at(core, indexes[count - 1])->id : NULL);
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
    if (!hf_core_id_valid(request->params[0])) {
        reject(request, "fleet", rule_of("fleet"));
        return;
    }
    hf_ride_request_t ride = {.fleet_id = request->params[0]};
    if (!id_decode(request, "ride_id", &ride.ride_id) ||
        !hf_decode_string(request, "rider_id", HF_USER_ID_SIZE_MAX, true, &ride.rider_id) ||
        !number_decode(request, "lat", true, NULL, &ride.lat) ||
        !number_decode(request, "lng", true, NULL, &ride.lng) ||
        !ride_limits_decode(request, &ride))
        return;
    /* Ride ids are unique across fleets, forgotten rides' included. */
    ride_lookup_t known = ride_lookup(request, ride.ride_id);
    if (known == RIDE_UNREADABLE) return;
    if (known == RIDE_ELSEWHERE) {
        hf_reply_error(request, HF_API_ERROR_RIDE_EXISTS, NULL, NULL);
        return;
    }
    uint32_t index;
    hf_error_t error = hf_dispatch_ride_create(request->core, &ride, request->now_ms, &index,
                                               &scratch_of(request)->detail);
    if (error) reply_core_error(request, error, &scratch_of(request)->detail);
    else reply_ride(request, 201, index);
}

static void handle_ride_get(hf_request_t *request) {
    uint32_t index;
    if (!path_ride(request)) return;
    hf_dispatch_ride_find(request->core, request->params[0], &index);
    reply_ride(request, 200, index);
}

typedef hf_error_t (*answer_fn)(hf_core_t *core, const char *ride_id, const char *driver_id,
                                hf_time_ms_t now, uint32_t *ride_index);

/* Accept, decline and complete: {"driver_id": "d7"}. */
static void driver_answer(hf_request_t *request, answer_fn answer) {
    const char *driver_id;
    if (!id_decode(request, "driver_id", &driver_id) || !path_ride(request)) return;
    uint32_t index;
    hf_error_t error = answer(request->core, request->params[0], driver_id, request->now_ms,
                              &index);
    if (error) reply_core_error(request, error, NULL);
    else reply_ride(request, 200, index);
}

static void handle_accept(hf_request_t *request) { driver_answer(request, hf_dispatch_accept); }

static void handle_decline(hf_request_t *request) { driver_answer(request, hf_dispatch_decline); }

static void handle_complete(hf_request_t *request) { driver_answer(request, hf_dispatch_complete); }

static void handle_cancel(hf_request_t *request) {
    uint32_t index;
    if (!path_ride(request)) return;
    hf_error_t error = hf_dispatch_cancel(request->core, request->params[0], request->now_ms,
                                          &index);
    if (error) reply_core_error(request, error, NULL);
    else reply_ride(request, 200, index);
}

/* ---- a fleet's rides, from the store ----
 *
 * As the staff's holds (staff.c): finished rides past --finished-rides are forgotten
 * and their slots reused, so memory has neither all of them nor their creation order. The
 * store has every committed ride in creation order (its seq), so a page is a range scan of its
 * (fleet_id, seq) index, and a ride the core still has is shown as the core has it (a change
 * not yet committed is already what the page says; the answer waits for the open batch like
 * every read). A ride whose creation is not yet committed is left out: it was acknowledged to
 * no one. */

typedef struct ride_listing {
    hf_request_t *request;
    const page_t *page;
    hf_json_t *json;
    uint32_t returned;
    bool more;
    char last[HF_ID_SIZE_MAX + 1];
} ride_listing_t;

static int ride_listed(void *context, const hf_stored_ride_t *stored) {
    ride_listing_t *listing = context;
    const hf_core_t *core = listing->request->core;
    const hf_ride_t *ride = hf_dispatch_ride_find(core, stored->ride_id, NULL);
    uint8_t status = ride ? ride->status : stored->status;
    if (listing->page->status >= 0 && status != listing->page->status) return 0;
    if (listing->returned == listing->page->limit) {
        listing->more = true;
        return HF_STORE_LIST_STOP;
    }
    ride_view_t view = ride ? ride_view(core, ride) : stored_ride_view(stored);
    render_ride(listing->json, &view);
    snprintf(listing->last, sizeof listing->last, "%s", stored->ride_id);
    listing->returned++;
    return 0;
}

/* The stored statuses a page of status reads: a ride stored in progress may have finished
 * in memory (or moved on), so those are read too; a stored finished ride is final. */
static unsigned stored_statuses(int status) {
    unsigned progress = 1u << HF_RIDE_SEARCHING | 1u << HF_RIDE_OFFERED | 1u << HF_RIDE_ASSIGNED;
    if (status < 0) return 0;
    return hf_ride_status_finished((uint8_t)status) ? progress | 1u << status : progress;
}

static void handle_ride_list(hf_request_t *request) {
    uint32_t fleet;
    page_t page;
    if (!path_fleet(request, &fleet) ||
        !page_read(request, hf_ride_status_name, HF_RIDE_STATUS_COUNT,
                   "status must be searching, offered, assigned, cancelled or completed", &page))
        return;
    hf_store_t *store = request->context->store;
    if (!store) {
        hf_reply_error(request, HF_API_ERROR_UNAVAILABLE, "no store to list rides from", NULL);
        return;
    }
    hf_store_ride_query_t query = {request->params[0], page.after, stored_statuses(page.status)};
    hf_json_t json;
    hf_reply_begin(request, 200, &json);
    hf_json_object_begin(&json);
    HF_JSON_KEY(&json, "rides");
    hf_json_array_begin(&json);
    ride_listing_t listing = {request, &page, &json, 0, false, ""};
    hf_store_loader_t loader = {.ride = ride_listed, .context = &listing};
    bool after_found;
    char error[512] = "";
    if (hf_store_list_rides(store, &query, &loader, &after_found, error, sizeof error) != 0) {
        hf_log(HF_LOG_WARNING, "listing the rides of %s failed: %s", request->params[0], error);
        hf_reply_error(request, HF_API_ERROR_UNAVAILABLE, "reading the rides failed; retry", NULL);
        return;
    }
    if (!after_found) {
        reject(request, "after", "after must be the id of a ride of this fleet");
        return;
    }
    page_end(&json, listing.more, listing.last);
}

/* Bodies are a few members: 4 KiB is ample. */
#define DISPATCH_BODY_SIZE_MAX (4u * 1024)

static const hf_route_t routes[] = {
    {"PUT", "/v1/fleets/{}/drivers/{}", handle_driver_put, HF_ROUTE_BODY | HF_ROUTE_FLAT,
     DISPATCH_BODY_SIZE_MAX, HF_ROUTE_UNIT_IN_PATH(0)},
    {"GET", "/v1/fleets/{}/drivers/{}", handle_driver_get, 0, HF_HTTP_BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
    {"DELETE", "/v1/fleets/{}/drivers/{}", handle_driver_delete, 0, DISPATCH_BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
    {"GET", "/v1/fleets/{}/drivers", handle_driver_list, 0, HF_HTTP_BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
    {"GET", "/v1/fleets/{}/rides", handle_ride_list, 0, HF_HTTP_BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
    {"POST", "/v1/fleets/{}/rides", handle_ride_create,
     HF_ROUTE_BODY | HF_ROUTE_FLAT | HF_ROUTE_IDEMPOTENT, DISPATCH_BODY_SIZE_MAX,
     HF_ROUTE_UNIT_IN_PATH(0)},
    {"GET", "/v1/rides/{}", handle_ride_get, 0, HF_HTTP_BODY_SIZE_MAX,
     HF_ROUTE_UNIT_OF_PATH(HF_ROUTE_ID_RIDE, 0)},
    {"POST", "/v1/rides/{}/accept", handle_accept, HF_ROUTE_BODY | HF_ROUTE_FLAT,
     DISPATCH_BODY_SIZE_MAX, HF_ROUTE_UNIT_OF_PATH(HF_ROUTE_ID_RIDE, 0)},
    {"POST", "/v1/rides/{}/decline", handle_decline, HF_ROUTE_BODY | HF_ROUTE_FLAT,
     DISPATCH_BODY_SIZE_MAX, HF_ROUTE_UNIT_OF_PATH(HF_ROUTE_ID_RIDE, 0)},
    {"POST", "/v1/rides/{}/cancel", handle_cancel, 0, DISPATCH_BODY_SIZE_MAX,
     HF_ROUTE_UNIT_OF_PATH(HF_ROUTE_ID_RIDE, 0)},
    {"POST", "/v1/rides/{}/complete", handle_complete, HF_ROUTE_BODY | HF_ROUTE_FLAT,
     DISPATCH_BODY_SIZE_MAX, HF_ROUTE_UNIT_OF_PATH(HF_ROUTE_ID_RIDE, 0)},
};

const hf_route_table_t hf_handlers_dispatch_routes = {routes, sizeof routes / sizeof routes[0],
                                                      sizeof(scratch_t)};

/* ---- GET /metrics (metrics.h) ---- */

/* One sample per value of the family's label, every value written (0 included), so a rate
 * or an alert never meets a missing series. */
static void render_counts(hf_buffer_t *out, const char *name, const char *label_name,
                          const uint64_t *counts, size_t count,
                          const char *(*value_name)(uint8_t)) {
    for (size_t i = 0; i < count; i++) {
        hf_metrics_label_t label = {label_name, value_name((uint8_t)i)};
        hf_metrics_sample(out, name, &label, 1, (double)counts[i]);
    }
}

void hf_handlers_dispatch_metrics_render(const hf_context_t *context, hf_buffer_t *out) {
    hf_dispatch_counts_t counts;
    if (!hf_dispatch_counts(context->core, &counts)) return;
    hf_metrics_family(out, "holdfast_rides", "gauge",
                      "Rides by status, those forgotten from memory included (the store keeps "
                      "them).");
    render_counts(out, "holdfast_rides", "status", counts.rides, HF_RIDE_STATUS_COUNT,
                  hf_ride_status_name);
    hf_metrics_family(out, "holdfast_offers_total", "counter",
                      "Offers of rides ended since this server started, by outcome.");
    render_counts(out, "holdfast_offers_total", "outcome", counts.offers, HF_OFFER_OUTCOME_COUNT,
                  hf_offer_outcome_name);
    hf_metrics_family(out, "holdfast_drivers", "gauge", "Drivers of every fleet, by status.");
    render_counts(out, "holdfast_drivers", "status", counts.drivers, HF_DRIVER_STATUS_COUNT,
                  hf_driver_status_name);
}
