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
 * hf_store_start, then by the writer thread (hf-store) alone for writing. A backend that does
 * not overlap batches gets one at a time: the engine submits a batch only after taking the
 * last one back. One that does (PostgreSQL, backend.h) holds up to batches_max: the writer
 * sends each before the outcome of the ones before it is known, and hands outcomes back in
 * the order of the sequences; a failed batch fails every batch held behind it, and the engine
 * takes them all back before it submits again (DESIGN.md, "Batches that overlap").
 * Everything the engine thread and the writer share sits under mutex. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/limits.h"
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

/* A batch the store holds, with what the writer learnt of it. */
typedef struct held {
    hf_batch_t *batch;
    uint64_t sequence;
    double started; /* the writer's clock when its write began */
    bool ok;
    char error[ERROR_SIZE];
} held_t;

/* The batches in one stage, oldest first: at most HF_STORE_BATCHES_OVERLAP_MAX, since the
 * store holds no more than that in all (hf_store_ready). */
typedef struct ring {
    held_t slots[HF_STORE_BATCHES_OVERLAP_MAX];
    size_t first, count;
} ring_t;

struct hf_store {
    const hf_store_backend_t *backend;
    void *instance;         /* the backend's, opaque here */
    unsigned batches_max;   /* held at once: 1, or the backend's overlap */
    int wake_fd;            /* an eventfd the engine writes at submit when batches overlap */
    uint64_t batches_begun; /* the writer only */
    uint64_t fail_batch;    /* fault seam for tests: this batch fails (0: none) */
    /* The last written sequence, for a backend that is durable as soon as it has written
     * (backend->durable NULL): stored by the writer, read by the engine thread. */
    atomic_uint_fast64_t written;
    /* Failures the writer published, and those the engine had seen when it last took a failed
     * batch back: while they differ, a batch submitted is failed at once (its changes were
     * made on top of the failed one's). Published under mutex, read without it by ready. */
    atomic_uint_fast64_t failures_published;
    uint64_t failures_taken;       /* under mutex */
    uint64_t last_failed_sequence; /* under mutex: the batch of the last failure published */

    pthread_t writer;
    bool writer_running;
    bool started;
    hf_store_done_fn done;
    void *done_context;

    /* Shared between the engine thread and the writer: read and written under mutex. */
    pthread_mutex_t mutex;
    pthread_cond_t wake;
    ring_t submitted; /* waiting for the writer */
    ring_t finished;  /* written (or failed), waiting for take_result */
    bool stopping;
    hf_store_stats_t stats;

    ring_t sent; /* the writer only: sent to an overlapping backend, outcome not yet known */

    unsigned held;                /* engine thread only: submitted and not yet taken back */
    size_t newest_mutations;      /* engine thread only: the last batch submitted's size */
    uint64_t slow_logged_batches; /* the writer only: the last batch logged as slow */
};

static held_t *ring_front(ring_t *ring) {
    assert(ring->count > 0);
    return &ring->slots[ring->first];
}

static void ring_push(ring_t *ring, const held_t *slot) {
    assert(ring->count < HF_STORE_BATCHES_OVERLAP_MAX);
    ring->slots[(ring->first + ring->count++) % HF_STORE_BATCHES_OVERLAP_MAX] = *slot;
}

static held_t ring_pop(ring_t *ring) {
    held_t slot = *ring_front(ring);
    ring->first = (ring->first + 1) % HF_STORE_BATCHES_OVERLAP_MAX;
    ring->count--;
    return slot;
}

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
    store->wake_fd = -1;
    store->batches_max = 1;
    if (backend->batches_in_flight_max > 1 && backend->batch_send && backend->batch_finish)
        store->batches_max = backend->batches_in_flight_max < HF_STORE_BATCHES_OVERLAP_MAX
                                 ? backend->batches_in_flight_max
                                 : HF_STORE_BATCHES_OVERLAP_MAX;
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

