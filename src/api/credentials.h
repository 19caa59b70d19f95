/* Credentials (API.md section 16): the API key, for the platform and the staff, on every
 * route; user tokens (JWT HS256 signed with --user-token-secret), for buyers, on the routes
 * flagged HF_ROUTE_BUYER only, acting as their sub. The dispatcher (routes.c) checks a
 * request's credential here once, before any handler runs; handlers then apply the ownership
 * rule through hf_request_owner_check and hf_decode_user (request.h, decode.h), which read
 * the request's acting_user this sets.
 *
 * Ownership: nothing is kept past a call; the request is borrowed. Engine thread. */
#ifndef HF_API_CREDENTIALS_H
#define HF_API_CREDENTIALS_H

#include <stdbool.h>

#include "engine/metrics.h"
#include "engine/route.h"

/* The credential of a request to route (one not HF_ROUTE_PUBLIC): true when it may go on,
 * with request->acting_user set for a user token; false after answering 401 unauthorized
 * (with "reason" and request->token_refusal for a refused user token) or 403 forbidden (a
 * valid user token on a route without HF_ROUTE_BUYER). Open (true) when no API key is
 * configured. Every refusal is counted by reason for /metrics. */
bool hf_credentials_check(hf_request_t *request, const hf_route_t *route);

/* holdfast_auth_refusals_total{reason} (metrics.h: a domain's families). */
void hf_handlers_credentials_metrics_render(const hf_context_t *context, hf_buffer_t *out);

#endif
