/* An event's definition: what POST /v1/events carries once the engine's decoder has checked it,
 * what the core builds an event from, what a record of the event's creation carries to the
 * store and what the store hands back at start. Plain data: the arrays belong to whoever made
 * the definition. */
#ifndef HF_DEFINITION_H
#define HF_DEFINITION_H

#include <stdint.h>

#include "core/limits.h"

typedef struct hf_row_definition {
    char id[HF_ID_SIZE_MAX + 1];
    uint32_t seats;
} hf_row_definition_t;

typedef struct hf_section_definition {
    char id[HF_ID_SIZE_MAX + 1];
    int64_t price;
    uint32_t row_count;
    hf_row_definition_t *rows;     /* borrowed by hf_core_event_create */
} hf_section_definition_t;

typedef struct hf_pool_definition {
    char id[HF_ID_SIZE_MAX + 1];
    int64_t capacity;
    int64_t price;
} hf_pool_definition_t;

typedef struct hf_event_definition {
    char id[HF_ID_SIZE_MAX + 1];
    char name[HF_NAME_SIZE_MAX + 1];
    char currency[HF_CURRENCY_SIZE_MAX + 1];
    int64_t hold_ttl_ms;
    int64_t max_hold_ms;
    uint32_t max_seats_per_user;   /* 0: no limit */
    uint32_t max_seats_per_hold;
    uint32_t section_count;
    hf_section_definition_t *sections;
    uint32_t pool_count;
    hf_pool_definition_t *pools;
} hf_event_definition_t;

#endif
