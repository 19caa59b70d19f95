/* An event's definition: what POST /v1/events carries once the engine's decoder has checked it,
 * what the core builds an event from, what a record of the event's creation carries to the
 * store and what the store hands back at start. Plain data: the arrays belong to whoever made
 * the definition. */
#ifndef HF_DEFINITION_H
#define HF_DEFINITION_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/limits.h"

typedef struct hf_row_definition {
    char id[HF_ID_SIZE_MAX + 1];
    uint32_t seats;
} hf_row_definition_t;

typedef struct hf_section_definition {
    char id[HF_ID_SIZE_MAX + 1];
    int64_t price;
    uint32_t row_count;
    hf_row_definition_t *rows; /* borrowed by hf_core_event_create */
} hf_section_definition_t;

typedef struct hf_pool_definition {
    char id[HF_ID_SIZE_MAX + 1];
    int64_t capacity;
    int64_t price;
} hf_pool_definition_t;

/* An event's waiting room (API.md section 6), as decoded from "waiting_room" and kept with
 * the event: holds and bookings need an admission token when enabled. */
typedef struct hf_room_definition {
    bool enabled;
    double admit_per_s;       /* admissions per second, fractional allowed, > 0 */
    int64_t token_ttl_s;      /* whole seconds: a token's exp is iat + this */
    uint32_t max_active;      /* admitted users with live tokens at once; 0: no cap */
    int64_t abandon_after_ms; /* a waiting ticket not polled for this long is dropped */
    uint32_t max_waiting;     /* the line's limit: joins beyond it are refused */
    /* The pre-queue: joins before opens_at_ms (0: none, open at once) get their places by a
     * shuffle at opens_at_ms, keyed by shuffle_seed (the caller's, from a cryptographic
     * source; kept by the store, never rendered). */
    int64_t opens_at_ms;
    uint8_t shuffle_seed[HF_QUEUE_SEED_SIZE];
} hf_room_definition_t;

/* An event's waitlist setting (API.md sections 2 and 14): "waitlist": {"enabled",
 * "offer_ttl_s"}; off by default. */
typedef struct hf_waitlist_setting {
    bool enabled;
    int64_t offer_ttl_ms;
} hf_waitlist_setting_t;

typedef struct hf_event_definition {
    char id[HF_ID_SIZE_MAX + 1];
    char name[HF_NAME_SIZE_MAX + 1];
    char currency[HF_CURRENCY_SIZE_MAX + 1];
    int64_t hold_ttl_ms;
    int64_t max_hold_ms;
    uint32_t max_seats_per_user; /* 0: no limit */
    uint32_t max_seats_per_hold;
    uint32_t section_count;
    hf_section_definition_t *sections;
    uint32_t pool_count;
    hf_pool_definition_t *pools;
    hf_room_definition_t waiting_room;
    hf_waitlist_setting_t waitlist;
} hf_event_definition_t;

/* A change of a live event (PATCH /v1/events/{event}, hf_core_event_update) is an
 * hf_event_definition_t read as a patch: id names the event; the top-level members named in
 * the mask of these bits change; each listed section or pool that exists is changed, one that
 * does not is added; a price or a capacity below 0 (HF_UNCHANGED) leaves it as it is, and a
 * listed section's rows are appended to it. The record of the change carries the same shape
 * with only what changed (hf_mutation_event_update_t). */
typedef enum hf_event_member {
    HF_EVENT_MEMBER_NAME = 1u << 0,
    HF_EVENT_MEMBER_HOLD_TTL = 1u << 1,
    HF_EVENT_MEMBER_MAX_HOLD = 1u << 2,
    HF_EVENT_MEMBER_MAX_SEATS_PER_USER = 1u << 3,
    HF_EVENT_MEMBER_MAX_SEATS_PER_HOLD = 1u << 4,
    HF_EVENT_MEMBER_WAITING_ROOM = 1u << 5,
    HF_EVENT_MEMBER_SECTIONS = 1u << 6,
    HF_EVENT_MEMBER_POOLS = 1u << 7,
    HF_EVENT_MEMBER_WAITLIST = 1u << 8,
} hf_event_member_t;

/* A patch's price or capacity that is not given: the member keeps its value. */
#define HF_UNCHANGED (-1)

#endif
