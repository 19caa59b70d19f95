/* Paths, rules and messages of invalid fields (fields.h). */
#include "engine/fields.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A field's rule: what its value must be, as the words after "must be". The format quotes at
 * most one limit, value, so every number comes from limits.h and none is written twice. */
typedef struct rule {
    uint8_t bodies;      /* bit (1 << hf_fields_body_t) of each body it applies to */
    const char *pattern; /* the path with indexes left out: "sections[].rows[].seats" */
    const char *format;
    long long value;
} rule_t;

#define EVENT (1u << HF_FIELDS_EVENT)
#define HOLD (1u << HF_FIELDS_HOLD)
#define BOOKING (1u << HF_FIELDS_BOOKING)

/* A limit's value as text, for a rule that quotes a second one (the format quotes one): the
 * macro's own expansion (0.000001, not HF_QUEUE_ADMIT_PER_S_MIN) is what STRINGIZE_VALUE
 * turns into text. */
#define STRINGIZE_VALUE(x) #x
#define STRINGIZE(x) STRINGIZE_VALUE(x)

#define ID_RULE "1 to %lld characters of A-Z a-z 0-9 _ . (no \"-\")"
#define SEAT_ID_RULE "a seat id SECTION-ROW-NUMBER of at most %lld bytes"
#define SECONDS_RULE "a number of seconds above 0 and at most %lld"

static const rule_t RULES[] = {
    {EVENT, "id", ID_RULE, HF_ID_SIZE_MAX},
    {EVENT, "name", "a string of 1 to %lld bytes", HF_NAME_SIZE_MAX},
    {EVENT, "currency", "a code of 3 letters A-Z such as \"USD\"", 0},
    {EVENT, "hold_ttl_s", SECONDS_RULE, HF_HOLD_TTL_MS_MAX / 1000},
    {EVENT, "max_hold_s", "a number of seconds from hold_ttl_s to %lld", HF_HOLD_TTL_MS_MAX / 1000},
    {EVENT, "max_seats_per_user", "an integer from 0 (no limit) to %lld", UINT32_MAX},
    {EVENT, "max_seats_per_hold", "an integer from 1 to %lld", HF_HOLD_ITEMS_MAX},
    {EVENT, "sections", "a list of at most %lld sections", HF_EVENT_SECTIONS_MAX},
    {EVENT, "sections[]", "an object {\"id\", \"price\", \"rows\"}", 0},
    {EVENT, "sections[].id", ID_RULE, HF_ID_SIZE_MAX},
    {EVENT, "sections[].price", "an integer from 0 to %lld", HF_PRICE_MAX},
    {EVENT, "sections[].rows", "a list of at least 1 row, at most %lld", HF_SECTION_ROWS_MAX},
    {EVENT, "sections[].rows[]", "an object {\"id\", \"seats\"}", 0},
    {EVENT, "sections[].rows[].id", ID_RULE, HF_ID_SIZE_MAX},
    {EVENT, "sections[].rows[].seats", "an integer from 1 to %lld", HF_EVENT_SEATS_MAX},
    {EVENT, "pools", "a list of at most %lld pools", HF_EVENT_POOLS_MAX},
    {EVENT, "pools[]", "an object {\"id\", \"capacity\", \"price\"}", 0},
    {EVENT, "pools[].id", ID_RULE, HF_ID_SIZE_MAX},
    {EVENT, "pools[].capacity", "an integer from 0 to %lld", HF_POOL_CAPACITY_MAX},
    {EVENT, "pools[].price", "an integer from 0 to %lld", HF_PRICE_MAX},
    {EVENT, "waitlist", "an object", 0},
    {EVENT, "waitlist.enabled", "true or false", 0},
    {EVENT, "waitlist.offer_ttl_s", SECONDS_RULE, HF_HOLD_TTL_MS_MAX / 1000},
    {EVENT, "waiting_room", "an object", 0},
    {EVENT, "waiting_room.enabled", "true or false", 0},
    /* Its least value, not "above 0": a rate of 1e-7 is above 0 and still refused. */
    {EVENT, "waiting_room.admit_per_s",
     "a number of admissions per second from " STRINGIZE(HF_QUEUE_ADMIT_PER_S_MIN) " to %lld",
                                                         (long long)HF_QUEUE_ADMIT_PER_S_MAX},
     {EVENT, "waiting_room.token_ttl_s", SECONDS_RULE, HF_QUEUE_TOKEN_TTL_S_MAX},
     {EVENT, "waiting_room.max_active", "an integer from 0 (no cap) to %lld", UINT32_MAX},
     {EVENT, "waiting_room.abandon_after_s", SECONDS_RULE, HF_HOLD_TTL_MS_MAX / 1000},
     {EVENT, "waiting_room.max_waiting", "an integer from 1 to %lld", HF_QUEUE_WAITING_LIMIT},
     /* A change is refused once the room has opened, or to a time already past: the pre-queue
      * is whoever joined before it, and that must not be redrawn. */
     {EVENT, "waiting_room.opens_at",
      "an RFC 3339 date-time from 1970 on; a change must be to a later time than now, before "
      "the room opens",
      0},
     {HOLD | BOOKING, "user_id", "a string of 1 to %lld bytes", HF_USER_ID_SIZE_MAX},
     {HOLD | BOOKING, "payment_ref", "a string of 1 to %lld bytes", HF_PAYMENT_REF_SIZE_MAX},
     /* Its bound is the event's max_hold_s, quoted by HF_FAULT_HOLD_TTL's message. */
     {HOLD | BOOKING, "ttl_s", "a number of seconds above 0 (at most the event's max_hold_s)", 0},
     {HOLD | BOOKING, "replace_existing", "true or false", 0},
     {HOLD | BOOKING, "pools", "an object of at most %lld pool ids, each with a quantity",
      HF_HOLD_ITEMS_MAX},
     {HOLD | BOOKING, "pools[]", "an integer from 1 to %lld", HF_HOLD_ITEMS_MAX},
     {HOLD, "seats", "a list of at most %lld seat ids", HF_HOLD_ITEMS_MAX},
     {HOLD, "seats[]", SEAT_ID_RULE, HF_SEAT_ID_SIZE_MAX},
     {HOLD, "best_available", "an object {\"count\", \"section\", \"adjacent\"}", 0},
     {HOLD, "best_available.count", "an integer from 1 to %lld", HF_HOLD_ITEMS_MAX},
     {HOLD, "best_available.section", "a section id of 1 to %lld characters", HF_ID_SIZE_MAX},
     {HOLD, "best_available.adjacent", "true or false", 0},
     {BOOKING, "seats", "a list of at most %lld seats {\"id\", \"version\"}", HF_HOLD_ITEMS_MAX},
     {BOOKING, "seats[]", "an object {\"id\": seat id, \"version\": integer}", 0},
     {BOOKING, "seats[].id", SEAT_ID_RULE, HF_SEAT_ID_SIZE_MAX},
     {BOOKING, "seats[].version", "an integer from 1 to %lld", UINT32_MAX},
};

