/* The dispatcher: the HTTP layer's handler for every request. It gathers the route tables of
 * the domains (handlers_*.h), matches the request's method and path, makes the generic
 * checks once, runs the route's handler and sets the store sequence the reply waits for.
 *
 * Ownership: context is the engine's hf_context_t (context.h), borrowed for the call; http
 * and response are the HTTP layer's. Loop thread only. */
#ifndef HF_API_ROUTES_H
#define HF_API_ROUTES_H

#include "net/http.h"

#include "engine/route.h"

/* Every domain's routes in the order the dispatcher tries them; *count is set. Static, valid
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
