/* The engine's plumbing (engine.h): store batches, the durability gate, the expiry timer,
 * signals. */
#include "engine/engine.h"

#include "core/jobs.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/dispatch/dispatch.h"
#include "core/jobs.h"
#include "engine/arena.h"
#include "engine/context.h"
#include "engine/idempotency.h"
#include "engine/metrics.h"
#include "engine/restore.h"
#include "engine/streams.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/notify.h"
#include "lib/progress.h"
#include "net/http.h"
#include "store/store.h"

struct hf_engine {
    uv_loop_t *loop;
    hf_engine_options_t options;
    /* What handlers reach (context.h): the core, the store, the open batch and the
     * sequences of the durability gate, the clock. */
    hf_context_t context;
    hf_idempotency_t idempotency; /* context.idempotency points here */
    hf_streams_t streams;         /* context.streams points here */
    hf_metrics_t metrics;         /* context.metrics points here */
    struct hf_cluster *cluster;   /* context.cluster points here: the owner of units (units.h) */
    hf_http_server_t *http;
    hf_batch_t *spare_batch;    /* returned by the store, reused */
    uv_timer_t keepalive_timer; /* streams' keep-alive comments */
    uv_timer_t dispatch_timer;  /* drivers' soft state to the store (dispatch) */

    uv_async_t store_done;
    uv_check_t check;
    uv_timer_t expiry_timer;
    int64_t expiry_armed_ms; /* deadline the timer is set for, INT64_MAX when none */
    uv_signal_t signal_term, signal_interrupt;
    uv_timer_t shutdown_timer;
    bool stopping;
    int exit_code;
};

/* ---- group commit ---- */

/* Whether the open batch of that many mutations would go to the store now. */
static bool store_takes(const hf_engine_t *engine, size_t mutations) {
    const hf_context_t *context = &engine->context;
    if (context->store_failed || mutations == 0) return false;
    if (!hf_store_ready(context->store, mutations)) return false;
    /* Held back while enough are unsynced: the batch grows until a sync lands (limits.h); a
     * store that overlaps its batches holds as many as it takes (hf_store_batches_max). */
    _Static_assert(HF_STORE_BATCHES_UNSYNCED_MAX <= HF_STORE_BATCHES_IN_FLIGHT_MAX, "ring");
    _Static_assert(HF_STORE_BATCHES_OVERLAP_MAX <= HF_STORE_BATCHES_IN_FLIGHT_MAX, "ring");
    uint64_t in_flight = context->open_sequence - 1 - context->durable_sequence;
    uint64_t overlap = hf_store_batches_max(context->store);
    return in_flight <
           (overlap > HF_STORE_BATCHES_UNSYNCED_MAX ? overlap : HF_STORE_BATCHES_UNSYNCED_MAX);
}

static void submit_if_idle(hf_engine_t *engine) {
    hf_context_t *context = &engine->context;
    if (!store_takes(engine, hf_batch_count(context->open_batch))) return;
    /* No spare: the batches are with the store, which has room for one more (at most
     * HF_STORE_BATCHES_OVERLAP_MAX are ever made). */
    if (!engine->spare_batch) engine->spare_batch = hf_batch_create();
    hf_batch_t *batch = context->open_batch;
    context->open_batch = engine->spare_batch;
    engine->spare_batch = NULL;
    context->batch_changes[context->open_sequence % HF_STORE_BATCHES_IN_FLIGHT_MAX] =
        hf_core_change_count(context->core);
    hf_store_submit(context->store, batch, context->open_sequence);
    hf_streams_batch_submitted(&engine->streams, context->open_sequence);
    context->open_sequence++;
}

/* After a failed commit the memory is ahead of the disk. Reads can still be answered
 * truthfully from what is durable: load it into a fresh core through a second connection and
 * serve GETs from that; changes stay refused (503) until a restart. If even reading fails,
 * everything stays 503. */
