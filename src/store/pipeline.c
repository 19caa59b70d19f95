/* The store's pipeline (what store.h declares), written once for every backend (backend.h): hf_store_open picks the
 * backend by the URL's scheme, and from then on this file owns the writer thread, the hand-off
 * of batches between the engine and the writer, the statistics and the failure of a batch,
 * and calls the backend through its struct.
 *
 * One transaction per batch, whatever its size: splitting a batch would let an early part
 * commit while a later part fails, and the engine could not tell its clients which of their
 * changes are durable. The size of a batch is bounded by the engine
 * (HF_STORE_BATCH_MUTATIONS_MAX), not here.
 *
 * Threads: the backend is used by the caller of hf_store_open and hf_store_load until
 * hf_store_start, then by the writer thread (hf-store) alone for writing: the engine submits a
 * batch only after taking the last one back, so batches are written one at a time, in order.
 * Everything the engine thread and the writer share sits under mutex. */
#include <assert.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "store/backend.h"
#include "store/fault.h"
#include "store/store.h"

#define ERROR_SIZE 512

/* One, a few, and then by steps of 2 and 2.5 up to the engine's bound on a batch: a batch
 * grows with the load while a sync is in flight (DESIGN.md, the store's writer). */
static const uint64_t BATCH_SIZE_UPPER[] = {1,
                                            2,
                                            5,
                                            10,
                                            20,
                                            50,
                                            100,
                                            200,
                                            500,
                                            1000,
                                            2000,
                                            5000,
                                            10000,
                                            20000,
                                            50000,
                                            100000,
                                            HF_STORE_BATCH_MUTATIONS_MAX};
const hf_histogram_bounds_t hf_store_batch_size_bounds = {
    BATCH_SIZE_UPPER, sizeof BATCH_SIZE_UPPER / sizeof BATCH_SIZE_UPPER[0], 1.0};

struct hf_store {
    const hf_store_backend_t *backend;
    void *instance;         /* the backend's, opaque here */
    uint64_t batches_begun; /* the writer only */
    uint64_t fail_batch;    /* fault seam for tests: this batch fails (0: none) */
    /* The last written sequence, for a backend that is durable as soon as it has written
     * (backend->durable NULL): stored by the writer, read by the engine thread. */
    atomic_uint_fast64_t written;

    pthread_t writer;
    bool writer_running;
    bool started;
    hf_store_done_fn done;
    void *done_context;

    /* Shared between the engine thread and the writer: read and written under mutex. */
    pthread_mutex_t mutex;
    pthread_cond_t wake;
    hf_batch_t *submitted; /* waiting for the writer */
    hf_batch_t *writing;   /* taken by the writer, not yet finished */
    uint64_t submitted_sequence;
    hf_batch_t *finished; /* written (or failed), waiting for take_result */
    uint64_t finished_sequence;
    bool finished_ok;
    char finished_error[ERROR_SIZE];
    bool stopping;
    hf_store_stats_t stats;

    bool holds_batch;             /* engine thread only: submitted and not yet taken back */
    uint64_t slow_logged_batches; /* the writer only: the last batch logged as slow */
};

void hf_store_error_write(char *error, size_t error_size, const char *format, ...) {
    if (error == NULL || error_size == 0) return;
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(error, error_size, format, arguments);
    va_end(arguments);
}

/* ---- Opening and loading (the caller's thread, before start) ---- */

int hf_store_open(hf_store_t **out, const char *url, char *error, size_t error_size) {
    assert(out != NULL);
    *out = NULL;
    const hf_store_backend_t *backend = hf_store_backend_find(url, error, error_size);
    if (backend == NULL) return -1;
    assert(backend->version == HF_STORE_BACKEND_VERSION);
    hf_store_t *store = calloc(1, sizeof *store);
    if (store == NULL) abort();
    pthread_mutex_init(&store->mutex, NULL);
    pthread_cond_init(&store->wake, NULL);
    store->backend = backend;
    /* Every fault and ceiling variable is read now, before the backend opens (fault.h). */
    hf_store_fault_configure();
    store->fail_batch = hf_store_fault_batch_to_fail();
    if (backend->open(&store->instance, url, error, error_size) != 0) {
        hf_store_close(store);
        return -1;
    }
    *out = store;
    return 0;
}

int hf_store_load(hf_store_t *store, const hf_store_loader_t *loader, char *error,
                  size_t error_size) {
    assert(store != NULL && loader != NULL && !store->started);
    return store->backend->load(store->instance, loader, error, error_size);
}