int hf_store_read_outbox(hf_store_t *store, const hf_store_outbox_query_t *query,
                         hf_store_history_fn entry, void *context, char *error, size_t error_size) {
    assert(store != NULL && query != NULL && entry != NULL);
    return store->backend->read_outbox(store->instance, query, entry, context, error, error_size);
}

int hf_store_outbox_pending(hf_store_t *store, const char *unit, int64_t *pending,
                            int64_t *last_seq, char *error, size_t error_size) {
    assert(store != NULL && unit != NULL);
    *pending = *last_seq = 0;
    return store->backend->outbox_pending(store->instance, unit, pending, last_seq, error,
                                          error_size);
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

static bool overlapping(const hf_store_t *store) { return store->batches_max > 1; }

/* Writes the batch into one transaction, then commits it, or only sends its COMMIT when
 * batches overlap; on failure the caller aborts it, and nothing of it remains. */
static bool batch_write(hf_store_t *store, const held_t *slot, char *error, size_t error_size) {
    const hf_store_backend_t *backend = store->backend;
    if (backend->batch_write(store->instance, slot->batch, error, error_size) != 0) return false;
    /* The fault seam: tests make one chosen batch fail as a full disk would, after its
     * writes and before its commit, to check that nothing of it is acknowledged. */
    if (++store->batches_begun == store->fail_batch) {
        hf_store_error_write(error, error_size,
                             "store: injected fault in batch %" PRIu64
                             " (HOLDFAST_FAULT_FAIL_BATCH)",
                             store->batches_begun);
        return false;
    }
    if (overlapping(store))
        return backend->batch_send(store->instance, slot->sequence, error, error_size) == 0;
    return backend->batch_commit(store->instance, slot->sequence, error, error_size) == 0;
}

/* Hands a batch back as finished, under mutex; cleared off the engine thread first, so taking
 * the result back costs nothing. */
static void finished_push(hf_store_t *store, held_t *slot, bool ok, const char *error) {
    slot->ok = ok;
    snprintf(slot->error, sizeof slot->error, "%s", error);
    hf_batch_clear(slot->batch);
    ring_push(&store->finished, slot);
}

/* The batch committed: the engine may acknowledge it. */
static void success_publish(hf_store_t *store, held_t *slot) {
    double seconds = hf_clock_monotonic_seconds() - slot->started;
    size_t count = hf_batch_count(slot->batch);
    if (store->backend->durable == NULL) atomic_store(&store->written, slot->sequence);
    pthread_mutex_lock(&store->mutex);
    finished_push(store, slot, true, "");
    store->stats.batches++;
    store->stats.mutations += count;
    store->stats.last_batch_size = count;
    store->stats.last_commit_seconds = seconds;
    hf_histogram_record(&store->stats.batch_sizes, &hf_store_batch_size_bounds, count);
    hf_histogram_record(&store->stats.commit_durations, &hf_histogram_seconds_bounds,
                        (uint64_t)(seconds * 1e9));
    pthread_mutex_unlock(&store->mutex);
}

/* A batch behind a failed one fails with it: written on top of its changes, it must not
 * stand without them. Under mutex. */
static void follower_fail(hf_store_t *store, held_t *slot, uint64_t failed_sequence) {
    char error[ERROR_SIZE];
    hf_store_error_write(error, sizeof error,
                         "store: batch %" PRIu64 " failed, and batch %" PRIu64 " behind it with it",
                         failed_sequence, slot->sequence);
    hf_log(HF_LOG_ERROR, "%s (%zu mutations not written)", error, hf_batch_count(slot->batch));
    finished_push(store, slot, false, error);
    store->stats.failures++;
}

/* The batch failed: the backend rolls it back and drops whatever was sent after it
 * (batch_abort), then it and every batch held behind it (sent or only submitted) are handed
 * back failed at once, in order, so that the engine sees the whole failure in one wake-up. */
static void failure_publish(hf_store_t *store, held_t *slot, const char *error) {
    hf_log(HF_LOG_ERROR, "%s (batch %" PRIu64 " of %zu mutations rolled back)", error,
           slot->sequence, hf_batch_count(slot->batch));
    store->backend->batch_abort(store->instance, error);
    pthread_mutex_lock(&store->mutex);
    finished_push(store, slot, false, error);
    store->stats.failures++;
    store->last_failed_sequence = slot->sequence;
    while (store->sent.count > 0) {
        held_t follower = ring_pop(&store->sent);
        follower_fail(store, &follower, slot->sequence);
    }
    while (store->submitted.count > 0) {
        held_t follower = ring_pop(&store->submitted);
        follower_fail(store, &follower, slot->sequence);
    }
    atomic_fetch_add(&store->failures_published, 1);
    pthread_mutex_unlock(&store->mutex);
}

/* The oldest sent batch's outcome (batches overlap). With wakeable, returns false without one
 * when the engine submitted another batch meanwhile (the writer sends it, then waits again). */
static bool oldest_finish(hf_store_t *store, bool wakeable) {
    held_t *slot = ring_front(&store->sent);
    char error[ERROR_SIZE] = "";
    bool woken = false;
    int rc = store->backend->batch_finish(store->instance, slot->sequence,
                                          wakeable ? store->wake_fd : -1, &woken, error,
                                          sizeof error);
    if (rc == 0 && woken) return false;
    held_t finished = ring_pop(&store->sent);
    if (rc == 0) success_publish(store, &finished);
    else failure_publish(store, &finished, error);
    return true;
}

/* Writes a batch the writer took; when batches overlap, leaves it sent (and returns false:
 * nothing was handed back). A batch that fails here fails only after those sent before it
 * are finished: their outcomes come first. */
static bool batch_process(hf_store_t *store, held_t *slot) {
    char error[ERROR_SIZE] = "";
    slot->started = hf_clock_monotonic_seconds();
    bool ok = batch_write(store, slot, error, sizeof error);
    if (ok && overlapping(store)) {
        ring_push(&store->sent, slot);
        return false;
    }
    if (ok) {
        success_publish(store, slot);
        return true;
    }
    uint64_t failures = atomic_load(&store->failures_published);
    while (store->sent.count > 0) oldest_finish(store, false);
    if (atomic_load(&store->failures_published) == failures) {
        failure_publish(store, slot, error);
        return true;
    }
    /* An earlier batch failed meanwhile, and its abort dropped this one's transaction too. */
    pthread_mutex_lock(&store->mutex);
    follower_fail(store, slot, store->last_failed_sequence);
    pthread_mutex_unlock(&store->mutex);
    return true;
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

/* Empties the eventfd the engine wrote at submit; under mutex, before taking what it woke
 * the writer for, so a later submit wakes it again. */
static void wake_drain(hf_store_t *store) {
    uint64_t count;
    if (store->wake_fd >= 0 && read(store->wake_fd, &count, sizeof count) < 0) {
        /* EAGAIN: nothing was written since the last drain. */
    }
}

/* The writer takes a batch, writes it and hands it back to the engine, which may then submit
 * the next one: the sync of one batch overlaps the write of the next. When the backend
 * overlaps batches, the writer sends each batch it can (up to batches_max unfinished) before
 * it waits for the oldest one's outcome, and goes on sending while it waits. */
static void *store_writer(void *argument) {
    hf_store_t *store = argument;
    pthread_setname_np(pthread_self(), "hf-store"); /* for top -H, perf and gdb */
    pthread_mutex_lock(&store->mutex);
    for (;;) {
        while (store->submitted.count == 0 && store->sent.count == 0 && !store->stopping)
            pthread_cond_wait(&store->wake, &store->mutex);
        /* A batch handed over before the stop request is still written: it may carry
         * changes whose replies are waiting. */
        bool can_send = store->submitted.count > 0 && store->sent.count < store->batches_max;
        if (!can_send && store->sent.count == 0) break;
        if (can_send) {
            wake_drain(store);
            held_t slot = ring_pop(&store->submitted);
            pthread_mutex_unlock(&store->mutex);
            if (!batch_process(store, &slot)) {
                pthread_mutex_lock(&store->mutex);
                continue;
            }
        } else {
            bool more = store->submitted.count > 0;
            pthread_mutex_unlock(&store->mutex);
            if (!oldest_finish(store, !more)) {
                pthread_mutex_lock(&store->mutex);
                continue;
            }
        }
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
    if (overlapping(store)) {
        store->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (store->wake_fd < 0) {
            hf_log(HF_LOG_ERROR, "store: cannot make the writer's eventfd: %s", strerror(errno));
            return -1;
        }
    }
    return writer_start(store);
}

/* Idle and ready are read from the engine's own count without the mutex: the engine asks at
 * every loop turn, and taking the lock there made the writer wait for it. Only the engine
 * thread changes the count (submit, take_result). */
bool hf_store_idle(const hf_store_t *store) { return store->held == 0; }

bool hf_store_ready(const hf_store_t *store, size_t mutations) {
    if (store->held == 0) return true;
    if (store->held >= store->batches_max) return false;
    /* A failure not yet taken back: the engine is about to learn of it (done is pending). */
    if (atomic_load(&((hf_store_t *)store)->failures_published) != store->failures_taken)
        return false;
    /* Behind a batch in flight, only one at least as large: a smaller one would cut the same
     * load into more batches, each with its fixed cost on the server (its statements, its
     * WAL flush), while the one in flight already keeps the server busy. */
    return mutations >= store->newest_mutations;
}

unsigned hf_store_batches_max(const hf_store_t *store) { return store->batches_max; }

void hf_store_submit(hf_store_t *store, hf_batch_t *batch, uint64_t sequence) {
    assert(store != NULL && batch != NULL && store->writer_running);
    pthread_mutex_lock(&store->mutex);
    assert(store->held < store->batches_max && !store->stopping);
    store->held++;
    store->newest_mutations = hf_batch_count(batch);
    held_t slot = {.batch = batch, .sequence = sequence};
    bool behind_failure = atomic_load(&store->failures_published) != store->failures_taken;
    if (behind_failure) {
        /* Submitted before the engine took back a failure the writer had published. */
        follower_fail(store, &slot, store->last_failed_sequence);
    } else {
        ring_push(&store->submitted, &slot);
        pthread_cond_signal(&store->wake);
        uint64_t one = 1;
        if (store->wake_fd >= 0 && write(store->wake_fd, &one, sizeof one) < 0) {
            /* Cannot fail but at the counter's overflow, which many submits in a row without
             * a drain never reach: the writer drains before each batch it takes. */
        }
    }
    pthread_mutex_unlock(&store->mutex);
    if (behind_failure) store->done(store->done_context);
}

hf_batch_t *hf_store_take_result(hf_store_t *store, uint64_t *sequence, bool *ok, char *error,
                                 size_t error_size) {
    assert(store != NULL);
    pthread_mutex_lock(&store->mutex);
    hf_batch_t *batch = NULL;
    if (store->finished.count > 0) {
        held_t slot = ring_pop(&store->finished);
        batch = slot.batch;
        if (sequence != NULL) *sequence = slot.sequence;
        if (ok != NULL) *ok = slot.ok;
        hf_store_error_write(error, error_size, "%s", slot.error);
        if (!slot.ok) store->failures_taken = atomic_load(&store->failures_published);
        store->held--;
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

static void ring_destroy(ring_t *ring) {
    while (ring->count > 0) hf_batch_destroy(ring_pop(ring).batch);
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
    ring_destroy(&store->submitted);
    ring_destroy(&store->sent);
    ring_destroy(&store->finished);
    if (store->wake_fd >= 0) close(store->wake_fd);
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