static void reload_durable_state(hf_engine_t *engine) {
    hf_context_t *context = &engine->context;
    char error[512];
    hf_store_t *reader = NULL;
    hf_core_t *failed_core = context->core;
    hf_idempotency_t failed_keys = engine->idempotency;
    context->core = hf_core_create((hf_mutation_sink_t){NULL, NULL});
    hf_core_set_finished_max(context->core, engine->options.finished_holds_max);
    hf_dispatch_set_finished_max(context->core, engine->options.finished_rides_max);
    hf_idempotency_init(&engine->idempotency);
    bool ok = hf_store_open(&reader, engine->options.store_url, error, sizeof error) == 0 &&
              hf_restore_load(context, reader, engine->options.finished_holds_max, error,
                              sizeof error) == 0;
    hf_store_close(reader);
    if (ok) {
        hf_core_destroy(failed_core);
        hf_idempotency_free(&failed_keys);
        context->reads_from_disk = true;
        hf_log(HF_LOG_INFO,
               "serving reads from the durable state; changes answer 503 until a restart");
        return;
    }
    hf_core_destroy(context->core);
    hf_idempotency_free(&engine->idempotency);
    context->core = failed_core;
    engine->idempotency = failed_keys;
    hf_log(HF_LOG_ERROR, "cannot reload the durable state, answering 503 to all: %s", error);
}

/* Nothing more is acknowledged: replies waiting for a batch after durable_sequence answer
 * 503, streams close, and changes answer 503 until a restart. One recovery path only: with
 * leases (PostgreSQL) a failed batch is the cluster's (hf_cluster_batch_failed: the memory
 * is one load away, and the renewal on the thread pool brings the units back once the
 * database is) and never comes here; here is SQLite, whose failure is final. Reads go on from the durable
 * state when it can be trusted: after a failed write it is final (the store let the earlier
 * syncs settle first), after a failed fsync it is not (the kernel may have dropped pages that
 * the process would still read back). */
static void store_failure(hf_engine_t *engine, const char *error, bool reads_trusted) {
    hf_context_t *context = &engine->context;
    /* What became durable with the news of the failure is still acknowledged. */
    hf_http_server_release(engine->http, context->durable_sequence);
    hf_log(HF_LOG_ERROR, "store failed, answering 503 from now on: %s", error);
    context->store_failed = true;
    hf_batch_clear(context->open_batch);
    for (uint64_t s = context->durable_sequence + 1; s < context->open_sequence; s++)
        hf_streams_batch_durable(&engine->streams, s, false);
    hf_streams_fail(&engine->streams);
    /* Answered before the reload, which reads the files again. */
    hf_http_server_fail_pending(engine->http, context->durable_sequence);
    if (reads_trusted) reload_durable_state(engine);
}

/* Takes back every finished batch, keeping one as the spare; true when there was one. *ok
 * is false when one failed, with the first failure's reason in error: a store that overlaps
 * batches hands back the failed one and those behind it at once. */
static bool spares_take(hf_engine_t *engine, bool *ok, char *error, size_t error_size) {
    bool any = false, batch_ok = true;
    char batch_error[512];
    hf_batch_t *batch;
    while ((batch = hf_store_take_result(engine->context.store, NULL, &batch_ok, batch_error,
                                         sizeof batch_error)) != NULL) {
        any = true;
        if (ok != NULL && !batch_ok && *ok) {
            *ok = false;
            snprintf(error, error_size, "%s", batch_error);
        }
        if (engine->spare_batch == NULL) engine->spare_batch = batch;
        else hf_batch_destroy(batch);
    }
    return any;
}

/* Streams get each newly durable batch's changes in order; replies are released after the
 * next batch went to the store, since writing them takes longer than starting it. */
