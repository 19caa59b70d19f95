/* The JSON of stored rows (store/rows.h). */
#include "store/rows.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "core/queue.h"
#include "lib/json_read.h"

/* ---- writing ---- */

static void sections_write(hf_json_t *json, const hf_event_definition_t *definition) {
    hf_json_array_begin(json);
    for (uint32_t s = 0; s < definition->section_count; s++) {
        const hf_section_definition_t *section = &definition->sections[s];
        hf_json_object_begin(json);
        hf_json_key(json, "id");
        hf_json_string(json, section->id);
        hf_json_key(json, "price");
        hf_json_int(json, section->price);
        hf_json_key(json, "rows");
        hf_json_array_begin(json);
        for (uint32_t r = 0; r < section->row_count; r++) {
            hf_json_object_begin(json);
            hf_json_key(json, "id");
            hf_json_string(json, section->rows[r].id);
            hf_json_key(json, "seats");
            hf_json_int(json, section->rows[r].seats);
            hf_json_object_end(json);
        }
        hf_json_array_end(json);
        hf_json_object_end(json);
    }
    hf_json_array_end(json);
}

static void pools_write(hf_json_t *json, const hf_event_definition_t *definition) {
    hf_json_array_begin(json);
    for (uint32_t p = 0; p < definition->pool_count; p++) {
        hf_json_object_begin(json);
        hf_json_key(json, "id");
        hf_json_string(json, definition->pools[p].id);
        hf_json_key(json, "capacity");
        hf_json_int(json, definition->pools[p].capacity);
        hf_json_key(json, "price");
        hf_json_int(json, definition->pools[p].price);
        hf_json_object_end(json);
    }
    hf_json_array_end(json);
}

/* A room's settings; an event without a room has no member (as every event stored before
 * rooms existed). */
static void room_write(hf_json_t *json, const hf_room_definition_t *room) {
    char rate[32];
    int length = snprintf(rate, sizeof rate, "%.17g", room->admit_per_s);
    hf_json_key(json, "waiting_room");
    hf_json_object_begin(json);
    hf_json_key(json, "enabled");
    hf_json_bool(json, room->enabled);
    hf_json_key(json, "admit_per_s");
    hf_json_raw(json, rate, (size_t)length);
    hf_json_key(json, "token_ttl_s");
    hf_json_int(json, room->token_ttl_s);
    hf_json_key(json, "max_active");
    hf_json_int(json, room->max_active);
    hf_json_key(json, "abandon_after_s");
    hf_json_seconds(json, room->abandon_after_ms);
    hf_json_key(json, "max_waiting");
    hf_json_int(json, room->max_waiting);
    /* The pre-queue: its opening in milliseconds (exact), and the seed of its shuffle, which
     * only the store keeps (an answer never shows it: it would tell the places ahead). */
    if (room->opens_at_ms != 0) {
        char seed[2 * HF_QUEUE_SEED_SIZE + 1];
        for (size_t i = 0; i < HF_QUEUE_SEED_SIZE; i++)
            snprintf(seed + 2 * i, 3, "%02x", room->shuffle_seed[i]);
        hf_json_key(json, "opens_at_ms");
        hf_json_int(json, room->opens_at_ms);
        hf_json_key(json, "shuffle_seed");
        hf_json_string(json, seed);
    }
    hf_json_object_end(json);
}

void hf_rows_room_render(hf_json_t *json, const hf_room_definition_t *room, bool settings) {
    hf_json_object_begin(json);
    HF_JSON_KEY(json, "enabled");
    hf_json_bool(json, room->enabled);
    if (settings) {
        char rate[32];
        int length = snprintf(rate, sizeof rate, "%.15g", room->admit_per_s);
        HF_JSON_KEY(json, "admit_per_s");
        hf_json_raw(json, rate, (size_t)length);
        HF_JSON_KEY(json, "token_ttl_s");
        hf_json_int(json, room->token_ttl_s);
        HF_JSON_KEY(json, "max_active");
        hf_json_int(json, room->max_active);
        HF_JSON_KEY(json, "abandon_after_s");
        hf_json_seconds(json, room->abandon_after_ms);
        HF_JSON_KEY(json, "max_waiting");
        hf_json_int(json, room->max_waiting);
        if (room->opens_at_ms != 0) {
            HF_JSON_KEY(json, "opens_at");
            hf_json_time(json, room->opens_at_ms);
        }
    }
    hf_json_object_end(json);
}