/* The pattern of detail's path: the path with its indexes left out. */
static void pattern_write(const hf_error_detail_t *detail, char *out, size_t size) {
    snprintf(out, size, "%s%s%s%s%s", detail->field, detail->has_index ? "[]" : "",
             detail->has_row ? ".rows[]" : "", detail->member ? "." : "",
             detail->member ? detail->member : "");
}

/* Writes the rule of detail's field into out; false when the field has none here. */
static bool rule_write(const hf_error_detail_t *detail, hf_fields_body_t body, char *out,
                       size_t size) {
    char pattern[128];
    pattern_write(detail, pattern, sizeof pattern);
    for (size_t i = 0; i < sizeof RULES / sizeof RULES[0]; i++) {
        if (!(RULES[i].bodies & (1u << body)) || strcmp(RULES[i].pattern, pattern) != 0) continue;
        snprintf(out, size, RULES[i].format, RULES[i].value);
        return true;
    }
    return false;
}

/* A hold's or booking's "pools" is an object: its members are named by pool id. */
static bool pool_keyed(const hf_error_detail_t *detail, const char *field,
                       const hf_fields_source_t *source) {
    return source->body != HF_FIELDS_EVENT && source->request && detail->has_index &&
           strcmp(field, "pools") == 0 && detail->index < source->request->pool_count;
}

void hf_fields_path(const hf_error_detail_t *detail, const hf_fields_source_t *source, char *out,
                    size_t size) {
    const char *field = detail->field ? detail->field : "body";
    int length;
    if (pool_keyed(detail, field, source))
        length = snprintf(out, size, "%s.%s", field, source->request->pools[detail->index].pool_id);
    else if (detail->has_index) length = snprintf(out, size, "%s[%u]", field, detail->index);
    else length = snprintf(out, size, "%s", field);
    if (length < 0 || (size_t)length >= size) return;
    if (detail->has_row)
        length += snprintf(out + length, size - (size_t)length, ".rows[%u]", detail->row);
    if (length < 0 || (size_t)length >= size) return;
    if (detail->member) snprintf(out + length, size - (size_t)length, ".%s", detail->member);
}

/* The id a duplicate repeats, as the source has it; NULL when it is not at hand. */
static const char *duplicate_id(const hf_error_detail_t *detail, const hf_fields_source_t *source) {
    const hf_event_definition_t *definition = source->definition;
    const hf_hold_request_t *request = source->request;
    bool sections = strcmp(detail->field, "sections") == 0;
    if (definition && sections && detail->index < definition->section_count) {
        const hf_section_definition_t *section = &definition->sections[detail->index];
        if (!detail->has_row) return section->id;
        return detail->row < section->row_count ? section->rows[detail->row].id : NULL;
    }
    if (definition && strcmp(detail->field, "pools") == 0 && detail->index < definition->pool_count)
        return definition->pools[detail->index].id;
    if (request && strcmp(detail->field, "seats") == 0 && detail->index < request->seat_count)
        return request->seat_ids[detail->index];
    return NULL;
}