int hf_store_list_holds(hf_store_t *store, const hf_store_hold_query_t *query,
                        const hf_store_loader_t *loader, bool *after_found, char *error,
                        size_t error_size) {
    assert(store != NULL && query != NULL && query->event_id != NULL && loader != NULL &&
           loader->hold != NULL);
    *after_found = query->after_id == NULL;
    return store->backend->list_holds(store->instance, query, loader, after_found, error,
                                      error_size);
}

int hf_store_read_history(hf_store_t *store, const hf_store_history_query_t *query,
                          hf_store_history_fn entry, void *context, char *error,
                          size_t error_size) {
    assert(store != NULL && query != NULL && query->event_id != NULL && entry != NULL);
    return store->backend->read_history(store->instance, query, entry, context, error, error_size);
}

int hf_store_read_hold(hf_store_t *store, const char *hold_id, const hf_store_loader_t *loader,
                       bool *found, char *error, size_t error_size) {
    assert(store != NULL && hold_id != NULL && loader != NULL &&
           (loader->hold != NULL || loader->calendar_hold != NULL));
    *found = false;
    return store->backend->read_hold(store->instance, hold_id, loader, found, error, error_size);
}

int hf_store_read_ticket(hf_store_t *store, const char *ticket_id, const hf_store_loader_t *loader,
                         bool *found, char *error, size_t error_size) {
    assert(store != NULL && ticket_id != NULL && loader != NULL && loader->ticket != NULL);
    *found = false;
    return store->backend->read_ticket(store->instance, ticket_id, loader, found, error,
                                       error_size);
}

int hf_store_read_ride(hf_store_t *store, const char *ride_id, const hf_store_loader_t *loader,
                       bool *found, char *error, size_t error_size) {
    assert(store != NULL && ride_id != NULL && loader != NULL && loader->ride != NULL);
    *found = false;
    return store->backend->read_ride(store->instance, ride_id, loader, found, error, error_size);
}

int hf_store_list_rides(hf_store_t *store, const hf_store_ride_query_t *query,
                        const hf_store_loader_t *loader, bool *after_found, char *error,
                        size_t error_size) {
    assert(store != NULL && query != NULL && query->fleet_id != NULL && loader != NULL &&
           loader->ride != NULL);
    *after_found = query->after_id == NULL;
    return store->backend->list_rides(store->instance, query, loader, after_found, error,
                                      error_size);
}

int hf_store_setting_claim(hf_store_t *store, const char *key, const char *proposed, char *value,
                           size_t value_size, bool *kept, char *error, size_t error_size) {
    assert(store != NULL && key != NULL && proposed != NULL && value != NULL);
    *kept = store->backend->setting_claim != NULL;
    if (!*kept) return 0;
    return store->backend->setting_claim(store->instance, key, proposed, value, value_size, error,
                                         error_size);
}

/* ---- Writing a batch (the writer thread) ---- */

/* One transaction for the whole batch; on failure the caller aborts it, and nothing of it
 * remains. */
static bool batch_write(hf_store_t *store, const hf_batch_t *batch, uint64_t sequence, char *error,
                        size_t error_size) {
    const hf_store_backend_t *backend = store->backend;
    if (backend->batch_write(store->instance, batch, error, error_size) != 0) return false;
    /* The fault seam: tests make one chosen batch fail as a full disk would, after its
     * writes and before its commit, to check that nothing of it is acknowledged. */
    if (++store->batches_begun == store->fail_batch) {
        hf_store_error_write(error, error_size,
                             "store: injected fault in batch %" PRIu64
                             " (HOLDFAST_FAULT_FAIL_BATCH)",
                             store->batches_begun);
        return false;
    }
    return backend->batch_commit(store->instance, sequence, error, error_size) == 0;
}

/* Writes a batch the writer took, then publishes it as finished. Called and returns with the
 * mutex unlocked. */
