/* The units' leases (backend.h, API.md section 11) on PostgreSQL: one row per unit in leases,
 * with its owner, its fencing epoch and its end by the database's clock (now(), never a
 * node's). The lease methods run on a connection of their own under lease_mutex; the writer
 * reads this node's epochs from the same map (under the mutex) to fence each batch: the
 * batch's transaction calls holdfast_fence (postgres.c's schema) on the units it writes, which
 * raises 'lost lease' unless every one is this node's, at the epoch the node believes, not
 * expired, and keeps those rows locked FOR SHARE until the batch commits: a takeover's UPDATE
 * of the row waits for a batch in flight, and every batch after it fails. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "store/backend.h"
#include "store/postgres/internal.h"

/* A batch writes few units (one or two events); one with more than this many is refused, as
 * fencing it would need a larger statement than any batch the engine makes. */
#define FENCE_UNITS_MAX 64
/* The lease's length: renewed every second, it survives four missed renewals. */
#define LEASE_INTERVAL "interval '5 seconds'"

void hf_pg_array_write(hf_buffer_t *out, const char *const *items, size_t count) {
    hf_buffer_append_char(out, '{');
    for (size_t i = 0; i < count; i++) {
        if (i > 0) hf_buffer_append_char(out, ',');
        hf_buffer_append_char(out, '"');
        for (const char *c = items[i]; *c != '\0'; c++) {
            if (*c == '"' || *c == '\\') hf_buffer_append_char(out, '\\');
            hf_buffer_append_char(out, *c);
        }
        hf_buffer_append_char(out, '"');
    }
    hf_buffer_append_char(out, '}');
}

/* The epoch this node believes it holds unit at; 0 when it holds none (the fence then fails,
 * since epochs start at 1). Under lease_mutex. */
static uint64_t epoch_of(hf_pg_store_t *store, const char *unit) {
    uint32_t slot;
    if (!hf_map_get(&store->epochs, unit, strlen(unit), &slot)) return 0;
    return store->epoch_values[slot];
}

static void epoch_set(hf_pg_store_t *store, const char *unit, uint64_t epoch) {
    uint32_t slot;
    if (hf_map_get(&store->epochs, unit, strlen(unit), &slot)) {
        store->epoch_values[slot] = epoch;
        return;
    }
    if (store->epoch_count == store->epoch_capacity) {
        store->epoch_capacity = store->epoch_capacity ? 2 * store->epoch_capacity : 16;
        store->epoch_values = realloc(store->epoch_values,
                                      store->epoch_capacity * sizeof *store->epoch_values);
        store->epoch_units = realloc(store->epoch_units,
                                     store->epoch_capacity * sizeof *store->epoch_units);
        if (store->epoch_values == NULL || store->epoch_units == NULL) abort();
    }
    store->epoch_values[store->epoch_count] = epoch;
    store->epoch_units[store->epoch_count] = strdup(unit);
    if (store->epoch_units[store->epoch_count] == NULL) abort();
    hf_map_put(&store->epochs, unit, strlen(unit), (uint32_t)store->epoch_count++);
}

int hf_pg_fence_write(hf_pg_store_t *store, const hf_batch_t *batch, char *error,
                      size_t error_size) {
    pthread_mutex_lock(&store->lease_mutex);
    bool fencing = store->node_id != NULL;
    pthread_mutex_unlock(&store->lease_mutex);
    if (!fencing) return 0;
    const char *units[FENCE_UNITS_MAX];
    size_t count = hf_store_batch_units(batch, units, FENCE_UNITS_MAX);
    if (count == 0) return 0;
    if (count > FENCE_UNITS_MAX) {
        hf_store_error_write(error, error_size, "store: a batch writes %zu units, more than %d",
                             count, FENCE_UNITS_MAX);
        return -1;
    }
    char epochs[FENCE_UNITS_MAX][24];
    const char *epoch_texts[FENCE_UNITS_MAX];
    hf_buffer_reset(&store->fence);
    pthread_mutex_lock(&store->lease_mutex);
    for (size_t i = 0; i < count; i++) {
        snprintf(epochs[i], sizeof epochs[i], "%" PRIu64, epoch_of(store, units[i]));
        epoch_texts[i] = epochs[i];
    }
    hf_pg_array_write(&store->fence, units, count);
    hf_buffer_append_char(&store->fence, '\0');
    size_t epochs_at = store->fence.length;
    hf_pg_array_write(&store->fence, epoch_texts, count);
    hf_buffer_append_char(&store->fence, '\0');
    const char *values[] = {store->fence.data, store->node_id, store->fence.data + epochs_at};
    bool sent = hf_pg_queue_fence(store, values);
    pthread_mutex_unlock(&store->lease_mutex);
    if (!sent) {
        hf_store_error_write(error, error_size, "store: cannot send the batch's fence");
        return -1;
    }
    return 0;
}

