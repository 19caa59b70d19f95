/* Request decoding (decode.h): the body's JSON, and its members to typed values with a 400
 * naming the member when wrong. */
#include "api/decode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json_read.h"

/* A limit's value as a string literal, for messages that quote it: the macro's own expansion
 * (64, not HF_JSON_DEPTH_MAX) is what STRINGIZE_VALUE turns into text. */
#define STRINGIZE_VALUE(x) #x
#define STRINGIZE(x) STRINGIZE_VALUE(x)

static bool reject(hf_request_t *request, const char *name, const char *message) {
    hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, message, name);
    return false;
}

/* ---- the body ---- */

/* JSON nesting depth, counted before parsing so a deep document is refused cheaply. */
static bool depth_within_limit(const char *body, size_t length) {
    /* Each level opens with a byte of its own, so a body this short cannot nest too deep; most
     * requests are that short and skip the count. */
    if (length <= HF_JSON_DEPTH_MAX) return true;
    int depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < length; i++) {
        char c = body[i];
        if (in_string) {
            if (c == '\\') i++;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            if (++depth > HF_JSON_DEPTH_MAX) return false;
        } else if (c == '}' || c == ']') {
            depth--;
        }
    }
    return true;
}

/* The body read by jansson, after the depth check; NULL after answering 400 invalid_json. */
static json_t *body_parse(hf_request_t *request) {
    const hf_http_request_t *http = request->http;
    if (!depth_within_limit(http->body, http->body_length)) {
        hf_reply_error(request, HF_API_ERROR_INVALID_JSON,
                       "JSON nested deeper than " STRINGIZE(HF_JSON_DEPTH_MAX) " levels", NULL);
        return NULL;
    }
    json_error_t error;
    json_t *body = json_loadb(http->body, http->body_length,
                              JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &error);
    if (!body) {
        char message[256];
        snprintf(message, sizeof message, "invalid JSON at byte %d: %s", error.position,
                 error.text);
        hf_reply_error(request, HF_API_ERROR_INVALID_JSON, message, NULL);
    }
    return body;
}

bool hf_decode_body(hf_request_t *request, bool flat_allowed) {
    const hf_http_request_t *http = request->http;
    /* Most bodies of the hot routes are flat: read without jansson's DOM. Whatever the flat
     * reader declines, jansson reads (or refuses, with its message). The flat reading goes to
     * request's own (hf_request_t.flat_body). */
    hf_flat_json_t *flat = &request->flat_body;
    if (flat_allowed && hf_flat_json_read(flat, http->body, http->body_length)) {
        request->flat = flat;
        return true;
    }
    if (http->body_length == 0) {
        request->body = json_object(); /* an empty body reads as {} */
        return true;
    }
    request->body = body_parse(request);
    if (!request->body) return false;
    if (!json_is_object(request->body)) {
        hf_reply_error(request, HF_API_ERROR_INVALID_REQUEST, "the body must be a JSON object",
                       "body");
        return false;
    }
    return true;
}

bool hf_decode_body_unread(hf_request_t *request) {
    const hf_http_request_t *http = request->http;
    /* The flat reader's cheap pass first: most such bodies are "{}" or a small object. Its
     * reading is not kept, so the handler sees no member. */
    if (http->body_length == 0 ||
        hf_flat_json_read(&request->flat_body, http->body, http->body_length))
        return true;
    json_t *body = body_parse(request);
    if (!body) return false;
    json_decref(body);
    return true;
}

/* ---- the body's members, from whichever reading the body had (hf_decode_body) ---- */

static const hf_member_kind_t JSON_KINDS[] = {
    [JSON_OBJECT] = HF_MEMBER_OTHER,  [JSON_ARRAY] = HF_MEMBER_OTHER,
    [JSON_STRING] = HF_MEMBER_STRING, [JSON_INTEGER] = HF_MEMBER_INTEGER,
    [JSON_REAL] = HF_MEMBER_REAL,     [JSON_TRUE] = HF_MEMBER_BOOL,
    [JSON_FALSE] = HF_MEMBER_BOOL,    [JSON_NULL] = HF_MEMBER_NULL,
};

static hf_member_t member_from_json(json_t *json) {
    /* json_number_value is 0 for anything but a number, json_is_true false. */
    hf_member_t member = {.kind = JSON_KINDS[json_typeof(json)],
                          .truth = json_is_true(json),
                          .number = json_number_value(json),
                          .json = json};
    if (json_is_integer(json)) member.integer = json_integer_value(json);
    if (json_is_string(json)) {
        member.string = json_string_value(json);
        member.length = json_string_length(json);
    }
    return member;
}

