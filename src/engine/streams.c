/* Live updates (API.md section 5): a snapshot, then seat and pool changes in the order they
 * became durable. The core's SEAT and POOL records are formatted as they are emitted into the
 * open batch's publish buffer; when a batch is durable its buffer is sent to the subscribers
 * of each event that subscribed before that batch. */
#include "engine/internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

struct hf_subscriber {
    hf_engine_t *engine;
    hf_http_stream_t *stream;
    uint32_t event;
    uint64_t from_sequence;      /* changes of batches after this one are sent, */
    size_t from_offset;          /* and of this one from this offset of its publish buffer */
    hf_subscriber_t *next, *previous;
};

/* Publish record: event index, text length, text. */
typedef struct publish_head {
    uint32_t event;
    uint32_t length;
} publish_head_t;

static hf_subscriber_t **event_list(hf_engine_t *engine, uint32_t event) {
    if (event >= engine->subscriber_lists_count) {
        uint32_t count = event + 16;
        hf_subscriber_t **lists = realloc(engine->subscriber_lists, count * sizeof *lists);
        if (!lists) abort();
        memset(lists + engine->subscriber_lists_count, 0,
               (count - engine->subscriber_lists_count) * sizeof *lists);
        engine->subscriber_lists = lists;
        engine->subscriber_lists_count = count;
    }
    return &engine->subscriber_lists[event];
}

static bool has_subscribers(const hf_engine_t *engine, uint32_t event) {
    return event < engine->subscriber_lists_count && engine->subscriber_lists[event] != NULL;
}

void hf_streams_record(hf_engine_t *engine, const hf_mutation_t *mutation) {
    /* Nobody listens most of the time: then not even the event is looked up. */
    if (engine->stream_count == 0) return;
    uint32_t event;
    if (!hf_core_event(engine->core, mutation->event_id, &event) || !has_subscribers(engine, event))
        return;
    hf_buffer_t *out = &engine->publish_open;
    size_t head_at = out->length;
    publish_head_t head = {event, 0};
    hf_buffer_append(out, &head, sizeof head);
    size_t text_at = out->length;
    if (mutation->type == HF_MUTATION_SEAT) {
        hf_buffer_printf(out, "event: seat\ndata: {\"id\":\"%s\",\"status\":\"%s\",\"version\":%u}\n\n",
                         mutation->seat_id, hf_seat_status_name((uint8_t)mutation->status),
                         mutation->version);
    } else {
        hf_buffer_printf(out, "event: pool\ndata: {\"id\":\"%s\",\"available\":%lld,\"held\":%lld,"
                         "\"sold\":%lld}\n\n", mutation->pool_id, (long long)mutation->available,
                         (long long)mutation->held, (long long)mutation->sold);
    }
    head.length = (uint32_t)(out->length - text_at);
    memcpy(out->data + head_at, &head, sizeof head);
}

static hf_buffer_t *flight_buffer(hf_engine_t *engine, uint64_t sequence) {
    return &engine->publish_flight[sequence % HF_STORE_BATCHES_IN_FLIGHT_MAX];
}

void hf_streams_batch_submitted(hf_engine_t *engine, uint64_t sequence) {
    hf_buffer_t *flight = flight_buffer(engine, sequence);
    assert(flight->length == 0); /* the engine never has more batches in flight than slots */
    hf_buffer_t swap = *flight;
    *flight = engine->publish_open;
    engine->publish_open = swap;
    hf_buffer_reset(&engine->publish_open);
}

void hf_streams_batch_durable(hf_engine_t *engine, uint64_t sequence, bool ok) {
    hf_buffer_t *flight = flight_buffer(engine, sequence);
    for (size_t at = 0; ok && at < flight->length;) {
        publish_head_t head;
        memcpy(&head, flight->data + at, sizeof head);
        const char *text = flight->data + at + sizeof head;
        for (hf_subscriber_t *subscriber = engine->subscriber_lists[head.event]; subscriber;
             subscriber = subscriber->next) {
            bool after = subscriber->from_sequence < sequence ||
                         (subscriber->from_sequence == sequence && at >= subscriber->from_offset);
            if (after) hf_http_stream_send(subscriber->stream, text, head.length);
        }
        at += sizeof head + head.length;
    }
    hf_buffer_reset(flight);
}

static void send_all(hf_engine_t *engine, const char *text) {
    for (uint32_t event = 0; event < engine->subscriber_lists_count; event++)
        for (hf_subscriber_t *subscriber = engine->subscriber_lists[event]; subscriber;
             subscriber = subscriber->next)
            hf_http_stream_send(subscriber->stream, text, strlen(text));
}

void hf_streams_keepalive(hf_engine_t *engine) { send_all(engine, ": keepalive\n\n"); }

void hf_streams_close_all(hf_engine_t *engine) {
    for (uint32_t event = 0; event < engine->subscriber_lists_count; event++)
        for (hf_subscriber_t *subscriber = engine->subscriber_lists[event]; subscriber;
             subscriber = subscriber->next)
            hf_http_stream_close(subscriber->stream);
}

static void on_stream_closed(void *context, hf_http_stream_t *stream) {
    hf_subscriber_t *subscriber = context;
    hf_engine_t *engine = subscriber->engine;
    (void)stream;
    if (subscriber->previous) subscriber->previous->next = subscriber->next;
    else engine->subscriber_lists[subscriber->event] = subscriber->next;
    if (subscriber->next) subscriber->next->previous = subscriber->previous;
    /* With no stream left the core stops writing out seat changes nobody reads. */
    if (--engine->stream_count == 0) hf_core_set_stream_records(engine->core, false);
    free(subscriber);
}

void hf_handle_event_stream(hf_request_t *request) {
    hf_engine_t *engine = request->engine;
    uint32_t event_index;
    const hf_event_t *event = hf_core_event(engine->core, request->params[0], &event_index);
    if (!event) {
        hf_reply_error(request, HF_API_ERROR_EVENT_NOT_FOUND, NULL, NULL);
        return;
    }
    if (engine->stream_count >= HF_STREAMS_MAX) {
        hf_reply_error(request, HF_API_ERROR_UNAVAILABLE, "too many open streams; retry later", NULL);
        return;
    }
    hf_subscriber_t *subscriber = calloc(1, sizeof *subscriber);
    if (!subscriber) abort();
    hf_http_response_t *response = request->response;
    response->status = 200;
    response->content_type = "text/event-stream";
    hf_buffer_reset(&response->body);
    hf_buffer_append_string(&response->body, "event: snapshot\ndata: ");
    hf_json_t json;
    hf_json_init(&json, &response->body);
    hf_render_event(&json, engine->core, event);
    hf_buffer_append_string(&response->body, "\n\n");
    /* The snapshot shows everything applied so far: later batches carry what it lacks. */
    subscriber->engine = engine;
    subscriber->event = event_index;
    subscriber->from_sequence = hf_engine_reply_sequence(engine);
    subscriber->from_offset = engine->publish_open.length;
    subscriber->stream = hf_http_response_stream(response, on_stream_closed, subscriber);
    hf_subscriber_t **list = event_list(engine, event_index);
    subscriber->next = *list;
    if (*list) (*list)->previous = subscriber;
    *list = subscriber;
    if (engine->stream_count++ == 0) hf_core_set_stream_records(engine->core, true);
}
