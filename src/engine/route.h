/* A route: what each domain's table of routes holds (handlers_*.h export their tables, the
 * dispatcher in routes.c gathers them). A route names the generic checks the dispatcher makes
 * before its handler runs, so a handler makes none of them itself.
 *
 * Ownership: tables are static and constant, valid for the life of the process. */
#ifndef HF_ENGINE_ROUTE_H
#define HF_ENGINE_ROUTE_H

#include <stddef.h>

#include "engine/request.h"

typedef void (*hf_route_handler_fn)(hf_request_t *request);

/* What the dispatcher checks or does before the handler runs. */
enum {
    HF_ROUTE_PUBLIC = 1,         /* served without the API key */
    HF_ROUTE_BODY = 2,           /* takes a JSON object body */
    HF_ROUTE_IDEMPOTENT = 4,     /* creates something: Idempotency-Key applies */
    HF_ROUTE_KEY_IN_QUERY = 8,   /* ?access_token=KEY also works: EventSource sets no header */
    /* The handler reads its body only through hf_decode_member and hf_decode_request_items, so
     * the flat reader may read it (net/flat_json.h): the hot routes, whose bodies are flat. */
    HF_ROUTE_FLAT = 16,
    /* The handler gets the body's raw bytes (request->http->body) and decodes them itself,
     * after checking what authenticates them (the payment webhook's signature is over the
     * raw bytes, checked before any JSON is parsed); never with HF_ROUTE_BODY. */
    HF_ROUTE_RAW_BODY = 32,
    /* A hold or booking on the event of the first path parameter: when the event has a
     * waiting room, the request needs a valid admission token (handlers_queue.h), checked
     * after the body is read and after an Idempotency-Key's repeat is answered, so a retry
     * of an acknowledged hold gets its first answer even once the token expired. */
    HF_ROUTE_ADMISSION = 64,
};

typedef struct hf_route {
    const char *method;
    const char *pattern;         /* "{}" stands for one path segment, captured */
    hf_route_handler_fn handler;
    unsigned flags;              /* HF_ROUTE_* */
    size_t body_size_max;        /* a longer body is answered 413 */
} hf_route_t;

/* One domain's routes. */
typedef struct hf_route_table {
    const hf_route_t *routes;
    size_t count;
} hf_route_table_t;

#endif