static const hf_member_kind_t FLAT_KINDS[] = {
    [HF_FLAT_JSON_NULL] = HF_MEMBER_NULL,     [HF_FLAT_JSON_FALSE] = HF_MEMBER_BOOL,
    [HF_FLAT_JSON_TRUE] = HF_MEMBER_BOOL,     [HF_FLAT_JSON_INTEGER] = HF_MEMBER_INTEGER,
    [HF_FLAT_JSON_REAL] = HF_MEMBER_REAL,     [HF_FLAT_JSON_STRING] = HF_MEMBER_STRING,
    [HF_FLAT_JSON_STRINGS] = HF_MEMBER_OTHER, [HF_FLAT_JSON_OBJECTS] = HF_MEMBER_OTHER,
};

/* The flat reader's member has the same values: only the kind is named differently. The
 * fields its kind does not use are copied too and never read. */
static hf_member_t member_from_flat(const hf_flat_json_member_t *flat) {
    return (hf_member_t){.kind = FLAT_KINDS[flat->kind],
                         .truth = flat->kind == HF_FLAT_JSON_TRUE,
                         .integer = flat->integer,
                         .number = flat->real,
                         .string = flat->string,
                         .length = flat->length,
                         .flat = flat};
}

hf_member_t hf_decode_member(const hf_request_t *request, const char *name) {
    if (request->flat) {
        const hf_flat_json_member_t *flat = hf_flat_json_member(request->flat, name);
        return flat ? member_from_flat(flat) : (hf_member_t){.kind = HF_MEMBER_ABSENT};
    }
    json_t *json = request->body ? json_object_get(request->body, name) : NULL;
    return json ? member_from_json(json) : (hf_member_t){.kind = HF_MEMBER_ABSENT};
}

static bool absent_or_null(const hf_member_t *member) {
    return member->kind == HF_MEMBER_ABSENT || member->kind == HF_MEMBER_NULL;
}

static bool is_number(const hf_member_t *member) {
    return member->kind == HF_MEMBER_INTEGER || member->kind == HF_MEMBER_REAL;
}

/* ---- typed members with a 400 naming the member when wrong ---- */

bool hf_decode_string(hf_request_t *request, const char *name, size_t size_max, bool required,
                      const char **value) {
    hf_member_t member = hf_decode_member(request, name);
    if (absent_or_null(&member)) {
        if (!required) return true;
        char message[128];
        snprintf(message, sizeof message, "%s is required", name);
        return reject(request, name, message);
    }
    /* A NUL inside the string would hide the rest of it from every later check. */
    if (member.kind != HF_MEMBER_STRING || member.length == 0 || member.length > size_max ||
        strlen(member.string) != member.length) {
        char message[128];
        snprintf(message, sizeof message, "%s must be a string of 1 to %zu bytes", name, size_max);
        return reject(request, name, message);
    }
    *value = member.string;
    return true;
}

/* Seconds (integer or fraction) to whole milliseconds, rounded; false unless above 0 and at
 * most max_ms. A positive value below the millisecond, the server's resolution, is raised to
 * 1 ms: it is above 0, as the rule says, and refusing it would quote a rule it keeps. */
static bool seconds_to_ms(double seconds, int64_t max_ms, int64_t *ms) {
    if (!isfinite(seconds) || seconds <= 0 || seconds * 1000.0 > (double)max_ms) return false;
    int64_t value = llround(seconds * 1000.0);
    *ms = value < 1 ? 1 : value;
    return true;
}

static bool json_seconds_to_ms(json_t *member, int64_t *ms) {
    return json_is_number(member) &&
           seconds_to_ms(json_number_value(member), HF_HOLD_TTL_MS_MAX, ms);
}

/* A hold's ttl_s: any positive number. Its bound is the event's max_hold_s, which the core
 * checks and the message quotes (fields.c); a value past every event's bound, whose
 * milliseconds might not even fit, is read as just past it. */
bool hf_decode_seconds(hf_request_t *request, const char *name, int64_t *ms) {
    hf_member_t member = hf_decode_member(request, name);
    if (absent_or_null(&member)) return true;
    if (is_number(&member) && isfinite(member.number) && member.number > 0) {
        if (!seconds_to_ms(member.number, HF_HOLD_TTL_MS_MAX, ms)) *ms = HF_HOLD_TTL_MS_MAX + 1;
        return true;
    }
    char message[128];
    snprintf(message, sizeof message, "%s must be a number of seconds above 0", name);
    return reject(request, name, message);
}