void hf_rows_definition_write(hf_buffer_t *out, const hf_event_definition_t *definition) {
    hf_json_t json;
    hf_json_init(&json, out);
    hf_json_object_begin(&json);
    hf_json_key(&json, "id");
    hf_json_string(&json, definition->id);
    hf_json_key(&json, "name");
    hf_json_string(&json, definition->name);
    hf_json_key(&json, "currency");
    hf_json_string(&json, definition->currency);
    hf_json_key(&json, "hold_ttl_s");
    hf_json_seconds(&json, definition->hold_ttl_ms);
    hf_json_key(&json, "max_hold_s");
    hf_json_seconds(&json, definition->max_hold_ms);
    hf_json_key(&json, "max_seats_per_user");
    hf_json_int(&json, definition->max_seats_per_user);
    hf_json_key(&json, "max_seats_per_hold");
    hf_json_int(&json, definition->max_seats_per_hold);
    hf_json_key(&json, "sections");
    sections_write(&json, definition);
    hf_json_key(&json, "pools");
    pools_write(&json, definition);
    /* A room turned off (PATCH) keeps its settings, which its tickets still use. */
    if (definition->waiting_room.enabled || definition->waiting_room.admit_per_s > 0)
        room_write(&json, &definition->waiting_room);
    /* An event without a waitlist has no member (as every event stored before waitlists). */
    if (definition->waitlist.enabled) {
        hf_json_key(&json, "waitlist");
        hf_json_object_begin(&json);
        hf_json_key(&json, "enabled");
        hf_json_bool(&json, true);
        hf_json_key(&json, "offer_ttl_ms");
        hf_json_int(&json, definition->waitlist.offer_ttl_ms);
        hf_json_object_end(&json);
    }
    hf_json_object_end(&json);
}

/* Written directly rather than through hf_json: this runs for every hold and order. Seat and
 * pool ids are made of [A-Za-z0-9_.-] (checked at event creation), so nothing in them needs
 * escaping. */
void hf_rows_items_write(hf_buffer_t *out, const hf_mutation_items_t *items) {
    hf_buffer_append(out, "{\"seats\":[", 10);
    for (uint32_t i = 0; i < items->seat_count + items->pool_count; i++) {
        const hf_mutation_item_t *line = &items->lines[i];
        bool pool = i >= items->seat_count;
        if (i == items->seat_count) hf_buffer_append(out, "],\"pools\":{", 11);
        size_t id_length = strlen(line->id);
        hf_buffer_reserve(out, id_length + 14); /* comma, quotes, colon, 10 digits */
        char *to = out->data + out->length;
        if (i != 0 && i != items->seat_count) *to++ = ',';
        *to++ = '"';
        memcpy(to, line->id, id_length);
        to += id_length;
        *to++ = '"';
        if (pool) {
            *to++ = ':';
            to += hf_decimal_write(to, line->quantity);
        }
        out->length = (size_t)(to - out->data);
    }
    if (items->pool_count == 0) hf_buffer_append(out, "],\"pools\":{", 11);
    hf_buffer_append(out, "}", 1);
    if (items->allocation) {
        hf_buffer_append(out, ",\"allocation\":\"", 15);
        hf_buffer_append(out, items->allocation, strlen(items->allocation));
        hf_buffer_append(out, "\"", 1);
    }
    hf_buffer_append(out, "}", 1);
}

