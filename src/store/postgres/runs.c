/* Multi-row statements of a batch (internal.h's runs): consecutive hold creations become one
 * INSERT ... SELECT FROM unnest(arrays), consecutive hold updates one UPDATE ... FROM unnest,
 * and a batch's history entries one INSERT: PostgreSQL then starts one statement per kind, not
 * one per row, which is what a batch of a few dozen holds spent most of its time on. Each
 * column travels as one text array literal ({"a","b",NULL}); the rows keep the batch's order
 * (WITH ORDINALITY), so identities (seq) and history numbers follow it as SQLite's do. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "store/backend.h"
#include "store/history.h"
#include "store/postgres/internal.h"
#include "store/records.h"
#include "store/rows.h"

/* ---- Status words: core/names.c's, as SQLite's store writes them ---- */

/* NULL for a number out of range: sent as SQL NULL, NOT NULL then fails the batch. */
const char *hf_pg_hold_word(int status) {
    return hf_record_word(hf_hold_status_name, status, HF_HOLD_EXPIRED);
}
const char *hf_pg_order_word(int status) {
    return hf_record_word(hf_order_status_name, status, HF_ORDER_EXCHANGED);
}

static const char *const RUN_NAMES[HF_PG_RUN_KINDS] = {
    [HF_PG_RUN_NONE] = NULL,
    [HF_PG_RUN_HOLD_INSERT] = "hf_holds_insert",
    [HF_PG_RUN_HOLD_UPDATE] = "hf_holds_update",
    [HF_PG_RUN_HISTORY] = "hf_history_append",
};

static const int RUN_COLUMNS[HF_PG_RUN_KINDS] = {
    [HF_PG_RUN_HOLD_INSERT] = 9, [HF_PG_RUN_HOLD_UPDATE] = 4, [HF_PG_RUN_HISTORY] = 4};

static const char *const RUN_SQL[HF_PG_RUN_KINDS] = {
    [HF_PG_RUN_HOLD_INSERT] =
        "INSERT INTO holds(id, event_id, user_id, status, items, total, created_at, expires_at,"
        " exchange_for)"
        " SELECT id, event_id, user_id, status, items, total, created_at, expires_at,"
        " exchange_for FROM"
        " unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[],"
        " $7::bigint[], $8::bigint[], $9::text[]) WITH ORDINALITY"
        " AS r(id, event_id, user_id, status, items, total, created_at, expires_at,"
        " exchange_for, n) ORDER BY n",
    /* A run holds each hold once (hf_pg_run_hold_update), so every row must change one. */
    [HF_PG_RUN_HOLD_UPDATE] =
        "WITH changed AS (UPDATE holds h SET status = r.status, expires_at = r.expires_at,"
        " order_id = COALESCE(r.order_id, h.order_id) FROM unnest($1::text[], $2::text[],"
        " $3::bigint[], $4::text[]) AS r(id, status, expires_at, order_id) WHERE h.id = r.id"
        " RETURNING 1) SELECT holdfast_changed_all(count(*), cardinality($1::text[]))"
        " FROM changed",
    /* Numbered after each event's last entry, in the batch's order. The last entry is read
     * once per event, before any row goes in: read per row, each read's backward index scan
     * stepped over every entry the statement had inserted so far (invisible to its snapshot),
     * and a batch of 16,000 expiries took 10 s, past the store's bound on silence. */
    [HF_PG_RUN_HISTORY] =
        "WITH r AS MATERIALIZED (SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[],"
        " $4::text[]) WITH ORDINALITY AS r(event_id, type, at, data, n)),"
        " base AS MATERIALIZED (SELECT e.event_id, COALESCE((SELECT MAX(h.seq) FROM history h"
        " WHERE h.event_id = e.event_id), 0) AS seq FROM (SELECT DISTINCT event_id FROM r) e)"
        " INSERT INTO history(event_id, seq, type, at, data)"
        " SELECT r.event_id, base.seq + row_number() OVER (PARTITION BY r.event_id"
        " ORDER BY r.n), r.type, r.at, r.data FROM r JOIN base ON base.event_id = r.event_id",
};

int hf_pg_runs_prepare(PGconn *connection, char *error, size_t error_size) {
    for (int kind = 1; kind < HF_PG_RUN_KINDS; kind++) {
        PGresult *result = PQprepare(connection, RUN_NAMES[kind], RUN_SQL[kind], 0, NULL);
        bool ok = PQresultStatus(result) == PGRES_COMMAND_OK;
        if (!ok)
            hf_store_error_write(error, error_size, "store: cannot prepare %s: %s", RUN_NAMES[kind],
                                 PQresultErrorMessage(result));
        PQclear(result);
        if (!ok) return -1;
    }
    return 0;
}

static void element_append(hf_buffer_t *array, const char *value) {
    if (array->length > 1) hf_buffer_append_char(array, ',');
    if (value == NULL) {
        hf_buffer_append(array, "NULL", 4);
        return;
    }
    hf_buffer_append_char(array, '"');
    for (const char *c = value; *c != '\0'; c++) {
        if (*c == '"' || *c == '\\') hf_buffer_append_char(array, '\\');
        hf_buffer_append_char(array, *c);
    }
    hf_buffer_append_char(array, '"');
}