bool hf_decode_extension(hf_request_t *request, const char *name, int64_t *ms) {
    hf_member_t member = hf_decode_member(request, name);
    if (absent_or_null(&member)) return true;
    double seconds = is_number(&member) ? member.number : 0;
    if (!isfinite(seconds) || seconds <= 0) {
        char message[128];
        snprintf(message, sizeof message, "%s must be a number of seconds above 0", name);
        return reject(request, name, message);
    }
    /* Any positive value is accepted: the cap applies later, and a tiny one changes nothing
     * since an extension never moves expires_at earlier. */
    if (!seconds_to_ms(seconds, HF_HOLD_TTL_MS_MAX, ms)) *ms = HF_HOLD_TTL_MS_MAX;
    return true;
}

bool hf_decode_bool(hf_request_t *request, const char *name, bool *value) {
    hf_member_t member = hf_decode_member(request, name);
    if (absent_or_null(&member)) return true;
    if (member.kind != HF_MEMBER_BOOL) {
        char message[128];
        snprintf(message, sizeof message, "%s must be true or false", name);
        return reject(request, name, message);
    }
    *value = member.truth;
    return true;
}

bool hf_decode_user(hf_request_t *request, const char **user_id) {
    if (!request->acting_user[0])
        return hf_decode_string(request, "user_id", HF_USER_ID_SIZE_MAX, true, user_id);
    /* A user token acts as its sub (API.md section 16): user_id may be left out, and when
     * given it must be the token's. */
    const char *given = NULL;
    if (!hf_decode_string(request, "user_id", HF_USER_ID_SIZE_MAX, false, &given) ||
        (given && !hf_request_owner_check(request, given)))
        return false;
    *user_id = request->acting_user;
    return true;
}

/* ---- event definitions ---- */

/* Where in a definition a value is read: a top-level member, an element of a list
 * (has_index) or a row of a section (has_row). */
typedef struct where {
    const char *field;
    uint32_t index, row;
    bool has_index, has_row;
} where_t;

/* Records the path of a wrong value (member at where, or where itself when member is NULL)
 * and whether it was absent (value NULL) or wrong; returns false for the caller to return. */
static bool wrong(hf_error_detail_t *fault, const where_t *where, const char *member,
                  const void *value) {
    fault->field = where->field;
    fault->member = member;
    fault->index = where->index;
    fault->has_index = where->has_index;
    fault->row = where->row;
    fault->has_row = where->has_row;
    fault->fault = value ? HF_FAULT_VALUE : HF_FAULT_REQUIRED;
    return false;
}

static bool copy_id(json_t *member, char *out) {
    if (!json_is_string(member)) return false;
    size_t length = json_string_length(member);
    const char *text = json_string_value(member);
    /* A NUL inside the string would hide the rest of it from the check. */
    if (strlen(text) != length || !hf_core_id_valid(text)) return false;
    memcpy(out, text, length + 1);
    return true;
}

/* The object's member name, which must be an id; false after recording where. */
static bool id_member(json_t *object, const where_t *where, char *out, hf_error_detail_t *fault) {
    json_t *id = json_object_get(object, "id");
    return copy_id(id, out) || wrong(fault, where, "id", id);
}

static bool decode_row(json_t *row, const where_t *where, hf_row_definition_t *target,
                       hf_error_detail_t *fault) {
    if (!json_is_object(row)) return wrong(fault, where, NULL, row);
    if (!id_member(row, where, target->id, fault)) return false;
    json_t *seats = json_object_get(row, "seats");
    int64_t count = 0;
    if (!hf_json_read_integer(seats, 1, HF_EVENT_SEATS_MAX, &count))
        return wrong(fault, where, "seats", seats);
    target->seats = (uint32_t)count;
    return true;
}

static bool decode_rows(json_t *rows, const where_t *section_at, hf_section_definition_t *section,
                        hf_error_detail_t *fault) {
    if (!json_is_array(rows) || json_array_size(rows) == 0 ||
        json_array_size(rows) > HF_SECTION_ROWS_MAX)
        return wrong(fault, section_at, "rows", rows);
    section->row_count = (uint32_t)json_array_size(rows);
    section->rows = calloc(section->row_count, sizeof *section->rows);
    if (!section->rows) abort();
    where_t where = *section_at;
    where.has_row = true;
    for (where.row = 0; where.row < section->row_count; where.row++)
        if (!decode_row(json_array_get(rows, where.row), &where, &section->rows[where.row], fault))
            return false;
    return true;
}

static bool decode_section(json_t *section, const where_t *where, hf_section_definition_t *target,
                           hf_error_detail_t *fault) {
    if (!json_is_object(section)) return wrong(fault, where, NULL, section);
    if (!id_member(section, where, target->id, fault)) return false;
    json_t *price = json_object_get(section, "price");
    if (!hf_json_read_integer(price, 0, HF_PRICE_MAX, &target->price))
        return wrong(fault, where, "price", price);
    return decode_rows(json_object_get(section, "rows"), where, target, fault);
}