/* The lease connection, connected on first use and again after it broke. Under lease_mutex. */
static int leases_open(hf_pg_store_t *store, char *error, size_t error_size) {
    if (store->leases != NULL && PQstatus(store->leases) == CONNECTION_OK) return 0;
    PQfinish(store->leases);
    store->leases = hf_pg_connect(store->url, error, error_size);
    return store->leases != NULL ? 0 : -1;
}

void hf_pg_leases_close(hf_pg_store_t *store) {
    PQfinish(store->leases);
    store->leases = NULL;
    free(store->node_id);
    store->node_id = NULL;
    hf_map_free(&store->epochs);
    for (size_t i = 0; i < store->epoch_count; i++) free(store->epoch_units[i]);
    free(store->epoch_units);
    free(store->epoch_values);
    store->epoch_values = NULL;
    store->epoch_units = NULL;
    store->epoch_count = 0;
    hf_buffer_free(&store->held);
}

static void node_set(hf_pg_store_t *store, const char *node_id) {
    if (store->node_id != NULL && strcmp(store->node_id, node_id) == 0) return;
    free(store->node_id);
    store->node_id = strdup(node_id);
    if (store->node_id == NULL) abort();
}

/* Ends the session of a lapsed owner that is still connected (a paused process): its open
 * transaction, if any, is rolled back and its fence locks go, before the unit moves. */
static const char TERMINATE_LAPSED[] =
    "SELECT pg_terminate_backend(backend_pid) FROM leases WHERE unit = $1 AND node_id <> $2"
    " AND expires_at <= now() AND backend_pid IS NOT NULL AND backend_pid <> pg_backend_pid()"
    " AND EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = leases.backend_pid)";

/* Inserts the lease, or takes it when it lapsed (epoch + 1), or keeps this node's own: one
 * statement, so two nodes racing for a unit are ordered by the row's lock. */
static const char ACQUIRE[] =
    "INSERT INTO leases(unit, node_id, epoch, expires_at, backend_pid)"
    " VALUES($1, $2, 1, now() + " LEASE_INTERVAL ", $3::integer)"
    " ON CONFLICT(unit) DO UPDATE SET node_id = excluded.node_id,"
    "  epoch = CASE WHEN leases.node_id = excluded.node_id AND leases.expires_at > now()"
    "    THEN leases.epoch ELSE leases.epoch + 1 END,"
    "  expires_at = excluded.expires_at, backend_pid = excluded.backend_pid"
    " WHERE leases.expires_at <= now() OR leases.node_id = excluded.node_id"
    " RETURNING epoch";

int hf_pg_lease_acquire(void *instance, const char *node_id, const char *unit, uint64_t *epoch,
                        bool *acquired, char *error, size_t error_size) {
    hf_pg_store_t *store = instance;
    *acquired = false;
    *epoch = 0;
    pthread_mutex_lock(&store->lease_mutex);
    node_set(store, node_id);
    int rc = leases_open(store, error, error_size);
    PGresult *result = NULL;
    if (rc == 0) {
        const char *pair[] = {unit, node_id};
        result = hf_pg_exec(&store->leases, TERMINATE_LAPSED, 2, pair, error, error_size);
        rc = result != NULL ? 0 : -1;
        PQclear(result);
    }
    if (rc == 0) {
        char pid[16];
        snprintf(pid, sizeof pid, "%d", atomic_load(&store->writer_pid));
        const char *values[] = {unit, node_id, pid};
        result = hf_pg_exec(&store->leases, ACQUIRE, 3, values, error, error_size);
        rc = result != NULL ? 0 : -1;
    }
    if (rc == 0 && PQntuples(result) == 1) {
        *epoch = strtoull(PQgetvalue(result, 0, 0), NULL, 10);
        *acquired = true;
        epoch_set(store, unit, *epoch);
    }
    PQclear(result);
    pthread_mutex_unlock(&store->lease_mutex);
    return rc;
}

