/* Calendars' rows in SQLite (internal.h, schema.c): a calendar's settings, its resources one
 * row each, its sales switch, and the typed rows of its holds' and orders' uses. */
#include <sqlite3.h>

#include "store/rows.h"
#include "store/sqlite/internal.h"

/* Steps a bound statement to its end and makes it ready for its next use. */
static int statement_run(sqlite3_stmt *statement) {
    int rc = sqlite3_step(statement);
    sqlite3_reset(statement);
    sqlite3_clear_bindings(statement);
    return rc;
}

/* The batch outlives the statement's use: its strings are bound without a copy, and so is the
 * writer's buffer, which stays put until the statement has run. */
static void bind_text(sqlite3_stmt *statement, int index, const char *text) {
    sqlite3_bind_text(statement, index, text, -1, SQLITE_STATIC);
}

static int resources_insert(hf_sqlite_store_t *store, const char *calendar_id,
                            const hf_resource_definition_t *resources, uint32_t first,
                            uint32_t count) {
    sqlite3_stmt *statement = store->statements[STATEMENT_CALENDAR_RESOURCE_INSERT];
    for (uint32_t r = 0; r < count; r++) {
        hf_buffer_reset(&store->text);
        hf_rows_resource_write(&store->text, &resources[r]);
        bind_text(statement, 1, calendar_id);
        sqlite3_bind_int64(statement, 2, (int64_t)first + r);
        bind_text(statement, 3, resources[r].id);
        bind_text(statement, 4, store->text.data);
        int rc = statement_run(statement);
        if (rc != SQLITE_DONE) return rc;
    }
    return SQLITE_DONE;
}

int hf_sqlite_calendar_create(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    const hf_mutation_calendar_create_t *calendar = &mutation->as.calendar_create;
    sqlite3_stmt *statement = store->statements[STATEMENT_CALENDAR_INSERT];
    hf_buffer_reset(&store->text);
    hf_rows_calendar_write(&store->text, calendar->definition);
    bind_text(statement, 1, calendar->calendar_id);
    bind_text(statement, 2, store->text.data);
    sqlite3_bind_int64(statement, 3, mutation->at_ms);
    int rc = statement_run(statement);
    if (rc != SQLITE_DONE) return rc;
    return resources_insert(store, calendar->calendar_id, calendar->definition->resources, 0,
                            calendar->definition->resource_count);
}

int hf_sqlite_calendar_resources(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    const hf_mutation_calendar_resources_t *added = &mutation->as.calendar_resources;
    return resources_insert(store, added->calendar_id, added->resources, added->first,
                            added->count);
}

int hf_sqlite_calendar_sales(hf_sqlite_store_t *store, const hf_mutation_t *mutation) {
    const hf_mutation_calendar_sales_t *sales = &mutation->as.calendar_sales;
    sqlite3_stmt *statement = store->statements[STATEMENT_CALENDAR_SALES];
    bind_text(statement, 1, sales->calendar_id);
    sqlite3_bind_int(statement, 2, sales->sales_open ? 1 : 0);
    return statement_run(statement);
}

int hf_sqlite_calendar_uses(hf_sqlite_store_t *store, const char *owner_id, const char *calendar_id,
                            const hf_mutation_uses_t *uses) {
    sqlite3_stmt *statement = store->statements[STATEMENT_CALENDAR_USE_INSERT];
    for (uint32_t i = 0; i < uses->count; i++) {
        const hf_mutation_use_t *use = &uses->lines[i];
        bind_text(statement, 1, owner_id);
        bind_text(statement, 2, calendar_id);
        bind_text(statement, 3, use->resource_id);
        sqlite3_bind_int64(statement, 4, use->from);
        sqlite3_bind_int64(statement, 5, use->to);
        sqlite3_bind_int64(statement, 6, use->quantity);
        int rc = statement_run(statement);
        if (rc != SQLITE_DONE) return rc;
    }
    return SQLITE_DONE;
}