static bool decode_sections(json_t *sections, hf_event_definition_t *definition,
                            hf_error_detail_t *fault) {
    where_t where = {.field = "sections"};
    if (!sections || json_is_null(sections)) return true;
    if (!json_is_array(sections) || json_array_size(sections) > HF_EVENT_SECTIONS_MAX)
        return wrong(fault, &where, NULL, sections);
    definition->section_count = (uint32_t)json_array_size(sections);
    definition->sections = calloc(definition->section_count + 1, sizeof *definition->sections);
    if (!definition->sections) abort();
    where.has_index = true;
    for (where.index = 0; where.index < definition->section_count; where.index++)
        if (!decode_section(json_array_get(sections, where.index), &where,
                            &definition->sections[where.index], fault))
            return false;
    return true;
}

static bool decode_pool(json_t *pool, const where_t *where, hf_pool_definition_t *target,
                        hf_error_detail_t *fault) {
    if (!json_is_object(pool)) return wrong(fault, where, NULL, pool);
    if (!id_member(pool, where, target->id, fault)) return false;
    json_t *capacity = json_object_get(pool, "capacity");
    if (!hf_json_read_integer(capacity, 0, HF_POOL_CAPACITY_MAX, &target->capacity))
        return wrong(fault, where, "capacity", capacity);
    json_t *price = json_object_get(pool, "price");
    if (!hf_json_read_integer(price, 0, HF_PRICE_MAX, &target->price))
        return wrong(fault, where, "price", price);
    return true;
}

static bool decode_pools(json_t *pools, hf_event_definition_t *definition,
                         hf_error_detail_t *fault) {
    where_t where = {.field = "pools"};
    if (!pools || json_is_null(pools)) return true;
    if (!json_is_array(pools) || json_array_size(pools) > HF_EVENT_POOLS_MAX)
        return wrong(fault, &where, NULL, pools);
    definition->pool_count = (uint32_t)json_array_size(pools);
    definition->pools = calloc(definition->pool_count + 1, sizeof *definition->pools);
    if (!definition->pools) abort();
    where.has_index = true;
    for (where.index = 0; where.index < definition->pool_count; where.index++)
        if (!decode_pool(json_array_get(pools, where.index), &where,
                         &definition->pools[where.index], fault))
            return false;
    return true;
}

static bool decode_text(json_t *member, char *out, size_t size_max) {
    if (!json_is_string(member)) return false;
    size_t length = json_string_length(member);
    if (length == 0 || length > size_max || strlen(json_string_value(member)) != length)
        return false;
    memcpy(out, json_string_value(member), length + 1);
    return true;
}

static bool decode_currency(json_t *member, char *out) {
    if (!member) {
        strcpy(out, "USD");
        return true;
    }
    if (!decode_text(member, out, 3) || strlen(out) != 3) return false;
    for (int i = 0; i < 3; i++)
        if (out[i] < 'A' || out[i] > 'Z') return false;
    return true;
}

/* The top-level member name of object; false after recording it as wrong. */
static bool top_wrong(hf_error_detail_t *fault, const char *name, const json_t *value) {
    where_t where = {.field = name};
    return wrong(fault, &where, NULL, value);
}

static bool decode_limits(json_t *object, hf_event_definition_t *definition,
                          hf_error_detail_t *fault) {
    json_t *member = json_object_get(object, "hold_ttl_s");
    definition->hold_ttl_ms = 600000;
    if (member && !json_seconds_to_ms(member, &definition->hold_ttl_ms))
        return top_wrong(fault, "hold_ttl_s", member);
    definition->max_hold_ms = 3 * definition->hold_ttl_ms;
    member = json_object_get(object, "max_hold_s");
    if (member && !json_seconds_to_ms(member, &definition->max_hold_ms))
        return top_wrong(fault, "max_hold_s", member);
    if (definition->max_hold_ms < definition->hold_ttl_ms ||
        definition->max_hold_ms > HF_HOLD_TTL_MS_MAX)
        return top_wrong(fault, "max_hold_s", object);
    int64_t value = 0;
    member = json_object_get(object, "max_seats_per_user");
    if (member && !hf_json_read_integer(member, 0, UINT32_MAX, &value))
        return top_wrong(fault, "max_seats_per_user", member);
    definition->max_seats_per_user = (uint32_t)value;
    value = 10;
    member = json_object_get(object, "max_seats_per_hold");
    if (member && !hf_json_read_integer(member, 1, HF_HOLD_ITEMS_MAX, &value))
        return top_wrong(fault, "max_seats_per_hold", member);
    definition->max_seats_per_hold = (uint32_t)value;
    return true;
}