static void on_store_done(uv_async_t *handle) {
    hf_engine_t *engine = handle->data;
    hf_context_t *context = &engine->context;
    if (context->store_failed) {
        /* Still take back the batches written after the failure: shutdown waits for them. */
        spares_take(engine, NULL, NULL, 0);
        return;
    }
    /* The written batches first: a failed one is reported only once the syncs before it have
     * settled, so the durable sequence read after it is final. */
    bool written = true;
    char write_error[512] = "";
    bool batch = spares_take(engine, &written, write_error, sizeof write_error);

    char error[512] = "";
    uint64_t durable;
    bool synced = hf_store_durable(context->store, &durable, error, sizeof error);
    for (uint64_t s = context->durable_sequence + 1; s <= durable; s++)
        hf_streams_batch_durable(&engine->streams, s, true);
    if (durable > context->durable_sequence) {
        /* Read before anything else is submitted: submit_if_idle reuses the ring's slot of a
         * batch only once that batch is durable, and this is where the engine learns it. */
        context->durable_sequence = durable;
        context->durable_changes = context->batch_changes[durable % HF_STORE_BATCHES_IN_FLIGHT_MAX];
        hf_core_evict(context->core, context->durable_changes);
    }
    if (!synced) {
        store_failure(engine, error, false);
    } else if (batch && !written &&
               !engine->options.units->batch_failed(engine->cluster, write_error)) {
        store_failure(engine, write_error, true);
    } else {
        submit_if_idle(engine);
        hf_http_server_release(engine->http, context->durable_sequence);
    }
}

static void store_done_from_thread(void *context) {
    hf_engine_t *engine = context;
    uv_async_send(&engine->store_done);
}

/* ---- expiry ---- */

static void arm_expiry_timer(hf_engine_t *engine);

static void on_expiry_timer(uv_timer_t *timer) {
    hf_engine_t *engine = timer->data;
    hf_context_t *context = &engine->context;
    engine->expiry_armed_ms = INT64_MAX;
    if (!context->store_failed) hf_core_advance(context->core, hf_context_now_ms(context));
    /* Submitted here, not left to the check callback: with no I/O the loop would sleep in
     * poll until the next event before reaching it. */
    submit_if_idle(engine);
    arm_expiry_timer(engine);
}

static void arm_expiry_timer(hf_engine_t *engine) {
    /* After a store failure nothing expires (the core stays at the durable state): a deadline
     * already due would re-arm the timer at once from its own callback, forever. */
    int64_t next = engine->context.store_failed ? INT64_MAX
                                                : hf_core_next_expiry(engine->context.core);
    if (next == engine->expiry_armed_ms) return;
    engine->expiry_armed_ms = next;
    if (next == INT64_MAX) {
        uv_timer_stop(&engine->expiry_timer);
        return;
    }
    int64_t delay = next - hf_context_now_ms(&engine->context);
    uv_timer_start(&engine->expiry_timer, on_expiry_timer, delay > 0 ? (uint64_t)delay : 0, 0);
}

/* ---- shutdown ---- */

static void close_handles(hf_engine_t *engine) {
    engine->options.units->stop(
        engine->cluster); /* hands the leases back: all is durable or failed */
    hf_outbox_stop(engine->context.outbox);
    hf_http_server_close(engine->http);
    uv_close((uv_handle_t *)&engine->store_done, NULL);
    uv_close((uv_handle_t *)&engine->check, NULL);
    uv_close((uv_handle_t *)&engine->expiry_timer, NULL);
    uv_close((uv_handle_t *)&engine->signal_term, NULL);
    uv_close((uv_handle_t *)&engine->signal_interrupt, NULL);
    uv_close((uv_handle_t *)&engine->shutdown_timer, NULL);
    uv_close((uv_handle_t *)&engine->keepalive_timer, NULL);
    uv_close((uv_handle_t *)&engine->dispatch_timer, NULL);
}