/* Every live lease this process acquired is extended (not the leases an earlier process of the
 * same node id left: they lapse, and whoever serves those units takes them); the ones
 * returned are what it still holds. */
static const char RENEW[] = "UPDATE leases SET expires_at = now() + " LEASE_INTERVAL
                            ", backend_pid = $2::integer"
                            " WHERE node_id = $1 AND expires_at > now() AND unit = ANY($3::text[])"
                            " RETURNING unit, epoch";
static const char HEARTBEAT[] =
    "INSERT INTO nodes(node_id, address, heartbeat_at) VALUES($1, $2, now())"
    " ON CONFLICT(node_id) DO UPDATE SET address = excluded.address, heartbeat_at = now()";

/* The array literal of the units this process holds (epoch not 0), into store->held. */
static void held_units_write(hf_pg_store_t *store) {
    hf_buffer_reset(&store->held);
    hf_buffer_append_char(&store->held, '{');
    bool first = true;
    for (size_t i = 0; i < store->epoch_count; i++) {
        if (store->epoch_values[i] == 0) continue;
        const char *unit = store->epoch_units[i];
        if (!first) hf_buffer_append_char(&store->held, ',');
        first = false;
        /* One unit's literal without its braces. */
        size_t start = store->held.length;
        hf_pg_array_write(&store->held, &unit, 1);
        memmove(store->held.data + start, store->held.data + start + 1,
                store->held.length - start - 2);
        store->held.length -= 2;
    }
    hf_buffer_append_char(&store->held, '}');
    hf_buffer_append_char(&store->held, '\0');
}

/* Forgets every epoch, then keeps those the database still gives this node. */
static size_t epochs_keep(hf_pg_store_t *store, PGresult *result) {
    for (size_t i = 0; i < store->epoch_count; i++) store->epoch_values[i] = 0;
    int rows = PQntuples(result);
    for (int row = 0; row < rows; row++) {
        uint64_t epoch = strtoull(PQgetvalue(result, row, 1), NULL, 10);
        const char *unit = PQgetvalue(result, row, 0);
        uint32_t slot;
        /* Only a unit this process acquired is written by it; another's is left to lapse. */
        if (hf_map_get(&store->epochs, unit, strlen(unit), &slot) && epoch != 0)
            store->epoch_values[slot] = epoch;
    }
    return (size_t)rows;
}

int hf_pg_lease_renew(void *instance, const char *node_id, const char *address, size_t *renewed,
                      char *error, size_t error_size) {
    hf_pg_store_t *store = instance;
    *renewed = 0;
    pthread_mutex_lock(&store->lease_mutex);
    node_set(store, node_id);
    int rc = leases_open(store, error, error_size);
    if (rc == 0) {
        const char *values[] = {node_id, address};
        PGresult *result = hf_pg_exec(&store->leases, HEARTBEAT, 2, values, error, error_size);
        rc = result != NULL ? 0 : -1;
        PQclear(result);
    }
    if (rc == 0) {
        char pid[16];
        snprintf(pid, sizeof pid, "%d", atomic_load(&store->writer_pid));
        held_units_write(store);
        const char *values[] = {node_id, pid, store->held.data};
        PGresult *result = hf_pg_exec(&store->leases, RENEW, 3, values, error, error_size);
        rc = result != NULL ? 0 : -1;
        if (result != NULL) *renewed = epochs_keep(store, result);
        PQclear(result);
    }
    pthread_mutex_unlock(&store->lease_mutex);
    return rc;
}

