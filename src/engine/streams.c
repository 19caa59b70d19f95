/* Live updates (streams.h): a snapshot or a replay, then seat and pool changes in the order
 * they became durable, each with its id. */
#include "engine/streams.h"

#include "engine/request.h"

#include "lib/spans.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

struct hf_subscriber {
    hf_streams_t *streams;
    hf_http_stream_t *stream;
    uint32_t event;
    uint64_t position; /* changes with a higher id are sent */
    hf_subscriber_t *next, *previous;
};

struct hf_stream_event {
    hf_subscriber_t *subscribers;
    uint64_t issued_id;    /* the newest change numbered: what a snapshot now shows */
    uint64_t published_id; /* the newest change durable (or the epoch's start) */
    uint32_t window;       /* index in streams->windows + 1; 0: none */
};

/* A numbered change waiting in a publish buffer for its batch to be durable. */
typedef struct publish {
    uint64_t id;
    uint32_t event;
    hf_replay_change_t change;
} publish_t;

static hf_stream_event_t *event_state(hf_streams_t *streams, uint32_t event) {
    if (event >= streams->event_capacity) {
        uint32_t capacity = event + 16;
        hf_stream_event_t *events = realloc(streams->events, capacity * sizeof *events);
        if (!events) abort();
        memset(events + streams->event_capacity, 0,
               (capacity - streams->event_capacity) * sizeof *events);
        streams->events = events;
        streams->event_capacity = capacity;
    }
    return &streams->events[event];
}

static bool numbered(const hf_stream_event_t *state) {
    return state->subscribers != NULL || state->window != 0;
}

/* The stream key of a record's event or calendar (HF_STREAM_CALENDAR_BASE), and its change
 * as the window keeps it; false for a unit that has gone. */
static bool record_change(const hf_core_t *core, const hf_mutation_t *mutation, uint32_t *key,
                          hf_replay_change_t *change) {
    if (mutation->type == HF_MUTATION_CALENDAR_CHANGE) {
        const hf_mutation_calendar_change_t *use = &mutation->as.calendar_change;
        if (!hf_core_calendar(core, use->calendar_id, key)) return false;
        *key += HF_STREAM_CALENDAR_BASE;
        /* A delta is a quantity, at most HF_RESOURCE_CAPACITY_MAX: it fits 32 bits. */
        *change = (hf_replay_change_t){use->resource, (uint32_t)use->from, (uint32_t)use->to,
                                       (int32_t)use->delta};
        return true;
    }
    bool seat = mutation->type == HF_MUTATION_SEAT;
    const char *event_id = seat ? mutation->as.seat.event_id : mutation->as.pool.event_id;
    if (!hf_core_event(core, event_id, key)) return false;
    if (seat) {
        const hf_mutation_seat_t *seat_change = &mutation->as.seat;
        *change = (hf_replay_change_t){seat_change->seat_index, seat_change->version,
                                       (uint32_t)seat_change->status, 0};
    } else {
        /* Units fit 32 bits: a pool holds at most HF_POOL_CAPACITY_MAX. */
        const hf_mutation_pool_t *pool = &mutation->as.pool;
        /* delta: the units the public may take, which allocations (API.md section 14) keep
         * below capacity - held - sold. */
        *change = (hf_replay_change_t){HF_REPLAY_POOL | pool->pool_index, (uint32_t)pool->held,
                                       (uint32_t)pool->sold, (int32_t)pool->available};
    }
    return true;
}

void hf_streams_record(hf_streams_t *streams, const hf_mutation_t *mutation) {
    /* Before the first stream nothing is numbered: then not even the event is looked up. */
    if (!streams->numbering) return;
    uint32_t key;
    publish_t publish = {0, 0, {0, 0, 0, 0}};
    if (!record_change(streams->context->core, mutation, &key, &publish.change) ||
        key >= streams->event_capacity || !numbered(&streams->events[key]))
        return;
    hf_stream_event_t *state = &streams->events[key];
    state->issued_id = hf_replay_id_next(state->issued_id, mutation->at_ms);
    publish.id = state->issued_id;
    publish.event = key;
    hf_buffer_append(&streams->publish_open, &publish, sizeof publish);
}

/* Appends change number id of a calendar as an SSE event: {"resource", "from", "to",
 * "delta"}, the steps in the calendar's unit. */
