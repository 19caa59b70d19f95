/* Request decoding: the body's JSON (flat reader or jansson, with the depth limit), its
 * members as typed values with a 400 naming the member when wrong, event definitions and
 * hold items (from a request body or from the store's rows, restore.c).
 *
 * Ownership: strings handed out (hf_member_t.string, seat ids, pool ids, user ids) are
 * borrowed from the request's body or from the json_t given, and live as long as it: until
 * the end of the request for a body. hf_decode_definition allocates the arrays of a
 * definition, which the caller frees with hf_decode_definition_free. */
#ifndef HF_API_DECODE_H
#define HF_API_DECODE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "engine/request.h"
#include "net/flat_json.h"

/* Reads the request's body into request->flat (when flat_allowed and the flat reader can)
 * or request->body (jansson; the dispatcher frees it); false after answering 400. */
bool hf_decode_body(hf_request_t *request, bool flat_allowed);
/* Checks the body of a route that reads none (API.md section 1: every body is JSON): true
 * when it is empty or any JSON value, which is then ignored (neither request->body nor
 * request->flat is set); false after answering 400 invalid_json. */
bool hf_decode_body_unread(hf_request_t *request);

/* One top-level member of the request body, whichever reader read it: jansson (body) or the
 * flat reader (flat). */
typedef enum hf_member_kind {
    HF_MEMBER_ABSENT,
    HF_MEMBER_NULL,
    HF_MEMBER_BOOL,
    HF_MEMBER_INTEGER,
    HF_MEMBER_REAL,
    HF_MEMBER_STRING,
    HF_MEMBER_OTHER, /* an object or an array: read from json (jansson) or flat */
} hf_member_kind_t;

typedef struct hf_member {
    hf_member_kind_t kind;
    bool truth;                        /* BOOL */
    int64_t integer;                   /* INTEGER */
    double number;                     /* INTEGER and REAL, as json_number_value */
    const char *string;                /* STRING, NUL-terminated (it may hold a NUL) */
    size_t length;                     /* STRING */
    json_t *json;                      /* the member in jansson's DOM, else NULL */
    const hf_flat_json_member_t *flat; /* the member in the flat reading, else NULL */
} hf_member_t;

hf_member_t hf_decode_member(const hf_request_t *request, const char *name);

/* Each returns true when the body's member is absent or null (value untouched) or valid;
 * false after answering 400 invalid_request naming the member. */
bool hf_decode_string(hf_request_t *request, const char *name, size_t size_max, bool required,
                      const char **value);
/* A hold's ttl_s: any positive number of seconds, tiny ones raised to 1 ms and ones past
 * HF_HOLD_TTL_MS_MAX read as HF_HOLD_TTL_MS_MAX + 1 (past every event's max_hold_s, which the
 * core checks). */
bool hf_decode_seconds(hf_request_t *request, const char *name, int64_t *ms);
/* Like hf_decode_seconds but any positive number is accepted, large ones clamped to the
 * longest hold and tiny ones raised to 1 ms (extend: the cap applies anyway). */
bool hf_decode_extension(hf_request_t *request, const char *name, int64_t *ms);
bool hf_decode_bool(hf_request_t *request, const char *name, bool *value);
/* The user_id member: required, 1..128 bytes; with a user token (request->acting_user), it
 * may be absent (the token's sub is the user) and must be the token's sub when given (else
 * 403 not_owner, answered). Every handler that takes a user from the body reads it here. */
bool hf_decode_user(hf_request_t *request, const char **user_id);

/* An event definition from a request's JSON body. Arrays inside definition are allocated;
 * free with hf_decode_definition_free, also after a failure. On error returns false with
 * fault's path (field, member, index, row) and fault (HF_FAULT_VALUE or HF_FAULT_REQUIRED)
 * set, as the core sets them (fields.h turns them into words). */
bool hf_decode_definition(json_t *object, hf_event_definition_t *definition,
                          hf_error_detail_t *fault);
void hf_decode_definition_free(hf_event_definition_t *definition);
/* A PATCH /v1/events/{event} body as a patch (definition.h) of event event_id, whose room's
 * settings are room and waitlist setting waitlist (a patch's waiting_room and waitlist are
 * read over them); *members names the members given (absent or null ones are not). Free with
 * hf_decode_definition_free, also after a failure, which sets fault as hf_decode_definition
 * does. */
bool hf_decode_patch(json_t *object, const char *event_id, const hf_room_definition_t *room,
                     const hf_waitlist_setting_t *waitlist, hf_event_definition_t *patch,
                     uint32_t *members, hf_error_detail_t *fault);

/* Items {"seats": [...], "pools": {...}} of the request's body into a hold request, whichever
 * reader read it (pointers borrow from the body). seat_ids and pools must have room for
 * HF_HOLD_ITEMS_MAX entries. On error returns false with fault's path set ("seats",
 * "seats[3]", "pools", or "pools" at the index of the wrong pool, which is in
 * request->pools). */
bool hf_decode_request_items(const hf_request_t *from, hf_hold_request_t *request,
                             const char **seat_ids, hf_pool_request_t *pools,
                             hf_error_detail_t *fault);

/* The "pools" member ({"GA": 2}) alone; as hf_decode_request_items on error. */
bool hf_decode_pools(json_t *object, hf_hold_request_t *request, hf_pool_request_t *pools,
                     hf_error_detail_t *fault);

#endif
