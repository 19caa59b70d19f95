/* A route: what each domain's table of routes holds (each api/DOMAIN.h exports its table,
 * the dispatcher in api/routes.c gathers them). A route names the generic checks the
 * dispatcher makes before its handler runs, so a handler makes none of them itself, and where
 * its unit comes from, so the cluster reads no path.
 *
 * Ownership: tables are static and constant, valid for the life of the process. */
#ifndef HF_ENGINE_ROUTE_H
#define HF_ENGINE_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/request.h"

typedef void (*hf_route_handler_fn)(hf_request_t *request);

/* What the dispatcher checks or does before the handler runs. */
enum {
    HF_ROUTE_PUBLIC = 1,       /* served without the API key */
    HF_ROUTE_BODY = 2,         /* takes a JSON object body */
    HF_ROUTE_IDEMPOTENT = 4,   /* creates something: Idempotency-Key applies */
    HF_ROUTE_KEY_IN_QUERY = 8, /* ?access_token=KEY also works: EventSource sets no header */
    /* The handler reads its body only through hf_decode_member and hf_decode_request_items, so
     * the flat reader may read it (net/flat_json.h): the hot routes, whose bodies are flat. */
    HF_ROUTE_FLAT = 16,
    /* The handler gets the body's raw bytes (request->http->body) and decodes them itself,
     * after checking what authenticates them (the payment webhook's signature is over the
     * raw bytes, checked before any JSON is parsed); never with HF_ROUTE_BODY. */
    HF_ROUTE_RAW_BODY = 32,
    /* A hold or booking on the event of the first path parameter: when the event has a
     * waiting room, the request needs a valid admission token (api/queue.h), checked
     * after the body is read and after an Idempotency-Key's repeat is answered, so a retry
     * of an acknowledged hold gets its first answer even once the token expired. */
    HF_ROUTE_ADMISSION = 64,
    /* Its answer spans units (API.md section 11): a list across events (GET /v1/events, a
     * user's orders, refunds). With several nodes it is read from the store, every unit
     * loaded into a core of the request's own (cluster.h). */
    HF_ROUTE_SPANS = 128,
    /* A live stream (SSE): it lasts, so with several nodes it is redirected to its unit's
     * owner rather than relayed (cluster.h). */
    HF_ROUTE_STREAM = 256,
    /* A buyer's route (API.md section 16): a user token may call it, acting as its sub (the
     * request's acting_user); without this flag a user token is answered 403 forbidden, and
     * only the API key passes. */
    HF_ROUTE_BUYER = 512,
    /* A hold with exchange_for, or a hold's commit: with several nodes the old order may be
     * another unit's, which the cluster asks first (cluster/exchange.h). */
    HF_ROUTE_EXCHANGE = 1024,
    /* An event's cancel: with several nodes its rebook_to may be another unit's, whose owner
     * the cluster asks for its currency and status first (cluster/offers.h). */
    HF_ROUTE_REBOOK = 2048,
};

/* Where the text that names a request's unit comes from (the event, fleet or records of no
 * unit the cluster serves it as, cluster.h). */
typedef enum hf_route_unit_from {
    HF_ROUTE_UNIT_NONE = 0, /* no unit: any node answers (health, metrics, the page) */
    HF_ROUTE_UNIT_PARAM,    /* the path parameter unit.param */
    HF_ROUTE_UNIT_MEMBER,   /* the body's string member unit.member (the flat reader's) */
} hf_route_unit_from_t;

/* What that text is: the unit's own id, or the id of a record whose unit the cluster finds
 * (in the core, its cache, or the store through a job: cluster/jobs.h). */
typedef enum hf_route_id_kind {
    HF_ROUTE_ID_UNIT = 0,
    HF_ROUTE_ID_HOLD,
    HF_ROUTE_ID_ORDER,
    HF_ROUTE_ID_RIDE,
    HF_ROUTE_ID_REFUND,
    /* A notification's id carries its unit (engine/notification.h): read, not looked up. */
    HF_ROUTE_ID_NOTIFICATION,
} hf_route_id_kind_t;

typedef struct hf_route_unit {
    uint8_t from;  /* hf_route_unit_from_t */
    uint8_t param; /* HF_ROUTE_UNIT_PARAM: the index of the path parameter */
    uint8_t id;    /* hf_route_id_kind_t */
    /* An id that no unit has, as the store says, belongs to the records of no unit
     * (HF_STORE_UNIT_NONE): a payment for a hold no event has any more. Else such a request
     * is served where it arrived (its 404). */
    bool else_no_unit;
    const char *member; /* HF_ROUTE_UNIT_MEMBER: the member's name */
} hf_route_unit_t;

/* A route's unit, as its row writes it. */
#define HF_ROUTE_NO_UNIT \
    { HF_ROUTE_UNIT_NONE, 0, HF_ROUTE_ID_UNIT, false, NULL }
/* The path parameter index is the unit (an event's or a fleet's id). */
#define HF_ROUTE_UNIT_IN_PATH(index) \
    { HF_ROUTE_UNIT_PARAM, (index), HF_ROUTE_ID_UNIT, false, NULL }
/* The body member name is the unit (a new event's "id"). */
#define HF_ROUTE_UNIT_IN_BODY(name) \
    { HF_ROUTE_UNIT_MEMBER, 0, HF_ROUTE_ID_UNIT, false, (name) }
/* The path parameter index is the id of a record of kind (HF_ROUTE_ID_*): its unit. */
#define HF_ROUTE_UNIT_OF_PATH(kind, index) \
    { HF_ROUTE_UNIT_PARAM, (index), (kind), false, NULL }
/* The body member name is the id of a record of kind; one no unit has is the records of no
 * unit's. */
#define HF_ROUTE_UNIT_OF_BODY(kind, name) \
    { HF_ROUTE_UNIT_MEMBER, 0, (kind), true, (name) }

typedef struct hf_route {
    const char *method;
    const char *pattern; /* "{}" stands for one path segment, captured */
    hf_route_handler_fn handler;
    unsigned flags;       /* HF_ROUTE_* */
    size_t body_size_max; /* a longer body is answered 413 */
    hf_route_unit_t unit; /* where its unit comes from (HF_ROUTE_UNIT_*) */
} hf_route_t;

/* A request the cluster parked (cluster/jobs.h) goes on once what it waited for is there:
 * past the cluster's routing, served here as unit ("" none), from core when not NULL (a list
 * across units, the job's core: its handler alone answers, as the request's route was run
 * that far already). */
typedef struct hf_route_resumed {
    const hf_route_t *route;
    const char *unit;
    hf_core_t *core;
} hf_route_resumed_t;

/* The dispatcher's hf_routes_resume (api/routes.h), which the cluster is given (engine/units.h):
 * the request runs again from its copy (http) into its answer reopened (response). */
typedef void (*hf_route_resume_fn)(hf_context_t *context, const hf_http_request_t *http,
                                   hf_http_response_t *response, const hf_route_resumed_t *resumed);

/* Routes of every domain together (the dispatcher's list, the metrics' slots); more fail an
 * assertion at the first request. Room is left for the domains still to come: calendars
 * brought the count to 61 of the 64 there were. */
#define HF_ROUTES_MAX 128

/* One domain's routes, and the size of the domain's own context: the scratch its handlers
 * share, one request at a time, too large for the stack (a booking's items, a refusal's
 * detail). The dispatcher makes one for each domain, zeroed, at an engine's first request, and
 * hands it to the domain's handlers as request->scratch; 0: none. */
typedef struct hf_route_table {
    const hf_route_t *routes;
    size_t count;
    size_t scratch_size;
} hf_route_table_t;

#endif