static bool drained(const hf_engine_t *engine) {
    const hf_context_t *context = &engine->context;
    return hf_batch_count(context->open_batch) == 0 && hf_store_idle(context->store) &&
           hf_http_server_pending(engine->http) == 0;
}

static void on_shutdown_timeout(uv_timer_t *timer) {
    hf_engine_t *engine = timer->data;
    hf_log(HF_LOG_ERROR, "shutdown: in-flight work did not finish in time");
    engine->exit_code = 1;
    close_handles(engine);
}

static void on_signal(uv_signal_t *handle, int signal_number) {
    hf_engine_t *engine = handle->data;
    if (engine->stopping) return;
    engine->stopping = true;
    hf_notify("STOPPING=1");
    HF_LOG_FIELDS(HF_LOG_INFO, "stopping: finishing in-flight work",
                  HF_LOG_TEXT("signal", signal_number == SIGTERM ? "SIGTERM" : "SIGINT"));
    hf_http_server_stop_accepting(engine->http);
    /* No new attempt, and no state of one, holds the stop back: those in flight stay pending
     * in the store and are sent again at the next start. */
    hf_outbox_stop(engine->context.outbox);
    /* Drivers' last positions go with what is in flight. */
    if (!engine->context.store_failed)
        hf_dispatch_flush(engine->context.core, hf_context_now_ms(&engine->context), UINT32_MAX);
    uv_timer_start(&engine->shutdown_timer, on_shutdown_timeout, HF_SHUTDOWN_GRACE_MS, 0);
}

/* ---- cancel jobs ---- */

/* Whether a job's step may go into the open batch now: when the batch goes to the store at
 * once with the turn's requests (it makes their commit longer by a bounded step only), or,
 * with no request, when the store has finished with every batch (written and durable), so a
 * request that comes while the lone step commits waits for that one short batch only. */
static bool job_may_step(const hf_engine_t *engine) {
    const hf_context_t *context = &engine->context;
    if (context->store_failed || engine->stopping || !hf_core_jobs_running(context->core))
        return false;
    size_t open = hf_batch_count(context->open_batch);
    if (open != 0) return store_takes(engine, open);
    return hf_store_idle(context->store) && context->durable_sequence + 1 == context->open_sequence;
}

/* One step of the running cancel jobs, at most HF_JOB_STEP_ORDERS orders and
 * HF_JOB_STEP_RECORDS records, at the end of the loop's turn, into the batch about to go to
 * the store: the step is durable whole or not at all (a restart resumes at the cursor). No
 * handle keeps the loop awake for it: a lone step is due only once the store has made every
 * batch durable, and the news of that (on_store_done) wakes the loop, whose check runs next. */
static void job_step(hf_engine_t *engine) {
    hf_context_t *context = &engine->context;
    if (!job_may_step(engine)) return;
    hf_time_ms_t now = hf_context_now_ms(context);
    hf_core_advance(context->core, now); /* a step is a command: at the core's time */
    hf_core_job_step_bounded(context->core, HF_JOB_STEP_ORDERS, HF_JOB_STEP_RECORDS, now);
}

/* After every loop turn: a step of the cancel jobs when one is due, hand what this turn
 * applied to the store, re-arm the expiry timer, and finish a shutdown once everything is
 * durable and answered. */
static void on_check(uv_check_t *handle) {
    hf_engine_t *engine = handle->data;
    job_step(engine);
    submit_if_idle(engine);
    arm_expiry_timer(engine);
    if (engine->stopping && (drained(engine) || engine->context.store_failed)) {
        if (engine->context.store_failed) engine->exit_code = 1;
        close_handles(engine);
    }
}

/* ---- set-up ---- */