int hf_pg_lease_release(void *instance, const char *node_id, char *error, size_t error_size) {
    hf_pg_store_t *store = instance;
    pthread_mutex_lock(&store->lease_mutex);
    int rc = leases_open(store, error, error_size);
    if (rc == 0) {
        const char *values[] = {node_id};
        PGresult *result = hf_pg_exec(&store->leases,
                                      "UPDATE leases SET expires_at = now(), backend_pid = NULL"
                                      " WHERE node_id = $1 AND expires_at > now()",
                                      1, values, error, error_size);
        rc = result != NULL ? 0 : -1;
        PQclear(result);
    }
    for (size_t i = 0; i < store->epoch_count; i++) store->epoch_values[i] = 0;
    pthread_mutex_unlock(&store->lease_mutex);
    return rc;
}

static int nodes_list(hf_pg_store_t *store, hf_store_node_fn node, void *context, char *error,
                      size_t error_size) {
    PGresult *result = hf_pg_exec(
        &store->leases,
        "SELECT node_id, address, (extract(epoch FROM heartbeat_at) * 1000)::bigint"
        " FROM nodes ORDER BY node_id",
        0, NULL, error, error_size);
    if (result == NULL) return -1;
    int rc = 0;
    for (int row = 0; rc == 0 && row < PQntuples(result); row++) {
        hf_stored_node_t item = {PQgetvalue(result, row, 0),
                                 PQgetisnull(result, row, 1) ? NULL : PQgetvalue(result, row, 1),
                                 strtoll(PQgetvalue(result, row, 2), NULL, 10)};
        rc = node(context, &item);
    }
    PQclear(result);
    return rc;
}

int hf_pg_lease_list(void *instance, hf_store_node_fn node, hf_store_lease_fn lease, void *context,
                     char *error, size_t error_size) {
    hf_pg_store_t *store = instance;
    pthread_mutex_lock(&store->lease_mutex);
    int rc = leases_open(store, error, error_size);
    if (rc == 0 && node != NULL) rc = nodes_list(store, node, context, error, error_size);
    PGresult *result = NULL;
    if (rc == 0 && lease != NULL) {
        result = hf_pg_exec(&store->leases,
                            "SELECT unit, node_id, epoch,"
                            " (extract(epoch FROM expires_at) * 1000)::bigint,"
                            " expires_at > now() FROM leases"
                            " LEFT JOIN events ON events.id = leases.unit"
                            " ORDER BY events.seq NULLS LAST, unit",
                            0, NULL, error, error_size);
        rc = result != NULL ? 0 : -1;
    }
    for (int row = 0; rc == 0 && result != NULL && row < PQntuples(result); row++) {
        hf_stored_lease_t item = {PQgetvalue(result, row, 0), PQgetvalue(result, row, 1),
                                  strtoull(PQgetvalue(result, row, 2), NULL, 10),
                                  strtoll(PQgetvalue(result, row, 3), NULL, 10),
                                  PQgetvalue(result, row, 4)[0] == 't'};
        rc = lease(context, &item);
    }
    PQclear(result);
    pthread_mutex_unlock(&store->lease_mutex);
    return rc;
}

int hf_pg_unit_load(void *instance, const char *unit, const hf_store_loader_t *loader, char *error,
                    size_t error_size) {
    hf_pg_store_t *store = instance;
    pthread_mutex_lock(&store->lease_mutex);
    int rc = leases_open(store, error, error_size);
    hf_pg_source_t source = {&store->leases, NULL};
    if (rc == 0) rc = hf_pg_tables_load(&source, unit, loader, error, error_size);
    pthread_mutex_unlock(&store->lease_mutex);
    return rc;
}

int hf_pg_unit_fetch(void *instance, const char *unit, const hf_store_loader_t *loader, void **rows,
                     char *error, size_t error_size) {
    hf_pg_store_t *store = instance;
    hf_pg_kept_t *kept = calloc(1, sizeof *kept);
    if (kept == NULL) abort();
    pthread_mutex_lock(&store->lease_mutex);
    int rc = leases_open(store, error, error_size);
    hf_pg_source_t source = {&store->leases, kept};
    if (rc == 0) rc = hf_pg_tables_load(&source, unit, loader, error, error_size);
    pthread_mutex_unlock(&store->lease_mutex);
    if (rc != 0) {
        hf_pg_kept_free(kept);
        kept = NULL;
    }
    *rows = kept;
    return rc;
}