/* ---- reading ---- */

static int refuse(char *error, size_t error_size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(char *error, size_t error_size, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(error, error_size, format, arguments);
    va_end(arguments);
    return -1;
}

static bool id_copy(json_t *member, char *out) {
    const char *text = json_string_value(member);
    if (!text || strlen(text) != json_string_length(member) || !hf_core_id_valid(text))
        return false;
    memcpy(out, text, json_string_length(member) + 1);
    return true;
}

static bool text_copy(json_t *member, char *out, size_t size_max) {
    const char *text = json_string_value(member);
    size_t length = json_string_length(member);
    if (!text || length == 0 || length > size_max || strlen(text) != length) return false;
    memcpy(out, text, length + 1);
    return true;
}

/* Seconds as hf_json_seconds wrote them (whole milliseconds) back to milliseconds. */
static bool milliseconds_read(json_t *member, int64_t *ms) {
    if (!json_is_number(member)) return false;
    double seconds = json_number_value(member);
    if (!isfinite(seconds) || seconds <= 0 || seconds * 1000.0 > (double)HF_HOLD_TTL_MS_MAX)
        return false;
    *ms = llround(seconds * 1000.0);
    return *ms > 0;
}

static bool rows_read(json_t *rows, hf_section_definition_t *section) {
    size_t count = json_array_size(rows);
    if (!json_is_array(rows) || count == 0 || count > HF_SECTION_ROWS_MAX) return false;
    section->rows = calloc(count, sizeof *section->rows);
    if (!section->rows) abort();
    section->row_count = (uint32_t)count;
    for (uint32_t r = 0; r < section->row_count; r++) {
        json_t *row = json_array_get(rows, r);
        int64_t seats;
        if (!id_copy(json_object_get(row, "id"), section->rows[r].id) ||
            !hf_json_read_integer(json_object_get(row, "seats"), 1, HF_EVENT_SEATS_MAX, &seats))
            return false;
        section->rows[r].seats = (uint32_t)seats;
    }
    return true;
}

static bool sections_read(json_t *sections, hf_event_definition_t *definition) {
    size_t count = json_array_size(sections);
    if (!json_is_array(sections) || count > HF_EVENT_SECTIONS_MAX) return false;
    definition->sections = calloc(count + 1, sizeof *definition->sections);
    if (!definition->sections) abort();
    definition->section_count = (uint32_t)count;
    for (uint32_t s = 0; s < definition->section_count; s++) {
        json_t *section = json_array_get(sections, s);
        hf_section_definition_t *target = &definition->sections[s];
        if (!id_copy(json_object_get(section, "id"), target->id) ||
            !hf_json_read_integer(json_object_get(section, "price"), 0, HF_PRICE_MAX,
                                  &target->price) ||
            !rows_read(json_object_get(section, "rows"), target))
            return false;
    }
    return true;
}

static bool pools_read(json_t *pools, hf_event_definition_t *definition) {
    size_t count = json_array_size(pools);
    if (!json_is_array(pools) || count > HF_EVENT_POOLS_MAX) return false;
    definition->pools = calloc(count + 1, sizeof *definition->pools);
    if (!definition->pools) abort();
    definition->pool_count = (uint32_t)count;
    for (uint32_t p = 0; p < definition->pool_count; p++) {
        json_t *pool = json_array_get(pools, p);
        hf_pool_definition_t *target = &definition->pools[p];
        if (!id_copy(json_object_get(pool, "id"), target->id) ||
            !hf_json_read_integer(json_object_get(pool, "capacity"), 0, HF_POOL_CAPACITY_MAX,
                                  &target->capacity) ||
            !hf_json_read_integer(json_object_get(pool, "price"), 0, HF_PRICE_MAX, &target->price))
            return false;
    }
    return true;
}

/* A hexadecimal digit's value, or -1. */
static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* The pre-queue's members as room_write wrote them: both or neither. */
static bool opening_read(json_t *object, hf_room_definition_t *room) {
    json_t *opens_at = json_object_get(object, "opens_at_ms");
    json_t *seed = json_object_get(object, "shuffle_seed");
    if (!opens_at && !seed) return true;
    const char *text = json_string_value(seed);
    if (!hf_json_read_integer(opens_at, 1, INT64_MAX, &room->opens_at_ms) || !text ||
        strlen(text) != 2 * HF_QUEUE_SEED_SIZE)
        return false;
    for (size_t i = 0; i < HF_QUEUE_SEED_SIZE; i++) {
        int high = hex_digit(text[2 * i]), low = hex_digit(text[2 * i + 1]);
        if (high < 0 || low < 0) return false;
        room->shuffle_seed[i] = (uint8_t)(high * 16 + low);
    }
    return true;
}

/* A room's settings as room_write wrote them; absent: no room. */
static bool room_read(json_t *object, hf_room_definition_t *room) {
    memset(room, 0, sizeof *room);
    if (!object) return true;
    json_t *rate = json_object_get(object, "admit_per_s");
    int64_t ttl, active, waiting;
    json_t *enabled = json_object_get(object, "enabled");
    if (!json_is_boolean(enabled) || !json_is_number(rate) ||
        !hf_json_read_integer(json_object_get(object, "token_ttl_s"), 1, HF_QUEUE_TOKEN_TTL_S_MAX,
                              &ttl) ||
        !hf_json_read_integer(json_object_get(object, "max_active"), 0, UINT32_MAX, &active) ||
        !hf_json_read_integer(json_object_get(object, "max_waiting"), 1, HF_QUEUE_WAITING_LIMIT,
                              &waiting) ||
        !milliseconds_read(json_object_get(object, "abandon_after_s"), &room->abandon_after_ms))
        return false;
    *room = (hf_room_definition_t){true,
                                   json_number_value(rate),
                                   ttl,
                                   (uint32_t)active,
                                   room->abandon_after_ms,
                                   (uint32_t)waiting,
                                   0,
                                   {0}};
    if (!opening_read(object, room)) return false;
    /* The settings are checked as a room's that is on, whether it is or not. */
    bool valid = hf_core_room_valid(room);
    room->enabled = json_is_true(enabled);
    return valid;
}

/* The members of a definition, each checked; returns the first one at fault, or NULL. */
static const char *definition_members_read(json_t *object, hf_event_definition_t *definition) {
    int64_t per_user, per_hold;
    if (!id_copy(json_object_get(object, "id"), definition->id)) return "id";
    if (!text_copy(json_object_get(object, "name"), definition->name, HF_NAME_SIZE_MAX))
        return "name";
    if (!text_copy(json_object_get(object, "currency"), definition->currency, HF_CURRENCY_SIZE_MAX))
        return "currency";
    if (!milliseconds_read(json_object_get(object, "hold_ttl_s"), &definition->hold_ttl_ms))
        return "hold_ttl_s";
    if (!milliseconds_read(json_object_get(object, "max_hold_s"), &definition->max_hold_ms))
        return "max_hold_s";
    if (!hf_json_read_integer(json_object_get(object, "max_seats_per_user"), 0, UINT32_MAX,
                              &per_user))
        return "max_seats_per_user";
    if (!hf_json_read_integer(json_object_get(object, "max_seats_per_hold"), 1, HF_HOLD_ITEMS_MAX,
                              &per_hold))
        return "max_seats_per_hold";
    definition->max_seats_per_user = (uint32_t)per_user;
    definition->max_seats_per_hold = (uint32_t)per_hold;
    if (!sections_read(json_object_get(object, "sections"), definition)) return "sections";
    if (!pools_read(json_object_get(object, "pools"), definition)) return "pools";
    if (!room_read(json_object_get(object, "waiting_room"), &definition->waiting_room))
        return "waiting_room";
    json_t *waitlist = json_object_get(object, "waitlist");
    if (waitlist) {
        json_int_t ttl = json_integer_value(json_object_get(waitlist, "offer_ttl_ms"));
        if (!json_is_true(json_object_get(waitlist, "enabled")) || ttl <= 0) return "waitlist";
        definition->waitlist = (hf_waitlist_setting_t){true, (int64_t)ttl};
    }
    return NULL;
}

int hf_rows_definition_read(const char *text, hf_event_definition_t *definition, char *error,
                            size_t error_size) {
    memset(definition, 0, sizeof *definition);
    json_error_t parse_error;
    json_t *object = json_loads(text ? text : "", JSON_REJECT_DUPLICATES, &parse_error);
    if (!json_is_object(object)) {
        json_decref(object);
        return refuse(error, error_size, "its definition is not a JSON object (%s)",
                      object ? "another value" : parse_error.text);
    }
    const char *fault = definition_members_read(object, definition);
    json_decref(object);
    if (fault) return refuse(error, error_size, "its definition's %s is missing or wrong", fault);
    return 0;
}

void hf_rows_definition_free(hf_event_definition_t *definition) {
    for (uint32_t s = 0; definition->sections && s < definition->section_count; s++)
        free(definition->sections[s].rows);
    free(definition->sections);
    free(definition->pools);
    definition->sections = NULL;
    definition->pools = NULL;
}

static bool seats_read(json_t *seats, hf_rows_items_t *items, hf_hold_request_t *request) {
    if (!json_is_array(seats) || json_array_size(seats) > HF_HOLD_ITEMS_MAX) return false;
    request->seat_count = (uint32_t)json_array_size(seats);
    for (uint32_t i = 0; i < request->seat_count; i++) {
        json_t *seat = json_array_get(seats, i);
        if (!json_is_string(seat) || json_string_length(seat) > HF_SEAT_ID_SIZE_MAX) return false;
        items->seat_ids[i] = json_string_value(seat);
    }
    return true;
}

static bool pool_lines_read(json_t *pools, hf_rows_items_t *items, hf_hold_request_t *request) {
    if (!json_is_object(pools) || json_object_size(pools) > HF_HOLD_ITEMS_MAX) return false;
    const char *pool_id;
    json_t *quantity;
    int64_t value;
    json_object_foreach(pools, pool_id, quantity) {
        if (!hf_json_read_integer(quantity, 1, HF_POOL_CAPACITY_MAX, &value)) return false;
        items->pools[request->pool_count++] = (hf_pool_request_t){pool_id, (uint32_t)value};
    }
    return true;
}

int hf_rows_items_read(const char *text, hf_rows_items_t *items, hf_hold_request_t *request,
                       char *error, size_t error_size) {
    hf_rows_items_free(items);
    request->seat_ids = items->seat_ids;
    request->pools = items->pools;
    request->seat_count = request->pool_count = 0;
    json_error_t parse_error;
    json_t *object = json_loads(text ? text : "", JSON_REJECT_DUPLICATES, &parse_error);
    items->document = object;
    if (!json_is_object(object))
        return refuse(error, error_size, "its items are not a JSON object (%s)",
                      object ? "another value" : parse_error.text);
    if (!seats_read(json_object_get(object, "seats"), items, request))
        return refuse(error, error_size, "its items' seats are missing or wrong");
    if (!pool_lines_read(json_object_get(object, "pools"), items, request))
        return refuse(error, error_size, "its items' pools are missing or wrong");
    /* The allocation the hold or order took its inventory from (API.md section 14). */
    json_t *allocation = json_object_get(object, "allocation");
    request->allocation_id = json_string_value(allocation);
    if (allocation && (!request->allocation_id || !hf_core_id_valid(request->allocation_id)))
        return refuse(error, error_size, "its items' allocation is wrong");
    return 0;
}

void hf_rows_items_free(hf_rows_items_t *items) {
    json_decref(items->document);
    items->document = NULL;
}