static void create_demo_event(hf_engine_t *engine) {
    hf_context_t *context = &engine->context;
    if (hf_core_event(context->core, "demo", NULL)) return;
    hf_row_definition_t floor_rows[6], balcony_rows[4];
    for (int i = 0; i < 6; i++) floor_rows[i] = (hf_row_definition_t){{(char)('A' + i), 0}, 20};
    for (int i = 0; i < 4; i++) balcony_rows[i] = (hf_row_definition_t){{(char)('A' + i), 0}, 24};
    hf_section_definition_t sections[2] = {{"FLOOR", 45000, 6, floor_rows},
                                           {"BALCONY", 12000, 4, balcony_rows}};
    hf_pool_definition_t pools[1] = {{"GA", 500, 9900}};
    hf_event_definition_t definition = {.id = "demo",
                                        .name = "Holdfast demo night",
                                        .currency = "USD",
                                        .hold_ttl_ms = 600000,
                                        .max_hold_ms = 1800000,
                                        .max_seats_per_user = 8,
                                        .max_seats_per_hold = 10,
                                        .section_count = 2,
                                        .sections = sections,
                                        .pool_count = 1,
                                        .pools = pools};
    hf_error_detail_t detail;
    hf_error_t error = hf_core_event_create(context->core, &definition, hf_context_now_ms(context),
                                            &detail);
    if (error) hf_log(HF_LOG_ERROR, "could not create the demo event");
    else hf_log(HF_LOG_INFO, "created the demo event \"demo\"");
}

static void on_keepalive(uv_timer_t *timer) {
    hf_engine_t *engine = timer->data;
    hf_streams_keepalive(&engine->streams);
}

/* Drivers' positions are soft state (core/dispatch/dispatch.h): those changed in the last
 * second join the open batch, which no reply waits for. */
static void on_dispatch_flush(uv_timer_t *timer) {
    hf_engine_t *engine = timer->data;
    if (engine->context.store_failed) return;
    if (hf_dispatch_flush(engine->context.core, hf_context_now_ms(&engine->context),
                          HF_DISPATCH_FLUSH_DRIVERS_MAX) > 0)
        submit_if_idle(engine);
}

static void init_handles(hf_engine_t *engine) {
    uv_loop_t *loop = engine->loop;
    uv_async_init(loop, &engine->store_done, on_store_done);
    uv_check_init(loop, &engine->check);
    uv_timer_init(loop, &engine->expiry_timer);
    uv_timer_init(loop, &engine->shutdown_timer);
    uv_timer_init(loop, &engine->keepalive_timer);
    engine->keepalive_timer.data = engine;
    uv_timer_start(&engine->keepalive_timer, on_keepalive, HF_STREAM_KEEPALIVE_MS,
                   HF_STREAM_KEEPALIVE_MS);
    uv_timer_init(loop, &engine->dispatch_timer);
    engine->dispatch_timer.data = engine;
    uv_timer_start(&engine->dispatch_timer, on_dispatch_flush, HF_DISPATCH_FLUSH_INTERVAL_MS,
                   HF_DISPATCH_FLUSH_INTERVAL_MS);
    uv_signal_init(loop, &engine->signal_term);
    uv_signal_init(loop, &engine->signal_interrupt);
    engine->store_done.data = engine->check.data = engine->expiry_timer.data = engine;
    engine->shutdown_timer.data = engine->signal_term.data = engine->signal_interrupt.data = engine;
    engine->expiry_armed_ms = INT64_MAX;
    uv_check_start(&engine->check, on_check);
    uv_signal_start(&engine->signal_term, on_signal, SIGTERM);
    uv_signal_start(&engine->signal_interrupt, on_signal, SIGINT);
}

static void emit_to_open_batch(void *context, const hf_mutation_t *mutation);