/* An optional integer member of the room from minimum to maximum; false after recording it. */
static bool room_integer(json_t *room, const char *name, int64_t minimum, int64_t maximum,
                         int64_t *value, hf_error_detail_t *fault) {
    json_t *member = json_object_get(room, name);
    if (!member || json_is_null(member) || hf_json_read_integer(member, minimum, maximum, value))
        return true;
    where_t where = {.field = "waiting_room"};
    return wrong(fault, &where, name, member);
}

/* A room's settings before any member is read (API.md section 6, limits.h). */
static const hf_room_definition_t ROOM_DEFAULTS = {false,
                                                   HF_QUEUE_ADMIT_PER_S_DEFAULT,
                                                   HF_QUEUE_TOKEN_TTL_S_DEFAULT,
                                                   0,
                                                   HF_QUEUE_ABANDON_AFTER_MS_DEFAULT,
                                                   HF_QUEUE_WAITING_DEFAULT,
                                                   0,
                                                   {0}};

/* "waiting_room": {"enabled", "admit_per_s", "token_ttl_s", "max_active", "abandon_after_s",
 * "max_waiting", "opens_at"}: each member given is checked and read over settings. */
static bool room_members(json_t *room, hf_room_definition_t *settings, hf_error_detail_t *fault) {
    where_t where = {.field = "waiting_room"};
    if (!json_is_object(room)) return wrong(fault, &where, NULL, room);
    json_t *enabled = json_object_get(room, "enabled");
    if (enabled && !json_is_boolean(enabled)) return wrong(fault, &where, "enabled", enabled);
    if (json_is_boolean(enabled)) settings->enabled = json_is_true(enabled);
    json_t *rate = json_object_get(room, "admit_per_s");
    if (rate && !json_is_null(rate)) {
        settings->admit_per_s = json_is_number(rate) ? json_number_value(rate) : -1.0;
        if (!(settings->admit_per_s >= HF_QUEUE_ADMIT_PER_S_MIN &&
              settings->admit_per_s <= HF_QUEUE_ADMIT_PER_S_MAX))
            return wrong(fault, &where, "admit_per_s", rate);
    }
    int64_t active = settings->max_active, waiting = settings->max_waiting;
    /* A token's exp is whole seconds: a fractional ttl is rounded up (durations may be
     * fractional, API.md section 1). */
    json_t *token_ttl = json_object_get(room, "token_ttl_s");
    if (token_ttl && !json_is_null(token_ttl)) {
        double seconds = json_is_number(token_ttl) ? json_number_value(token_ttl) : -1.0;
        if (!(seconds > 0 && seconds <= (double)HF_QUEUE_TOKEN_TTL_S_MAX))
            return wrong(fault, &where, "token_ttl_s", token_ttl);
        settings->token_ttl_s = (int64_t)ceil(seconds);
    }
    if (!room_integer(room, "max_active", 0, UINT32_MAX, &active, fault) ||
        !room_integer(room, "max_waiting", 1, HF_QUEUE_WAITING_LIMIT, &waiting, fault))
        return false;
    settings->max_active = (uint32_t)active;
    settings->max_waiting = (uint32_t)waiting;
    json_t *abandon = json_object_get(room, "abandon_after_s");
    if (abandon && !json_is_null(abandon) &&
        (!json_seconds_to_ms(abandon, &settings->abandon_after_ms) ||
         settings->abandon_after_ms > HF_HOLD_TTL_MS_MAX))
        return wrong(fault, &where, "abandon_after_s", abandon);
    json_t *opens_at = json_object_get(room, "opens_at");
    if (opens_at && !json_is_null(opens_at) &&
        !hf_parse_time(json_string_value(opens_at), &settings->opens_at_ms))
        return wrong(fault, &where, "opens_at", opens_at);
    return true;
}

/* A creation's room: settings of a disabled room are checked and then dropped (an event
 * without a room keeps none). */
static bool decode_room(json_t *room, hf_room_definition_t *target, hf_error_detail_t *fault) {
    if (!room || json_is_null(room)) return true;
    hf_room_definition_t settings = ROOM_DEFAULTS;
    if (!room_members(room, &settings, fault)) return false;
    if (settings.enabled) *target = settings;
    return true;
}

/* "waitlist": {"enabled", "offer_ttl_s"} (API.md section 14): each member given replaces
 * the base's (off, 600 s at a creation; the event's setting in a patch). */