int hf_pg_unit_deliver(void *instance, void *rows, const hf_store_loader_t *loader, char *error,
                       size_t error_size) {
    (void)instance; /* no connection: the rows were read by the fetch */
    hf_pg_kept_t *kept = rows;
    hf_pg_source_t source = {NULL, kept};
    int rc = hf_pg_tables_load(&source, "", loader, error, error_size);
    hf_pg_kept_free(kept);
    return rc;
}

void hf_pg_unit_rows_free(void *rows) { hf_pg_kept_free(rows); }

/* Where each kind of id is stored, and the column that names its unit. */
static const struct {
    const char *kind, *sql;
} UNIT_OF[] = {
    {"hold", "SELECT event_id FROM holds WHERE id = $1"},
    {"order", "SELECT event_id FROM orders WHERE id = $1"},
    /* A refund of a hold no event has is a record of no unit; a cancelled order's is its
     * event's, with or without a hold. */
    {"refund", "SELECT COALESCE((SELECT event_id FROM holds WHERE holds.id ="
               " refunds.reservation_id), (SELECT event_id FROM orders WHERE orders.id ="
               " refunds.order_id), '" HF_STORE_UNIT_NONE "') FROM refunds"
               " WHERE refunds.id = $1"},
    {"ticket", "SELECT event_id FROM tickets WHERE id = $1"},
    {"ride", "SELECT fleet_id FROM rides WHERE id = $1"},
};

int hf_pg_unit_find(void *instance, const char *kind, const char *id, char *unit, size_t unit_size,
                    bool *found, char *error, size_t error_size) {
    hf_pg_store_t *store = instance;
    *found = false;
    const char *sql = NULL;
    for (size_t i = 0; i < sizeof UNIT_OF / sizeof UNIT_OF[0]; i++)
        if (strcmp(UNIT_OF[i].kind, kind) == 0) sql = UNIT_OF[i].sql;
    if (sql == NULL) {
        hf_store_error_write(error, error_size, "store: ids of kind \"%s\" have no unit", kind);
        return -1;
    }
    pthread_mutex_lock(&store->lease_mutex);
    int rc = leases_open(store, error, error_size);
    PGresult *result = NULL;
    if (rc == 0) {
        const char *values[] = {id};
        result = hf_pg_exec(&store->leases, sql, 1, values, error, error_size);
        rc = result != NULL ? 0 : -1;
    }
    if (rc == 0 && PQntuples(result) == 1) {
        *found = true;
        snprintf(unit, unit_size, "%s", PQgetvalue(result, 0, 0));
    }
    PQclear(result);
    pthread_mutex_unlock(&store->lease_mutex);
    return rc;
}

/* Kept in meta beside schema_version: the first proposal wins, later ones read it back. */
int hf_pg_setting_claim(void *instance, const char *key, const char *proposed, char *value,
                        size_t value_size, char *error, size_t error_size) {
    hf_pg_store_t *store = instance;
    pthread_mutex_lock(&store->lease_mutex);
    int rc = leases_open(store, error, error_size);
    const char *values[] = {key, proposed};
    PGresult *result = NULL;
    if (rc == 0) {
        result = hf_pg_exec(
            &store->leases,
            "INSERT INTO meta(key, value) VALUES($1, $2) ON CONFLICT(key) DO NOTHING", 2, values,
            error, error_size);
        rc = result != NULL ? 0 : -1;
        PQclear(result);
        result = NULL;
    }
    if (rc == 0) {
        result = hf_pg_exec(&store->leases, "SELECT value FROM meta WHERE key = $1", 1, values,
                            error, error_size);
        rc = result != NULL && PQntuples(result) == 1 && !PQgetisnull(result, 0, 0) ? 0 : -1;
        if (rc == 0 && (size_t)PQgetlength(result, 0, 0) >= value_size) rc = -1;
        if (rc == 0) memcpy(value, PQgetvalue(result, 0, 0), (size_t)PQgetlength(result, 0, 0) + 1);
        else if (result != NULL)
            hf_store_error_write(error, error_size, "store: the setting %s is missing or too long",
                                 key);
    }
    PQclear(result);
    pthread_mutex_unlock(&store->lease_mutex);
    return rc;
}