/* Every unit (one node), or with leases the units this node may take (cluster.h). */
static int load_units(hf_engine_t *engine, hf_progress_t *progress, char *error,
                      size_t error_size) {
    hf_context_t *context = &engine->context;
    char listen[300];
    snprintf(listen, sizeof listen, "%s:%d", engine->options.host, engine->options.port);
    char advertise[320];
    snprintf(advertise, sizeof advertise, "http://%s", listen);
    const hf_units_methods_t *units = engine->options.units;
    hf_units_config_t config = {
        .node_id = engine->options.node_id ? engine->options.node_id : listen,
        .address = engine->options.advertise ? engine->options.advertise : advertise,
        .finished_holds_max = engine->options.finished_holds_max,
        .finished_rides_max = engine->options.finished_rides_max,
        .sink = {emit_to_open_batch, engine},
        .resume = engine->options.resume};
    engine->cluster = units->create(engine->loop, context, &config);
    context->cluster = engine->cluster;
    if (!units->leased(engine->cluster))
        return hf_restore_load_progress(context, context->store, engine->options.finished_holds_max,
                                        progress, error, error_size);
    if (units->load(engine->cluster) == 0) return 0;
    snprintf(error, error_size, "cannot take this node's units");
    return -1;
}

static bool open_store(hf_engine_t *engine) {
    char error[512];
    hf_context_t *context = &engine->context;
    hf_progress_t progress;
    hf_progress_begin(&progress, "loading the store", engine->options.progress);
    bool ok = hf_store_open(&context->store, engine->options.store_url, error, sizeof error) == 0 &&
              load_units(engine, &progress, error, sizeof error) == 0;
    hf_progress_end(&progress);
    if (!ok)
        HF_LOG_FIELDS(HF_LOG_ERROR, "cannot open the store",
                      HF_LOG_TEXT("store", engine->options.store_url), HF_LOG_TEXT("error", error));
    else
        HF_LOG_FIELDS(HF_LOG_INFO, "store loaded", HF_LOG_NUMBER("rows", progress.done),
                      HF_LOG_NUMBER("duration_ms",
                                    (hf_clock_monotonic_seconds() - progress.started_s) * 1000));
    return ok;
}

/* The core's sink: the open batch of the moment. */
static void emit_to_open_batch(void *context, const hf_mutation_t *mutation) {
    hf_engine_t *engine = context;
    if (mutation->type == HF_MUTATION_SEAT || mutation->type == HF_MUTATION_POOL ||
        mutation->type == HF_MUTATION_CALENDAR_CHANGE)
        hf_streams_record(&engine->streams, mutation);
    /* Seat and pool changes are for streams only: the store derives both from the holds and
     * orders, so copying them into the batch would be work for nothing. */
    if (mutation->type != HF_MUTATION_POOL && mutation->type != HF_MUTATION_SEAT) {
        hf_batch_append(engine->context.open_batch, mutation);
        if (engine->context.outbox) hf_outbox_appended(engine->context.outbox, mutation);
    }
}