static void batch_process(hf_store_t *store, hf_batch_t *batch, uint64_t sequence) {
    char error[ERROR_SIZE] = "";
    double start = hf_clock_monotonic_seconds();
    bool ok = batch_write(store, batch, sequence, error, sizeof error);
    double seconds = hf_clock_monotonic_seconds() - start;
    size_t count = hf_batch_count(batch);
    if (ok && store->backend->durable == NULL) {
        atomic_store(&store->written, sequence);
    } else if (!ok) {
        hf_log(HF_LOG_ERROR, "%s (batch %" PRIu64 " of %zu mutations rolled back)", error, sequence,
               count);
        store->backend->batch_abort(store->instance, error);
    }
    /* Cleared here, off the engine thread, so taking the result back costs nothing. */
    hf_batch_clear(batch);

    pthread_mutex_lock(&store->mutex);
    store->writing = NULL;
    store->finished = batch;
    store->finished_sequence = sequence;
    store->finished_ok = ok;
    memcpy(store->finished_error, error, sizeof error);
    if (ok) {
        store->stats.batches++;
        store->stats.mutations += count;
        store->stats.last_batch_size = count;
        store->stats.last_commit_seconds = seconds;
        hf_histogram_record(&store->stats.batch_sizes, &hf_store_batch_size_bounds, count);
        hf_histogram_record(&store->stats.commit_durations, &hf_histogram_seconds_bounds,
                            (uint64_t)(seconds * 1e9));
    } else {
        store->stats.failures++;
    }
    pthread_mutex_unlock(&store->mutex);
}

/* A batch whose commit took longer than HF_STORE_SLOW_BATCH_MS is logged, after the result
 * was handed back, so that the engine never waits for the log's write. */
static void slow_batch_log(hf_store_t *store) {
    pthread_mutex_lock(&store->mutex);
    double seconds = store->stats.last_commit_seconds;
    uint64_t size = store->stats.last_batch_size, batches = store->stats.batches;
    pthread_mutex_unlock(&store->mutex);
    if (batches == store->slow_logged_batches || seconds * 1000 < HF_STORE_SLOW_BATCH_MS) return;
    store->slow_logged_batches = batches;
    HF_LOG_FIELDS(HF_LOG_WARNING, "slow batch", HF_LOG_TEXT("stage", "commit"),
                  HF_LOG_NUMBER("duration_ms", seconds * 1000), HF_LOG_NUMBER("mutations", size),
                  HF_LOG_NUMBER("threshold_ms", HF_STORE_SLOW_BATCH_MS));
}

/* The writer takes a batch, writes it, reports it written to the backend's durability side and
 * hands it back to the engine, which may then submit the next one: the sync of one batch
 * overlaps the write of the next. */
static void *store_writer(void *argument) {
    hf_store_t *store = argument;
    pthread_setname_np(pthread_self(), "hf-store"); /* for top -H, perf and gdb */
    pthread_mutex_lock(&store->mutex);
    for (;;) {
        while (store->submitted == NULL && !store->stopping)
            pthread_cond_wait(&store->wake, &store->mutex);
        /* A batch handed over before the stop request is still written: it may carry
         * changes whose replies are waiting. */
        if (store->submitted == NULL) break;
        hf_batch_t *batch = store->submitted;
        uint64_t sequence = store->submitted_sequence;
        store->submitted = NULL;
        store->writing = batch;
        pthread_mutex_unlock(&store->mutex);
        batch_process(store, batch, sequence);
        store->done(store->done_context);
        slow_batch_log(store);
        pthread_mutex_lock(&store->mutex);
    }
    pthread_mutex_unlock(&store->mutex);
    return NULL;
}

/* ---- The engine's side ---- */

static int writer_start(hf_store_t *store) {
    int rc = pthread_create(&store->writer, NULL, store_writer, store);
    if (rc != 0) {
        hf_log(HF_LOG_ERROR, "store: cannot start the writer: %s", strerror(rc));
        return -1;
    }
    store->writer_running = true;
    return 0;
}

int hf_store_start(hf_store_t *store, hf_store_done_fn done, void *context) {
    assert(store != NULL && done != NULL && !store->started);
    store->done = done;
    store->done_context = context;
    store->started = true;
    hf_store_fault_arm(); /* injected write and sync faults count batches only */
    char error[ERROR_SIZE] = "";
    if (store->backend->start(store->instance, done, context, error, sizeof error) != 0) {
        hf_log(HF_LOG_ERROR, "%s", error);
        return -1;
    }
    return writer_start(store);
}

/* Idle means the store holds no batch: none being written and none finished but not yet
 * taken back, so there is a single result slot and it is always free at submit. Only the
 * engine thread moves the store in and out of idle (submit, take_result), so it reads its own
 * flag without the mutex: the engine asks at every loop turn, and taking the lock there made
 * the writer wait for it. */
bool hf_store_idle(const hf_store_t *store) { return !store->holds_batch; }

void hf_store_submit(hf_store_t *store, hf_batch_t *batch, uint64_t sequence) {
    assert(store != NULL && batch != NULL && store->writer_running);
    pthread_mutex_lock(&store->mutex);
    assert(store->submitted == NULL && store->writing == NULL && store->finished == NULL &&
           !store->stopping);
    store->holds_batch = true;
    store->submitted = batch;
    store->submitted_sequence = sequence;
    pthread_cond_signal(&store->wake);
    pthread_mutex_unlock(&store->mutex);
}