static void calendar_change_write(hf_buffer_t *out, const hf_calendar_t *calendar, uint64_t id,
                                  const hf_replay_change_t *change) {
    char from[HF_SPAN_INSTANT_SIZE], to[HF_SPAN_INSTANT_SIZE];
    bool night = calendar->definition.unit == HF_CALENDAR_NIGHT;
    if (night) {
        hf_span_date_format((int32_t)change->value, from);
        hf_span_date_format((int32_t)change->other, to);
    } else {
        hf_span_instant_format((int32_t)change->value, from);
        hf_span_instant_format((int32_t)change->other, to);
    }
    hf_buffer_printf(out,
                     "id: %llu\nevent: change\ndata: {\"resource\":\"%s\",\"from\":\"%s\","
                     "\"to\":\"%s\",\"delta\":%d}\n\n",
                     (unsigned long long)id, calendar->definition.resources[change->target].id,
                     from, to, change->delta);
}

/* Appends change number id of the event or calendar of stream key as an SSE event. */
static void change_write(hf_buffer_t *out, const hf_core_t *core, uint32_t key, uint64_t id,
                         const hf_replay_change_t *change) {
    if (key >= HF_STREAM_CALENDAR_BASE) {
        calendar_change_write(out, hf_core_calendar_at(core, key - HF_STREAM_CALENDAR_BASE), id,
                              change);
        return;
    }
    const hf_event_t *event = hf_core_event_at(core, key);
    if (!(change->target & HF_REPLAY_POOL)) {
        char seat_id[HF_SEAT_ID_SIZE_MAX + 1];
        hf_core_seat_id(event, change->target, seat_id);
        hf_buffer_printf(out,
                         "id: %llu\nevent: seat\ndata: {\"id\":\"%s\",\"status\":\"%s\","
                         "\"version\":%u}\n\n",
                         (unsigned long long)id, seat_id,
                         hf_seat_status_name((uint8_t)change->other), change->value);
        return;
    }
    const hf_pool_t *pool = &event->pools[change->target & ~HF_REPLAY_POOL];
    hf_buffer_printf(out,
                     "id: %llu\nevent: pool\ndata: {\"id\":\"%s\",\"available\":%lld,"
                     "\"held\":%lld,\"sold\":%lld",
                     (unsigned long long)id, pool->id, (long long)change->delta,
                     (long long)change->value, (long long)change->other);
    /* As the summary: allocated once the event has allocations. */
    if (hf_core_event_has_allocations(event))
        hf_buffer_printf(
            out, ",\"allocated\":%lld",
            (long long)(pool->capacity - change->value - change->other - change->delta));
    hf_buffer_printf(out, "}\n\n");
}

static hf_buffer_t *flight_buffer(hf_streams_t *streams, uint64_t sequence) {
    return &streams->publish_flight[sequence % HF_STORE_BATCHES_IN_FLIGHT_MAX];
}

void hf_streams_batch_submitted(hf_streams_t *streams, uint64_t sequence) {
    hf_buffer_t *flight = flight_buffer(streams, sequence);
    assert(flight->length == 0); /* the engine never has more batches in flight than slots */
    hf_buffer_t swap = *flight;
    *flight = streams->publish_open;
    streams->publish_open = swap;
    hf_buffer_reset(&streams->publish_open);
}

/* A durable change: into its event's window, and to the subscribers not past it. */
static void publish_durable(hf_streams_t *streams, const publish_t *publish) {
    hf_stream_event_t *state = &streams->events[publish->event];
    if (publish->id > state->published_id) state->published_id = publish->id;
    if (state->window)
        hf_replay_ring_append(&streams->windows[state->window - 1].ring, publish->id,
                              &publish->change);
    hf_buffer_t *text = &streams->text;
    hf_buffer_reset(text);
    for (hf_subscriber_t *subscriber = state->subscribers; subscriber;
         subscriber = subscriber->next) {
        if (subscriber->position >= publish->id) continue;
        if (text->length == 0)
            change_write(text, streams->context->core, publish->event, publish->id,
                         &publish->change);
        hf_http_stream_send(subscriber->stream, text->data, text->length);
    }
}

void hf_streams_batch_durable(hf_streams_t *streams, uint64_t sequence, bool ok) {
    hf_buffer_t *flight = flight_buffer(streams, sequence);
    for (size_t at = 0; ok && at < flight->length; at += sizeof(publish_t)) {
        publish_t publish;
        memcpy(&publish, flight->data + at, sizeof publish);
        publish_durable(streams, &publish);
    }
    hf_buffer_reset(flight);
}