static bool read_waitlist(json_t *member, const hf_waitlist_setting_t *base,
                          hf_waitlist_setting_t *setting, hf_error_detail_t *fault) {
    *setting = *base;
    if (!member || json_is_null(member)) return true;
    where_t where = {.field = "waitlist"};
    if (!json_is_object(member)) return wrong(fault, &where, NULL, member);
    json_t *enabled = json_object_get(member, "enabled");
    if (enabled && !json_is_boolean(enabled)) return wrong(fault, &where, "enabled", enabled);
    if (enabled) setting->enabled = json_is_true(enabled);
    json_t *ttl = json_object_get(member, "offer_ttl_s");
    if (ttl && !json_is_null(ttl) &&
        (!json_seconds_to_ms(ttl, &setting->offer_ttl_ms) || setting->offer_ttl_ms <= 0 ||
         setting->offer_ttl_ms > HF_HOLD_TTL_MS_MAX))
        return wrong(fault, &where, "offer_ttl_s", ttl);
    return true;
}

static bool decode_waitlist(json_t *member, hf_waitlist_setting_t *setting,
                            hf_error_detail_t *fault) {
    const hf_waitlist_setting_t off = {false, HF_WAITLIST_OFFER_TTL_MS_DEFAULT};
    return read_waitlist(member, &off, setting, fault);
}

bool hf_decode_definition(json_t *object, hf_event_definition_t *definition,
                          hf_error_detail_t *fault) {
    memset(definition, 0, sizeof *definition);
    json_t *member = json_object_get(object, "id");
    if (!copy_id(member, definition->id)) return top_wrong(fault, "id", member);
    member = json_object_get(object, "name");
    if (!member) strcpy(definition->name, definition->id);
    else if (!decode_text(member, definition->name, HF_NAME_SIZE_MAX))
        return top_wrong(fault, "name", member);
    member = json_object_get(object, "currency");
    if (!decode_currency(member, definition->currency)) return top_wrong(fault, "currency", member);
    if (!decode_limits(object, definition, fault)) return false;
    if (!decode_sections(json_object_get(object, "sections"), definition, fault)) return false;
    if (!decode_pools(json_object_get(object, "pools"), definition, fault)) return false;
    if (!decode_waitlist(json_object_get(object, "waitlist"), &definition->waitlist, fault))
        return false;
    return decode_room(json_object_get(object, "waiting_room"), &definition->waiting_room, fault);
}

void hf_decode_definition_free(hf_event_definition_t *definition) {
    for (uint32_t s = 0; definition->sections && s < definition->section_count; s++)
        free(definition->sections[s].rows);
    free(definition->sections);
    free(definition->pools);
    definition->sections = NULL;
    definition->pools = NULL;
}

/* ---- a change of an event (PATCH) ---- */

/* An optional price or capacity from 0 to maximum: HF_UNCHANGED when absent or null. */
static bool optional_amount(json_t *object, const char *name, int64_t maximum, int64_t *value,
                            const where_t *where, hf_error_detail_t *fault) {
    json_t *member = json_object_get(object, name);
    *value = HF_UNCHANGED;
    if (!member || json_is_null(member)) return true;
    return hf_json_read_integer(member, 0, maximum, value) || wrong(fault, where, name, member);
}

/* A listed section: its id, and a price and rows when it changes them (the core requires
 * both of a new section). */
static bool patch_section(json_t *section, const where_t *where, hf_section_definition_t *target,
                          hf_error_detail_t *fault) {
    if (!json_is_object(section)) return wrong(fault, where, NULL, section);
    if (!id_member(section, where, target->id, fault)) return false;
    if (!optional_amount(section, "price", HF_PRICE_MAX, &target->price, where, fault))
        return false;
    json_t *rows = json_object_get(section, "rows");
    if (!rows || json_is_null(rows)) return true;
    return decode_rows(rows, where, target, fault);
}

static bool patch_pool(json_t *pool, const where_t *where, hf_pool_definition_t *target,
                       hf_error_detail_t *fault) {
    if (!json_is_object(pool)) return wrong(fault, where, NULL, pool);
    return id_member(pool, where, target->id, fault) &&
           optional_amount(pool, "capacity", HF_POOL_CAPACITY_MAX, &target->capacity, where,
                           fault) &&
           optional_amount(pool, "price", HF_PRICE_MAX, &target->price, where, fault);
}