hf_batch_t *hf_store_take_result(hf_store_t *store, uint64_t *sequence, bool *ok, char *error,
                                 size_t error_size) {
    assert(store != NULL);
    pthread_mutex_lock(&store->mutex);
    hf_batch_t *batch = store->finished;
    if (batch != NULL) {
        if (sequence != NULL) *sequence = store->finished_sequence;
        if (ok != NULL) *ok = store->finished_ok;
        hf_store_error_write(error, error_size, "%s", store->finished_error);
        store->finished = NULL;
        store->holds_batch = false;
    }
    pthread_mutex_unlock(&store->mutex);
    return batch;
}

bool hf_store_durable(const hf_store_t *store, uint64_t *sequence, char *error, size_t error_size) {
    *sequence = 0;
    if (store->backend->durable == NULL) {
        *sequence = atomic_load(&((hf_store_t *)store)->written);
        return true;
    }
    return store->backend->durable(store->instance, sequence, error, error_size);
}

void hf_store_stats(const hf_store_t *store, hf_store_stats_t *stats) {
    hf_store_t *shared = (hf_store_t *)store; /* see hf_store_idle */
    pthread_mutex_lock(&shared->mutex);
    *stats = shared->stats;
    pthread_mutex_unlock(&shared->mutex);
    if (store->backend->stats != NULL) store->backend->stats(store->instance, stats);
}

/* A batch never taken back is still the store's (hf_store_submit), so it is freed here. */
void hf_store_close(hf_store_t *store) {
    if (store == NULL) return;
    pthread_mutex_lock(&store->mutex);
    store->stopping = true;
    pthread_cond_broadcast(&store->wake);
    pthread_mutex_unlock(&store->mutex);
    if (store->writer_running) pthread_join(store->writer, NULL);
    /* After the writer: the backend's durability side covers every batch it committed. */
    store->backend->close(store->instance);
    hf_batch_destroy(store->submitted);
    hf_batch_destroy(store->writing);
    hf_batch_destroy(store->finished);
    pthread_cond_destroy(&store->wake);
    pthread_mutex_destroy(&store->mutex);
    free(store);
}

/* ---- Units and leases (backend.h): passed to the backend as they are ---- */

bool hf_store_has_leases(const hf_store_t *store) { return store->backend->lease_acquire != NULL; }

int hf_store_lease_acquire(hf_store_t *store, const char *node_id, const char *unit,
                           uint64_t *epoch, bool *acquired, char *error, size_t error_size) {
    return store->backend->lease_acquire(store->instance, node_id, unit, epoch, acquired, error,
                                         error_size);
}

int hf_store_lease_renew(hf_store_t *store, const char *node_id, const char *address,
                         size_t *renewed, char *error, size_t error_size) {
    return store->backend->lease_renew(store->instance, node_id, address, renewed, error,
                                       error_size);
}

int hf_store_lease_release(hf_store_t *store, const char *node_id, char *error, size_t error_size) {
    return store->backend->lease_release(store->instance, node_id, error, error_size);
}

int hf_store_lease_list(hf_store_t *store, hf_store_node_fn node, hf_store_lease_fn lease,
                        void *context, char *error, size_t error_size) {
    return store->backend->lease_list(store->instance, node, lease, context, error, error_size);
}

int hf_store_unit_load(hf_store_t *store, const char *unit, const hf_store_loader_t *loader,
                       char *error, size_t error_size) {
    return store->backend->load_unit(store->instance, unit, loader, error, error_size);
}

int hf_store_unit_fetch(hf_store_t *store, const char *unit, const hf_store_loader_t *loader,
                        void **rows, char *error, size_t error_size) {
    return store->backend->unit_fetch(store->instance, unit, loader, rows, error, error_size);
}

int hf_store_unit_deliver(hf_store_t *store, void *rows, const hf_store_loader_t *loader,
                          char *error, size_t error_size) {
    return store->backend->unit_deliver(store->instance, rows, loader, error, error_size);
}

void hf_store_unit_rows_free(hf_store_t *store, void *rows) {
    if (rows) store->backend->unit_rows_free(rows);
}

int hf_store_unit_find(hf_store_t *store, const char *kind, const char *id, char *unit,
                       size_t unit_size, bool *found, char *error, size_t error_size) {
    return store->backend->unit_find(store->instance, kind, id, unit, unit_size, found, error,
                                     error_size);
}
