/* Allocations' JSON column (rows.h, API.md section 14): the seats and pools an allocation
 * holds as it stands, written from its record and read back at start. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json_read.h"
#include "lib/map.h"
#include "store/rows.h"

static void string_write(hf_buffer_t *out, const char *text) {
    hf_buffer_append_char(out, '"');
    hf_buffer_append(out, text, strlen(text));
    hf_buffer_append_char(out, '"');
}

/* Ids are [A-Za-z0-9_.-]: written without escapes. Every seat in the allocation's order, or
 * only the released ones. */
static void seats_write(hf_buffer_t *out, const hf_mutation_allocation_t *allocation,
                        bool released_only) {
    bool first = true;
    hf_buffer_append_char(out, '[');
    for (uint32_t i = 0; i < allocation->seat_count; i++) {
        if (released_only && !allocation->seats[i].released) continue;
        if (!first) hf_buffer_append_char(out, ',');
        string_write(out, allocation->seats[i].seat_id);
        first = false;
    }
    hf_buffer_append_char(out, ']');
}

void hf_rows_allocation_write(hf_buffer_t *out, const hf_mutation_allocation_t *allocation) {
    hf_buffer_append(out, "{\"seats\":", 9);
    seats_write(out, allocation, false);
    hf_buffer_append(out, ",\"released_seats\":", 18);
    seats_write(out, allocation, true);
    /* Seats that left, as [id, changes] (hf_mutation_allocation_left_t); absent when none, as
     * in rows written before it was kept. */
    if (allocation->left_count) {
        hf_buffer_append(out, ",\"left_seats\":[", 15);
        for (uint32_t i = 0; i < allocation->left_count; i++) {
            if (i) hf_buffer_append_char(out, ',');
            hf_buffer_append_char(out, '[');
            string_write(out, allocation->left[i].seat_id);
            hf_buffer_printf(out, ",%u]", allocation->left[i].changes);
        }
        hf_buffer_append_char(out, ']');
    }
    hf_buffer_append(out, ",\"pools\":{", 10);
    for (uint32_t i = 0; i < allocation->pool_count; i++) {
        const hf_mutation_allocation_pool_t *pool = &allocation->pools[i];
        if (i) hf_buffer_append_char(out, ',');
        string_write(out, pool->pool_id);
        hf_buffer_printf(out, ":{\"units\":%lld,\"release_pending\":%lld}", (long long)pool->units,
                         (long long)pool->release_pending);
    }
    hf_buffer_append(out, "}}", 2);
}

static int refuse(char *error, size_t error_size, const char *what) {
    snprintf(error, error_size, "its items' %s are missing or wrong", what);
    return -1;
}

/* The array's seat ids, none released yet. */
static bool seats_read(json_t *array, hf_rows_allocation_t *parsed,
                       hf_stored_allocation_t *stored) {
    if (!json_is_array(array) || json_array_size(array) > HF_ALLOCATION_SEATS_MAX) return false;
    for (size_t i = 0; i < json_array_size(array); i++) {
        json_t *seat = json_array_get(array, i);
        if (!json_is_string(seat) || json_string_length(seat) > HF_SEAT_ID_SIZE_MAX) return false;
        parsed->seats[stored->seat_count++] = (hf_stored_allocation_seat_t){json_string_value(seat),
                                                                            false};
    }
    return true;
}

/* Flags the released ones, each of which must be among the seats. */
static bool released_read(json_t *array, hf_rows_allocation_t *parsed,
                          const hf_stored_allocation_t *stored) {
    if (!json_is_array(array)) return false;
    hf_map_t index;
    hf_map_init(&index);
    for (uint32_t i = 0; i < stored->seat_count; i++)
        hf_map_put(&index, parsed->seats[i].seat_id, strlen(parsed->seats[i].seat_id), i);
    bool whole = true;
    for (size_t i = 0; whole && i < json_array_size(array); i++) {
        const char *seat_id = json_string_value(json_array_get(array, i));
        uint32_t at;
        whole = seat_id && hf_map_get(&index, seat_id, strlen(seat_id), &at);
        if (whole) parsed->seats[at].released = true;
    }
    hf_map_free(&index);
    return whole;
}

