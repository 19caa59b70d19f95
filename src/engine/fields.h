/* The fields of request bodies as an invalid_request names them: each field's path
 * ("sections[1].rows[0].seats", "pools.GA", "best_available.count"), the rule its value must
 * follow in words that quote the limits of lib/limits.h, and the one sentence of the error,
 * made the same way whether the decoder (decode.c) or the core (hf_error_detail_t) found the
 * fault: the path first, then what it must be.
 *
 * Ownership: nothing is kept; every argument is borrowed for the call, and the text is
 * written into the caller's buffer. */
#ifndef HF_ENGINE_FIELDS_H
#define HF_ENGINE_FIELDS_H

#include <stddef.h>

#include "core/core.h"

/* Which body a path is in: a few names ("pools", "seats") mean other things in each. */
typedef enum hf_fields_body {
    HF_FIELDS_EVENT,   /* POST /v1/events */
    HF_FIELDS_HOLD,    /* a hold, an extension, a release, a commit, a cancel */
    HF_FIELDS_BOOKING, /* POST /v1/events/{event}/bookings */
} hf_fields_body_t;

/* What the texts may quote besides the path: the definition of the event being created and
 * the hold or booking request (pool ids of "pools.GA", seat ids of duplicates, the user's id).
 * Either may be NULL. */
typedef struct hf_fields_source {
    hf_fields_body_t body;
    const hf_event_definition_t *definition;
    const hf_hold_request_t *request;
} hf_fields_source_t;

/* Bytes enough for any path or message written here. */
#define HF_FIELDS_TEXT_SIZE 512

/* Writes the path of detail's field (core.h, hf_error_detail_t) into out. */
void hf_fields_path(const hf_error_detail_t *detail, const hf_fields_source_t *source, char *out,
                    size_t size);
/* Writes the message of an invalid_request about detail's field into out. */
void hf_fields_message(const hf_error_detail_t *detail, const hf_fields_source_t *source, char *out,
                       size_t size);
/* Writes the message of a 429 user_limit_exceeded (detail.limit, current, requested). */
void hf_fields_user_limit(const hf_error_detail_t *detail, const char *user_id, char *out,
                          size_t size);

#endif