/* "sections" or "pools" of a patch: a list of at most maximum, each read by read_one. */
static bool patch_list(json_t *list, const char *field, uint32_t maximum, void **items,
                       uint32_t *count, size_t size, hf_error_detail_t *fault,
                       bool (*read_one)(json_t *, const where_t *, void *, hf_error_detail_t *)) {
    where_t where = {.field = field};
    if (!json_is_array(list) || json_array_size(list) > maximum)
        return wrong(fault, &where, NULL, list);
    *count = (uint32_t)json_array_size(list);
    *items = calloc(*count + 1, size);
    if (!*items) abort();
    where.has_index = true;
    for (where.index = 0; where.index < *count; where.index++)
        if (!read_one(json_array_get(list, where.index), &where,
                      (char *)*items + where.index * size, fault))
            return false;
    return true;
}

static bool read_section(json_t *json, const where_t *where, void *target,
                         hf_error_detail_t *fault) {
    return patch_section(json, where, target, fault);
}

static bool read_pool(json_t *json, const where_t *where, void *target, hf_error_detail_t *fault) {
    return patch_pool(json, where, target, fault);
}

/* The room a patch asks for: its members read over the room's settings as they stand (the
 * defaults for an event that never had a room). A room turned off keeps its settings; one
 * that never was on keeps none, as at creation. */
static bool patch_room(json_t *room, const hf_room_definition_t *base, hf_room_definition_t *target,
                       hf_error_detail_t *fault) {
    hf_room_definition_t settings = ROOM_DEFAULTS;
    if (base->admit_per_s > 0) settings = *base;
    settings.enabled = base->enabled;
    if (!room_members(room, &settings, fault)) return false;
    if (!settings.enabled && base->admit_per_s <= 0) settings = (hf_room_definition_t){0};
    *target = settings;
    return true;
}

/* The scalar members of a patch, each present one read as a creation reads it. */
static bool patch_limits(json_t *object, hf_event_definition_t *patch, uint32_t *members,
                         hf_error_detail_t *fault) {
    json_t *member = json_object_get(object, "name");
    if (member && !json_is_null(member)) {
        if (!decode_text(member, patch->name, HF_NAME_SIZE_MAX))
            return top_wrong(fault, "name", member);
        *members |= HF_EVENT_MEMBER_NAME;
    }
    member = json_object_get(object, "hold_ttl_s");
    if (member && !json_is_null(member)) {
        if (!json_seconds_to_ms(member, &patch->hold_ttl_ms))
            return top_wrong(fault, "hold_ttl_s", member);
        *members |= HF_EVENT_MEMBER_HOLD_TTL;
    }
    member = json_object_get(object, "max_hold_s");
    if (member && !json_is_null(member)) {
        if (!json_seconds_to_ms(member, &patch->max_hold_ms))
            return top_wrong(fault, "max_hold_s", member);
        *members |= HF_EVENT_MEMBER_MAX_HOLD;
    }
    int64_t value = 0;
    member = json_object_get(object, "max_seats_per_user");
    if (member && !json_is_null(member)) {
        if (!hf_json_read_integer(member, 0, UINT32_MAX, &value))
            return top_wrong(fault, "max_seats_per_user", member);
        patch->max_seats_per_user = (uint32_t)value;
        *members |= HF_EVENT_MEMBER_MAX_SEATS_PER_USER;
    }
    member = json_object_get(object, "max_seats_per_hold");
    if (member && !json_is_null(member)) {
        if (!hf_json_read_integer(member, 1, HF_HOLD_ITEMS_MAX, &value))
            return top_wrong(fault, "max_seats_per_hold", member);
        patch->max_seats_per_hold = (uint32_t)value;
        *members |= HF_EVENT_MEMBER_MAX_SEATS_PER_HOLD;
    }
    return true;
}

bool hf_decode_patch(json_t *object, const char *event_id, const hf_room_definition_t *room,
                     const hf_waitlist_setting_t *waitlist, hf_event_definition_t *patch,
                     uint32_t *members, hf_error_detail_t *fault) {
    memset(patch, 0, sizeof *patch);
    *members = 0;
    snprintf(patch->id, sizeof patch->id, "%s", event_id);
    if (!patch_limits(object, patch, members, fault)) return false;
    json_t *member = json_object_get(object, "sections");
    if (member && !json_is_null(member)) {
        if (!patch_list(member, "sections", HF_EVENT_SECTIONS_MAX, (void **)&patch->sections,
                        &patch->section_count, sizeof *patch->sections, fault, read_section))
            return false;
        *members |= HF_EVENT_MEMBER_SECTIONS;
    }
    member = json_object_get(object, "pools");
    if (member && !json_is_null(member)) {
        if (!patch_list(member, "pools", HF_EVENT_POOLS_MAX, (void **)&patch->pools,
                        &patch->pool_count, sizeof *patch->pools, fault, read_pool))
            return false;
        *members |= HF_EVENT_MEMBER_POOLS;
    }
    member = json_object_get(object, "waiting_room");
    if (member && !json_is_null(member)) {
        if (!patch_room(member, room, &patch->waiting_room, fault)) return false;
        *members |= HF_EVENT_MEMBER_WAITING_ROOM;
    }
    member = json_object_get(object, "waitlist");
    if (member && !json_is_null(member)) {
        if (!read_waitlist(member, waitlist, &patch->waitlist, fault)) return false;
        *members |= HF_EVENT_MEMBER_WAITLIST;
    }
    return true;
}