bool hf_streams_replay(hf_streams_t *streams, uint32_t event_index, uint64_t last_id,
                       hf_buffer_t *out, uint64_t *position) {
    if (event_index >= streams->event_capacity) return false;
    const hf_stream_event_t *state = &streams->events[event_index];
    if (!state->window) return false;
    const hf_replay_ring_t *ring = &streams->windows[state->window - 1].ring;
    if (!hf_replay_ring_covers(ring, last_id)) return false;
    uint64_t last = hf_replay_ring_last(ring);
    for (uint64_t id = last_id + 1; id <= last; id++)
        change_write(out, streams->context->core, event_index, id, hf_replay_ring_at(ring, id));
    *position = last;
    return true;
}

uint64_t hf_streams_snapshot_id(hf_streams_t *streams, uint32_t event_index) {
    hf_stream_event_t *state = event_state(streams, event_index);
    if (!numbered(state) && !streams->failed) {
        /* Changes made while nobody numbered them have no ids: a new epoch tells every id
         * given out before from the positions of this one. Changes numbered before and
         * still in flight have lower ids, and the snapshot shows them. */
        state->issued_id = hf_replay_id_rebase(state->issued_id,
                                               hf_context_now_ms(streams->context));
        state->published_id = state->issued_id;
    }
    return state->issued_id;
}

/* A window for the event: the one it has, a new one, or the window of the event least
 * recently subscribed to, preferring one without an open stream. NULL after a failure. */
static hf_stream_window_t *window_take(hf_streams_t *streams, uint32_t event_index) {
    hf_stream_event_t *state = event_state(streams, event_index);
    if (streams->failed) return NULL;
    if (state->window) return &streams->windows[state->window - 1];
    uint32_t chosen = streams->window_count;
    if (chosen < HF_STREAM_REPLAY_EVENTS_MAX) {
        streams->window_count++;
    } else {
        chosen = 0;
        for (uint32_t i = 1; i < HF_STREAM_REPLAY_EVENTS_MAX; i++) {
            const hf_stream_window_t *a = &streams->windows[i], *b = &streams->windows[chosen];
            bool a_open = streams->events[a->event].subscribers != NULL;
            bool b_open = streams->events[b->event].subscribers != NULL;
            if (a_open != b_open ? !a_open : a->subscribed < b->subscribed) chosen = i;
        }
        /* Its event keeps numbering only while it has subscribers. */
        streams->events[streams->windows[chosen].event].window = 0;
    }
    hf_stream_window_t *window = &streams->windows[chosen];
    /* The window starts at what is durable: changes in flight join it as they become so. */
    if (!window->ring.changes) hf_replay_ring_init(&window->ring, state->published_id);
    else hf_replay_ring_reset(&window->ring, state->published_id);
    window->event = event_index;
    state->window = chosen + 1;
    return window;
}

static void on_stream_closed(void *context, hf_http_stream_t *stream) {
    hf_subscriber_t *subscriber = context;
    hf_streams_t *streams = subscriber->streams;
    (void)stream;
    hf_stream_event_t *state = &streams->events[subscriber->event];
    if (subscriber->previous) subscriber->previous->next = subscriber->next;
    else state->subscribers = subscriber->next;
    if (subscriber->next) subscriber->next->previous = subscriber->previous;
    streams->count--;
    free(subscriber);
}

void hf_streams_subscribe(hf_streams_t *streams, uint32_t event_index, uint64_t position,
                          hf_http_response_t *response) {
    hf_subscriber_t *subscriber = calloc(1, sizeof *subscriber);
    if (!subscriber) abort();
    subscriber->streams = streams;
    subscriber->event = event_index;
    subscriber->position = position;
    subscriber->stream = hf_http_response_stream(response, on_stream_closed, subscriber);
    hf_stream_window_t *window = window_take(streams, event_index);
    if (window) window->subscribed = ++streams->subscriptions;
    hf_stream_event_t *state = event_state(streams, event_index);
    subscriber->next = state->subscribers;
    if (state->subscribers) state->subscribers->previous = subscriber;
    state->subscribers = subscriber;
    streams->count++;
    /* From now on, as long as windows exist, which is for good: the core writes out seat and
     * pool changes only while someone numbers them. */
    if (!streams->numbering && !streams->failed) {
        streams->numbering = true;
        hf_core_set_stream_records(streams->context->core, true);
    }
}

static void send_all(hf_streams_t *streams, const char *text) {
    for (uint32_t event = 0; event < streams->event_capacity; event++)
        for (hf_subscriber_t *subscriber = streams->events[event].subscribers; subscriber;
             subscriber = subscriber->next)
            hf_http_stream_send(subscriber->stream, text, strlen(text));
}

void hf_streams_keepalive(hf_streams_t *streams) { send_all(streams, ": keepalive\n\n"); }

