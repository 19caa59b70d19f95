/* The API: the dispatcher and each domain's handlers. The dispatcher is the HTTP layer's
 * handler for every request: it gathers the route tables of the domains, matches the
 * request's method and path, makes the generic checks once, asks the cluster where the
 * request is served (cluster/cluster.h), runs the route's handler and sets the store sequence
 * the reply waits for. A request the cluster parked goes on through hf_routes_resume.
 *
 * The room, api/, stands on cluster/ and engine/ (the request, its replies, the context),
 * never the other way: cmd/main.c hands the dispatcher to the engine. Its files:
 *   routes.h/.c       the dispatcher: matching, HTTP conventions (HEAD, OPTIONS, CORS, 405),
 *                     the generic checks, the domains' scratch, a parked request's resumption
 *   decode.h/.c       the body's JSON and its members, event definitions, hold items
 *   render.h/.c       the JSON shapes of events, seats, holds and orders
 *   query.h/.c        percent-decoding and query parameters
 *   signature.h/.c    the webhook's Holdfast-Signature header: parsed (pure) and checked
 *   and one file per domain, each with its route table (route.h) and its metrics' families:
 *   events.h/.c       health, events, seats, an event's stream
 *   holds.h/.c        holds, orders, bookings, a user's orders
 *   history.h/.c      an event's audit history, read from the store
 *   staff.h/.c        the staff's view: an event's holds and orders, closing and reopening
 *                     its sales
 *   payments.h/.c     the payment webhook and refunds
 *   queue.h/.c        the waiting room: join, poll, complete, and the admission check of
 *                     holds and bookings (HF_ROUTE_ADMISSION)
 *   dispatch.h/.c     dispatch: fleets' drivers, rides, offers
 *   ui.h/.c           the box-office page
 *   metrics.h/.c      GET /metrics: the generic families, then each domain's
 *
 * A new domain's handlers go in a new api/DOMAIN.c, private to it, with a route table
 * (hf_route_table_t, route.h: each route names its flags, body limit and unit; the table its
 * domain's scratch) exported by DOMAIN.h and added to TABLES in routes.c. Handlers read the
 * core from request->core and their scratch from request->scratch, never engine.c's state; a
 * new error goes into the table of engine/errors.c.
 *
 * Ownership: context is the engine's hf_context_t (context.h), borrowed for the call; http
 * and response are the HTTP layer's. Loop thread only. */
#ifndef HF_API_ROUTES_H
#define HF_API_ROUTES_H

#include "net/http.h"

#include "engine/route.h"

/* Every domain's routes (the cluster's included) in the order the dispatcher tries them;
 * *count is set. Static, valid
 * for the life of the process. Route i is labelled i + 1 on its answers
 * (hf_http_response_t.label), 0 an answer no route gave. */
const hf_route_t *const *hf_routes_known(size_t *count);

/* An hf_http_handler_fn: context is an hf_context_t. */
void hf_routes_dispatch(void *context, const hf_http_request_t *http, hf_http_response_t *response);

/* A hf_route_resume_fn (route.h): a request the cluster parked goes on past its routing,
 * into its answer reopened. context is the engine's hf_context_t. */
void hf_routes_resume(hf_context_t *context, const hf_http_request_t *http,
                      hf_http_response_t *response, const hf_route_resumed_t *resumed);

#endif