/* ---- items ---- */

/* Records field, or field[index] when indexed, as wrong; false. */
static bool item_wrong(hf_error_detail_t *fault, const char *field, bool indexed, uint32_t index) {
    where_t where = {.field = field, .index = index, .has_index = indexed};
    return wrong(fault, &where, NULL, "");
}

bool hf_decode_pools(json_t *object, hf_hold_request_t *request, hf_pool_request_t *pools,
                     hf_error_detail_t *fault) {
    json_t *pool_object = json_object_get(object, "pools");
    request->pool_count = 0;
    request->pools = pools;
    if (!pool_object || json_is_null(pool_object)) return true;
    if (!json_is_object(pool_object) || json_object_size(pool_object) > HF_HOLD_ITEMS_MAX)
        return item_wrong(fault, "pools", false, 0);
    const char *pool_id;
    json_t *quantity;
    json_object_foreach(pool_object, pool_id, quantity) {
        bool valid = json_is_integer(quantity) && json_integer_value(quantity) >= 1 &&
                     json_integer_value(quantity) <= HF_HOLD_ITEMS_MAX;
        /* Kept even when wrong: the error's path names the pool by its id (pools.GA). */
        pools[request->pool_count++] = (hf_pool_request_t){
            pool_id, valid ? (uint32_t)json_integer_value(quantity) : 0};
        if (!valid) return item_wrong(fault, "pools", true, request->pool_count - 1);
    }
    return true;
}

/* Items from jansson's reading of the body. */
static bool items_decode(json_t *object, hf_hold_request_t *request, const char **seat_ids,
                         hf_pool_request_t *pools, hf_error_detail_t *fault) {
    json_t *seats = json_object_get(object, "seats");
    request->seat_count = 0;
    request->seat_ids = seat_ids;
    if (seats && !json_is_null(seats)) {
        if (!json_is_array(seats) || json_array_size(seats) > HF_HOLD_ITEMS_MAX)
            return item_wrong(fault, "seats", false, 0);
        for (size_t i = 0; i < json_array_size(seats); i++) {
            json_t *seat = json_array_get(seats, i);
            if (!json_is_string(seat) || json_string_length(seat) > HF_SEAT_ID_SIZE_MAX)
                return item_wrong(fault, "seats", true, (uint32_t)i);
            seat_ids[request->seat_count++] = json_string_value(seat);
        }
    }
    return hf_decode_pools(object, request, pools, fault);
}

/* The flat reader has strings and arrays of strings, never objects: "seats" is read from it,
 * and "pools", an object when valid, can only be absent, null or wrong. */
static bool flat_items_decode(const hf_request_t *from, hf_hold_request_t *request,
                              const char **seat_ids, hf_pool_request_t *pools,
                              hf_error_detail_t *fault) {
    const hf_flat_json_t *flat = from->flat;
    const hf_flat_json_member_t *seats = hf_flat_json_member(flat, "seats");
    request->seat_count = 0;
    request->seat_ids = seat_ids;
    request->pool_count = 0;
    request->pools = pools;
    if (seats && seats->kind != HF_FLAT_JSON_NULL) {
        if (seats->kind != HF_FLAT_JSON_STRINGS || seats->length > HF_HOLD_ITEMS_MAX)
            return item_wrong(fault, "seats", false, 0);
        for (uint32_t i = 0; i < seats->length; i++) {
            uint32_t item = seats->first_item + i;
            if (flat->item_lengths[item] > HF_SEAT_ID_SIZE_MAX)
                return item_wrong(fault, "seats", true, i);
            seat_ids[request->seat_count++] = flat->items[item];
        }
    }
    const hf_flat_json_member_t *pool_object = hf_flat_json_member(flat, "pools");
    if (pool_object && pool_object->kind != HF_FLAT_JSON_NULL)
        return item_wrong(fault, "pools", false, 0);
    return true;
}

bool hf_decode_request_items(const hf_request_t *from, hf_hold_request_t *request,
                             const char **seat_ids, hf_pool_request_t *pools,
                             hf_error_detail_t *fault) {
    if (from->flat) return flat_items_decode(from, request, seat_ids, pools, fault);
    return items_decode(from->body, request, seat_ids, pools, fault);
}