void hf_streams_fail(hf_streams_t *streams) {
    for (uint32_t event = 0; event < streams->event_capacity; event++) {
        streams->events[event].window = 0;
        for (hf_subscriber_t *subscriber = streams->events[event].subscribers; subscriber;
             subscriber = subscriber->next)
            hf_http_stream_close(subscriber->stream);
    }
    streams->window_count = 0;
    hf_buffer_reset(&streams->publish_open); /* its batch will never be written */
    streams->failed = true;
    streams->numbering = false;
    hf_core_set_stream_records(streams->context->core, false);
}

/* Drops the event's changes from a publish buffer (they are of a layout or an event gone). */
static void publish_drop(hf_buffer_t *buffer, uint32_t event_index) {
    size_t kept = 0;
    for (size_t at = 0; at < buffer->length; at += sizeof(publish_t)) {
        publish_t publish;
        memcpy(&publish, buffer->data + at, sizeof publish);
        if (publish.event == event_index) continue;
        memmove(buffer->data + kept, buffer->data + at, sizeof publish);
        kept += sizeof publish;
    }
    buffer->length = kept;
}

void hf_streams_forget(hf_streams_t *streams, uint32_t event_index) {
    if (event_index >= streams->event_capacity) return;
    hf_stream_event_t *state = &streams->events[event_index];
    for (hf_subscriber_t *subscriber = state->subscribers; subscriber;
         subscriber = subscriber->next)
        hf_http_stream_close(subscriber->stream);
    /* The window's slot stays with this index until another event takes it (window_take). */
    state->window = 0;
    publish_drop(&streams->publish_open, event_index);
    for (size_t i = 0; i < HF_STORE_BATCHES_IN_FLIGHT_MAX; i++)
        publish_drop(&streams->publish_flight[i], event_index);
}

void hf_streams_reset(hf_streams_t *streams) {
    hf_streams_fail(streams);
    streams->failed = false;
}

bool hf_streams_room(const hf_streams_t *streams) { return streams->count < HF_STREAMS_MAX; }

void hf_streams_init(hf_streams_t *streams, hf_context_t *context) {
    memset(streams, 0, sizeof *streams);
    streams->context = context;
}

void hf_streams_free(hf_streams_t *streams) {
    hf_buffer_free(&streams->publish_open);
    for (size_t i = 0; i < HF_STORE_BATCHES_IN_FLIGHT_MAX; i++)
        hf_buffer_free(&streams->publish_flight[i]);
    hf_buffer_free(&streams->text);
    for (size_t i = 0; i < HF_STREAM_REPLAY_EVENTS_MAX; i++)
        hf_replay_ring_free(&streams->windows[i].ring);
    free(streams->events);
    streams->events = NULL;
    streams->event_capacity = 0;
}

/* The position a reconnecting client gives (API.md section 5): Last-Event-ID, which
 * browsers' EventSource sends by itself. False when absent or not an id at all. */
static bool last_event_id(const hf_request_t *request, uint64_t *id) {
    size_t length;
    const char *value = hf_http_request_header(request->http, "Last-Event-ID", &length);
    return value && hf_replay_id_parse(value, length, id);
}

void hf_streams_open(hf_request_t *request, uint32_t key, hf_stream_snapshot_fn snapshot_write,
                     const void *unit) {
    hf_context_t *context = request->context;
    if (!hf_streams_room(context->streams)) {
        hf_reply_error(request, HF_API_ERROR_UNAVAILABLE, "too many open streams; retry later",
                       NULL);
        return;
    }
    hf_http_response_t *response = request->response;
    response->status = 200;
    response->content_type = "text/event-stream";
    hf_buffer_reset(&response->body);
    /* HEAD: the stream's head alone, and no subscriber left behind. */
    if (request->head) {
        hf_http_response_stream_head(response);
        return;
    }
    uint64_t last_id, position;
    if (last_event_id(request, &last_id) &&
        hf_streams_replay(context->streams, key, last_id, &response->body, &position)) {
        /* Only durable changes are replayed: the answer waits for nothing. */
        request->rests_on_known = true;
        request->rests_on_change = 0;
    } else {
        /* Too old, unknown, of another run or not an id: everything, as of now. */
        position = hf_streams_snapshot_id(context->streams, key);
        hf_buffer_printf(&response->body,
                         "id: %llu\nevent: snapshot\ndata: ", (unsigned long long)position);
        hf_json_t json;
        hf_json_init(&json, &response->body);
        snapshot_write(&json, unit, request->core);
        hf_buffer_append_string(&response->body, "\n\n");
    }
    hf_streams_subscribe(context->streams, key, position, response);
}