hf_engine_t *hf_engine_create(uv_loop_t *loop, const hf_engine_options_t *options) {
    hf_engine_t *engine = calloc(1, sizeof *engine);
    if (!engine) abort();
    hf_arena_allocator_install();
    engine->loop = loop;
    engine->options = *options;
    hf_context_t *context = &engine->context;
    context->open_batch = hf_batch_create();
    engine->spare_batch = hf_batch_create();
    context->open_sequence = 1;
    hf_idempotency_init(&engine->idempotency);
    context->idempotency = &engine->idempotency;
    hf_streams_init(&engine->streams, context);
    context->streams = &engine->streams;
    size_t route_count;
    const hf_route_t *const *routes = options->routes(&route_count);
    hf_metrics_init(&engine->metrics, routes, route_count,
                    options->version ? options->version : "unknown", hf_context_now_ms(context));
    context->metrics = &engine->metrics;
    context->api_key = options->api_key;
    context->webhook_secret = options->webhook_secret;
    context->token_secret = options->token_secret;
    context->user_token_secret = options->user_token_secret;
    context->cors_origins = options->cors_origins;
    context->cors_origin_count = options->cors_origin_count;
    /* The sink follows the open batch, which changes at every submit. */
    context->core = hf_core_create((hf_mutation_sink_t){emit_to_open_batch, engine});
    hf_core_set_stream_records(context->core, false); /* until a stream opens (streams.c) */
    hf_core_set_finished_max(context->core, engine->options.finished_holds_max);
    hf_dispatch_set_finished_max(context->core, engine->options.finished_rides_max);
    if (!open_store(engine)) goto fail;
    char error[256];
    context->outbox = hf_outbox_create(loop, context, &options->notify, error, sizeof error);
    if (context->outbox == NULL) {
        hf_log(HF_LOG_ERROR, "cannot set up notifications: %s", error);
        goto fail;
    }
    hf_http_config_t config = {options->host,  options->port,        options->dispatch,
                               context,        hf_metrics_answered,  options->access_log,
                               options->bound, options->bound_socket};
    engine->options.bound = false; /* the server's now */
    if (hf_http_server_start(&engine->http, loop, &config, error, sizeof error) != 0) {
        hf_log(HF_LOG_ERROR, "cannot listen on %s:%d: %s", options->host, options->port, error);
        goto fail;
    }
    engine->metrics.http = engine->http;
    init_handles(engine);
    engine->options.units->start(engine->cluster, engine->http);
    hf_outbox_start(context->outbox);
    if (hf_store_start(context->store, store_done_from_thread, engine) != 0) {
        hf_log(HF_LOG_ERROR, "cannot start the store's writer and syncer threads");
        goto fail;
    }
    return engine;
fail:
    hf_engine_destroy(engine);
    return NULL;
}

int hf_engine_run(hf_engine_t *engine) {
    /* Holds and offers that lapsed while the server was down expire now, durably, before any
     * request; searching rides that a restored driver fits are offered to it. */
    hf_core_advance(engine->context.core, hf_context_now_ms(&engine->context));
    hf_dispatch_rematch(engine->context.core, hf_context_now_ms(&engine->context));
    if (engine->options.demo) create_demo_event(engine);
    if (!engine->options.api_key || !*engine->options.api_key)
        hf_log(HF_LOG_WARNING, "no API key configured: /v1/ is served without authentication");
    if (!engine->options.webhook_secret || !*engine->options.webhook_secret)
        hf_log(HF_LOG_WARNING, "no webhook secret configured: POST /v1/webhooks/payments "
                               "answers 503 webhooks_not_configured");
    char listen[300];
    snprintf(listen, sizeof listen, "%s:%d", engine->options.host, engine->options.port);
    HF_LOG_FIELDS(HF_LOG_INFO, "started", HF_LOG_TEXT("listen", listen),
                  HF_LOG_TEXT("store", engine->options.store_url),
                  HF_LOG_TEXT("version", engine->options.version));
    hf_notify("READY=1");
    uv_run(engine->loop, UV_RUN_DEFAULT);
    HF_LOG_FIELDS(engine->exit_code == 0 ? HF_LOG_INFO : HF_LOG_ERROR,
                  engine->exit_code == 0 ? "stopped cleanly" : "stopped with errors",
                  HF_LOG_NUMBER("exit_code", engine->exit_code));
    return engine->exit_code;
}

void hf_engine_destroy(hf_engine_t *engine) {
    if (!engine) return;
    if (engine->options.bound) close(engine->options.bound_socket); /* never listened on */
    if (engine->context.store) hf_store_close(engine->context.store);
    if (engine->http) hf_http_server_free(engine->http);
    engine->options.units->free(engine->cluster);
    hf_outbox_free(engine->context.outbox);
    hf_core_destroy(engine->context.core);
    if (engine->context.open_batch) hf_batch_destroy(engine->context.open_batch);
    if (engine->spare_batch) hf_batch_destroy(engine->spare_batch);
    hf_idempotency_free(&engine->idempotency);
    hf_streams_free(&engine->streams);
    free(engine->context.domain_scratch);
    free(engine);
    hf_arena_release();
}