/* [[id, changes], ...]: at most the allocation's seats at creation, each 1 or 2. */
static bool left_read(json_t *array, hf_rows_allocation_t *parsed, hf_stored_allocation_t *stored) {
    if (!array) return true;
    if (!json_is_array(array) || json_array_size(array) > HF_ALLOCATION_SEATS_MAX) return false;
    parsed->left = malloc((json_array_size(array) + 1) * sizeof *parsed->left);
    if (!parsed->left) abort();
    stored->left = parsed->left;
    for (size_t i = 0; i < json_array_size(array); i++) {
        json_t *pair = json_array_get(array, i), *seat = json_array_get(pair, 0);
        int64_t changes;
        if (!json_is_array(pair) || json_array_size(pair) != 2 || !json_is_string(seat) ||
            json_string_length(seat) > HF_SEAT_ID_SIZE_MAX ||
            !hf_json_read_integer(json_array_get(pair, 1), 1, 2, &changes))
            return false;
        parsed->left[stored->left_count++] = (hf_mutation_allocation_left_t){
            json_string_value(seat), (uint32_t)changes};
    }
    return true;
}

static bool pools_read(json_t *pools, hf_rows_allocation_t *parsed,
                       hf_stored_allocation_t *stored) {
    if (!json_is_object(pools) || json_object_size(pools) > HF_HOLD_ITEMS_MAX) return false;
    const char *pool_id;
    json_t *line;
    json_object_foreach(pools, pool_id, line) {
        int64_t units, pending;
        if (!json_is_object(line) ||
            !hf_json_read_integer(json_object_get(line, "units"), 0, HF_POOL_CAPACITY_MAX,
                                  &units) ||
            !hf_json_read_integer(json_object_get(line, "release_pending"), 0, units, &pending))
            return false;
        parsed->pools[stored->pool_count++] = (hf_stored_allocation_pool_t){pool_id, units,
                                                                            pending};
    }
    return true;
}

int hf_rows_allocation_read(const char *text, hf_rows_allocation_t *parsed,
                            hf_stored_allocation_t *stored, char *error, size_t error_size) {
    hf_rows_allocation_free(parsed);
    stored->seat_count = stored->pool_count = stored->left_count = 0;
    stored->left = NULL;
    json_error_t parse_error;
    json_t *object = json_loads(text ? text : "", JSON_REJECT_DUPLICATES, &parse_error);
    parsed->document = object;
    if (!json_is_object(object)) {
        snprintf(error, error_size, "its items are not a JSON object (%s)",
                 object ? "another value" : parse_error.text);
        return -1;
    }
    json_t *seats = json_object_get(object, "seats"),
           *released = json_object_get(object, "released_seats");
    size_t count = json_array_size(seats) + json_array_size(released);
    parsed->seats = malloc((count ? count : 1) * sizeof *parsed->seats);
    if (!parsed->seats) abort();
    stored->seats = parsed->seats;
    stored->pools = parsed->pools;
    if (!seats_read(seats, parsed, stored) || !released_read(released, parsed, stored) ||
        !left_read(json_object_get(object, "left_seats"), parsed, stored))
        return refuse(error, error_size, "seats");
    if (!pools_read(json_object_get(object, "pools"), parsed, stored))
        return refuse(error, error_size, "pools");
    return 0;
}

void hf_rows_allocation_free(hf_rows_allocation_t *parsed) {
    json_decref(parsed->document);
    parsed->document = NULL;
    free(parsed->seats);
    parsed->seats = NULL;
    free(parsed->left);
    parsed->left = NULL;
}