/* 'sections[1].id "FLOOR" is used by sections[0]'; a hold's seat 'is listed twice'. */
static void duplicate_write(const hf_error_detail_t *detail, const hf_fields_source_t *source,
                            const char *path, char *out, size_t size) {
    hf_error_detail_t earlier = *detail;
    earlier.member = NULL;
    if (detail->has_row) earlier.row = detail->other;
    else earlier.index = detail->other;
    char other[HF_FIELDS_TEXT_SIZE];
    hf_fields_path(&earlier, source, other, sizeof other);
    const char *id = duplicate_id(detail, source);
    char quoted[HF_SEAT_ID_SIZE_MAX + 4] = "";
    if (id) snprintf(quoted, sizeof quoted, " \"%s\"", id);
    if (strcmp(detail->field, "seats") == 0)
        snprintf(out, size, "%s%s is listed twice: also as %s", path, quoted, other);
    else snprintf(out, size, "%s%s is used by %s", path, quoted, other);
}

/* Milliseconds as seconds, with the fraction only when there is one: "1800", "0.5". */
static void seconds_write(int64_t ms, char *out, size_t size) {
    if (ms % 1000 == 0) snprintf(out, size, "%lld", (long long)(ms / 1000));
    else snprintf(out, size, "%.3f", (double)ms / 1000.0);
}

static void counted_write(const hf_error_detail_t *detail, const char *path, char *out,
                          size_t size) {
    long long limit = detail->limit, requested = detail->requested;
    char at_most[32], asked[32];
    switch (detail->fault) {
    case HF_FAULT_EVENT_SEATS:
        snprintf(out, size, "%s must have at most %lld seats in all, not %lld", path, limit,
                 requested);
        break;
    case HF_FAULT_EVENT_ROWS:
        snprintf(out, size, "%s must have at most %lld rows in all, not %lld", path, limit,
                 requested);
        break;
    case HF_FAULT_HOLD_ITEMS:
        snprintf(out, size,
                 "%s must ask for at most %lld items in all (the event's "
                 "max_seats_per_hold; a seat or a pool unit counts one), not %lld",
                 path, limit, requested);
        break;
    default: /* HF_FAULT_HOLD_TTL */
        seconds_write(detail->limit, at_most, sizeof at_most);
        seconds_write(detail->requested, asked, sizeof asked);
        /* Past HF_HOLD_TTL_MS_MAX the decoder keeps no exact value to quote (decode.h). */
        if (detail->requested > HF_HOLD_TTL_MS_MAX)
            snprintf(out, size, "%s must be at most %s seconds (the event's max_hold_s)", path,
                     at_most);
        else
            snprintf(out, size, "%s must be at most %s seconds (the event's max_hold_s), not %s",
                     path, at_most, asked);
        break;
    }
}

void hf_fields_message(const hf_error_detail_t *given, const hf_fields_source_t *source, char *out,
                       size_t size) {
    /* A fault without a field is about the body as a whole. */
    hf_error_detail_t body = {.field = "body"};
    const hf_error_detail_t *detail = given->field ? given : &body;
    char path[HF_FIELDS_TEXT_SIZE], rule[256];
    hf_fields_path(detail, source, path, sizeof path);
    switch (detail->fault) {
    case HF_FAULT_REQUIRED: snprintf(out, size, "%s is required", path); break;
    case HF_FAULT_DUPLICATE: duplicate_write(detail, source, path, out, size); break;
    case HF_FAULT_NO_INVENTORY:
        snprintf(out, size, "an event needs at least one seat or pool");
        break;
    case HF_FAULT_NO_ITEMS:
        snprintf(out, size, "%s",
                 source->body == HF_FIELDS_BOOKING ? "a booking needs seats or pools"
                                                   : "a hold needs seats, pools or best_available");
        break;
    case HF_FAULT_EVENT_SEATS:
    case HF_FAULT_EVENT_ROWS:
    case HF_FAULT_HOLD_ITEMS:
    case HF_FAULT_HOLD_TTL: counted_write(detail, path, out, size); break;
    case HF_FAULT_ID_TAKEN: snprintf(out, size, "%s is already in use", path); break;
    case HF_FAULT_EXISTS:
        snprintf(out, size, "%s: row exists; a change appends new rows only", path);
        break;
    default: /* HF_FAULT_VALUE */
        if (rule_write(detail, source->body, rule, sizeof rule))
            snprintf(out, size, "%s must be %s", path, rule);
        else snprintf(out, size, "%s is not valid", path);
        break;
    }
}

void hf_fields_user_limit(const hf_error_detail_t *detail, const char *user_id, char *out,
                          size_t size) {
    snprintf(out, size,
             "%s may hold or buy at most %lld seats of this event and has %lld; this request "
             "asks for %lld",
             user_id ? user_id : "this user", (long long)detail->limit, (long long)detail->current,
             (long long)detail->requested);
}