static void integer_append(hf_buffer_t *array, int64_t value) {
    char text[24];
    snprintf(text, sizeof text, "%" PRId64, value);
    element_append(array, text);
}

static void run_begin(hf_pg_run_t *run, hf_pg_run_kind_t kind, int32_t tag) {
    run->kind = kind;
    run->rows = 0;
    run->tag = tag;
    for (int i = 0; i < RUN_COLUMNS[kind]; i++) {
        hf_buffer_reset(&run->arrays[i]);
        hf_buffer_append_char(&run->arrays[i], '{');
    }
    hf_map_free(&run->ids);
    hf_map_init(&run->ids);
}

bool hf_pg_run_flush(hf_pg_store_t *store, hf_pg_run_t *run) {
    if (run->kind == HF_PG_RUN_NONE) return true;
    hf_pg_run_kind_t kind = run->kind;
    run->kind = HF_PG_RUN_NONE;
    if (run->rows == 0) return true;
    const char *values[HF_PG_RUN_COLUMNS_MAX];
    for (int i = 0; i < RUN_COLUMNS[kind]; i++) {
        hf_buffer_append_char(&run->arrays[i], '}');
        hf_buffer_append_char(&run->arrays[i], '\0');
        values[i] = run->arrays[i].data;
    }
    return hf_pg_queue_named(store, RUN_NAMES[kind], RUN_COLUMNS[kind], values, run->tag);
}

/* Ends the open run when the next row belongs to another kind. */
static bool run_for(hf_pg_store_t *store, hf_pg_run_t *run, hf_pg_run_kind_t kind, int32_t tag) {
    if (run->kind == kind) return true;
    if (!hf_pg_run_flush(store, run)) return false;
    run_begin(run, kind, tag);
    return true;
}

bool hf_pg_run_hold_insert(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag) {
    hf_pg_run_t *run = &store->run;
    if (!run_for(store, run, HF_PG_RUN_HOLD_INSERT, tag)) return false;
    const hf_mutation_hold_create_t *h = &m->as.hold_create;
    hf_buffer_reset(&store->text);
    hf_rows_lines_write(&store->text, h->target, &h->items, &h->uses);
    hf_buffer_append_char(&store->text, '\0');
    element_append(&run->arrays[0], h->hold_id);
    element_append(&run->arrays[1], h->event_id);
    element_append(&run->arrays[2], h->user_id);
    element_append(&run->arrays[3], hf_pg_hold_word(h->status));
    element_append(&run->arrays[4], store->text.data);
    integer_append(&run->arrays[5], h->total);
    integer_append(&run->arrays[6], m->at_ms);
    integer_append(&run->arrays[7], h->expires_at_ms);
    element_append(&run->arrays[8], h->exchange_for);
    run->rows++;
    if (h->target != HF_TARGET_CALENDAR) return true;
    /* A calendar hold's typed uses follow its row: the run is written first. */
    return hf_pg_run_flush(store, run) &&
           hf_pg_calendar_uses_queue(store, h->hold_id, h->event_id, &h->uses, tag);
}

bool hf_pg_run_hold_update(hf_pg_store_t *store, const hf_mutation_t *m, int32_t tag) {
    hf_pg_run_t *run = &store->run;
    const hf_mutation_hold_update_t *h = &m->as.hold_update;
    size_t length = strlen(h->hold_id);
    /* An UPDATE ... FROM applies one source row per target row: a hold changed twice in a
     * batch starts a new run, so its changes apply in order. */
    uint32_t seen;
    if (run->kind == HF_PG_RUN_HOLD_UPDATE && hf_map_get(&run->ids, h->hold_id, length, &seen)) {
        if (!hf_pg_run_flush(store, run)) return false;
    }
    if (!run_for(store, run, HF_PG_RUN_HOLD_UPDATE, tag)) return false;
    hf_map_put(&run->ids, h->hold_id, length, 0);
    element_append(&run->arrays[0], h->hold_id);
    element_append(&run->arrays[1], hf_pg_hold_word(h->status));
    integer_append(&run->arrays[2], h->expires_at_ms);
    element_append(&run->arrays[3], h->order_id);
    run->rows++;
    return true;
}

void hf_pg_history_add(hf_pg_store_t *store, const hf_mutation_t *m) {
    const char *type, *event_id;
    if (!hf_history_entry_of(m, &type, &event_id)) return;
    hf_pg_run_t *run = &store->history_run;
    if (run->kind != HF_PG_RUN_HISTORY) run_begin(run, HF_PG_RUN_HISTORY, TAG_HISTORY);
    hf_buffer_reset(&store->history);
    hf_history_data_write(&store->history, m);
    hf_buffer_append_char(&store->history, '\0');
    element_append(&run->arrays[0], event_id);
    element_append(&run->arrays[1], type);
    integer_append(&run->arrays[2], m->at_ms);
    element_append(&run->arrays[3], store->history.data);
    run->rows++;
}

void hf_pg_runs_free(hf_pg_store_t *store) {
    hf_pg_run_t *runs[] = {&store->run, &store->history_run};
    for (size_t r = 0; r < 2; r++) {
        for (int i = 0; i < HF_PG_RUN_COLUMNS_MAX; i++) hf_buffer_free(&runs[r]->arrays[i]);
        hf_map_free(&runs[r]->ids);
        runs[r]->kind = HF_PG_RUN_NONE;
    }
}
