/* Calendars in PostgreSQL (API.md section 12), as SQLite's store writes them
 * (store/sqlite/calendars.c): a calendar's settings, its resources one row each, its sales
 * switch, and the typed rows of its holds' and orders' uses. Rows of postgres.c's table of
 * writes. */
#include <inttypes.h>
#include <stdio.h>

#include "core/core.h"
#include "store/backend.h"
#include "store/postgres/internal.h"
#include "store/rows.h"

static const char CALENDAR_INSERT[] =
    "INSERT INTO calendars(id, definition, created_at) VALUES($1, $2, $3::bigint)";
static const char CALENDAR_SALES[] =
    "WITH changed AS (UPDATE calendars SET sales_open = $2::integer WHERE id = $1 RETURNING 1)"
    " SELECT holdfast_changed(count(*)) FROM changed";
static const char RESOURCE_INSERT[] =
    "INSERT INTO calendar_resources(calendar_id, idx, id, definition)"
    " VALUES($1, $2::bigint, $3, $4)";
static const char USE_INSERT[] =
    "INSERT INTO calendar_uses(owner_id, calendar_id, resource, from_step, to_step, quantity)"
    " VALUES($1, $2, $3, $4::bigint, $5::bigint, $6::bigint)";

enum { CALENDAR_INSERT_AT, CALENDAR_SALES_AT, RESOURCE_INSERT_AT, USE_INSERT_AT, STATEMENTS };
static const char *const NAMES[STATEMENTS] = {"hf_calendar_insert", "hf_calendar_sales",
                                              "hf_calendar_resource_insert",
                                              "hf_calendar_use_insert"};

int hf_pg_calendars_prepare(PGconn *connection, char *error, size_t error_size) {
    const char *const sql[STATEMENTS] = {CALENDAR_INSERT, CALENDAR_SALES, RESOURCE_INSERT,
                                         USE_INSERT};
    for (int i = 0; i < STATEMENTS; i++) {
        PGresult *result = PQprepare(connection, NAMES[i], sql[i], 0, NULL);
        bool ok = PQresultStatus(result) == PGRES_COMMAND_OK;
        if (!ok)
            hf_store_error_write(error, error_size, "store: cannot prepare %s: %s", NAMES[i],
                                 PQresultErrorMessage(result));
        PQclear(result);
        if (!ok) return -1;
    }
    return 0;
}

typedef char number_t[24];

static const char *number(number_t out, int64_t value) {
    snprintf(out, sizeof(number_t), "%" PRId64, value);
    return out;
}

/* Each resource's row. The queue copies its values, so the writer's text is reused. */
static bool resources_queue(hf_pg_store_t *store, const char *calendar_id,
                            const hf_resource_definition_t *resources, uint32_t first,
                            uint32_t count, int32_t tag) {
    for (uint32_t r = 0; r < count; r++) {
        number_t index;
        hf_buffer_reset(&store->text);
        hf_rows_resource_write(&store->text, &resources[r]);
        hf_buffer_append_char(&store->text, '\0');
        const char *values[] = {calendar_id, number(index, (int64_t)first + r), resources[r].id,
                                store->text.data};
        if (!hf_pg_queue_named(store, NAMES[RESOURCE_INSERT_AT], 4, values, tag)) return false;
    }
    return true;
}

bool hf_pg_calendar_create_queue(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag) {
    const hf_mutation_calendar_create_t *calendar = &m->as.calendar_create;
    number_t at;
    hf_buffer_reset(&store->text);
    hf_rows_calendar_write(&store->text, calendar->definition);
    hf_buffer_append_char(&store->text, '\0');
    const char *values[] = {calendar->calendar_id, store->text.data, number(at, m->at_ms)};
    if (!hf_pg_queue_named(store, NAMES[CALENDAR_INSERT_AT], 3, values, tag)) return false;
    return resources_queue(store, calendar->calendar_id, calendar->definition->resources, 0,
                           calendar->definition->resource_count, tag);
}

bool hf_pg_calendar_resources_queue(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag) {
    const hf_mutation_calendar_resources_t *added = &m->as.calendar_resources;
    return resources_queue(store, added->calendar_id, added->resources, added->first, added->count,
                           tag);
}

bool hf_pg_calendar_sales_queue(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag) {
    const hf_mutation_calendar_sales_t *sales = &m->as.calendar_sales;
    const char *values[] = {sales->calendar_id, sales->sales_open ? "1" : "0"};
    return hf_pg_queue_named(store, NAMES[CALENDAR_SALES_AT], 2, values, tag);
}

bool hf_pg_calendar_uses_queue(hf_pg_store_t *store, const char *owner_id, const char *calendar_id,
                               const hf_mutation_uses_t *uses, int32_t tag) {
    for (uint32_t i = 0; i < uses->count; i++) {
        const hf_mutation_use_t *use = &uses->lines[i];
        number_t from, to, quantity;
        const char *values[] = {owner_id,
                                calendar_id,
                                use->resource_id,
                                number(from, use->from),
                                number(to, use->to),
                                number(quantity, use->quantity)};
        if (!hf_pg_queue_named(store, NAMES[USE_INSERT_AT], 6, values, tag)) return false;
    }
    return true;
}
