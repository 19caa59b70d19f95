/* Live updates (streams.h): a snapshot, then seat and pool changes in the order they became
 * durable. */
#include "engine/streams.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

struct hf_subscriber {
    hf_streams_t *streams;
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

static hf_subscriber_t **event_list(hf_streams_t *streams, uint32_t event) {
    if (event >= streams->subscriber_lists_count) {
        uint32_t count = event + 16;
        hf_subscriber_t **lists = realloc(streams->subscriber_lists, count * sizeof *lists);
        if (!lists) abort();
        memset(lists + streams->subscriber_lists_count, 0,
               (count - streams->subscriber_lists_count) * sizeof *lists);
        streams->subscriber_lists = lists;
        streams->subscriber_lists_count = count;
    }
    return &streams->subscriber_lists[event];
}

static bool has_subscribers(const hf_streams_t *streams, uint32_t event) {
    return event < streams->subscriber_lists_count && streams->subscriber_lists[event] != NULL;
}

void hf_streams_record(hf_streams_t *streams, const hf_mutation_t *mutation) {
    /* Nobody listens most of the time: then not even the event is looked up. */
    if (streams->count == 0) return;
    bool seat = mutation->type == HF_MUTATION_SEAT;
    const char *event_id = seat ? mutation->as.seat.event_id : mutation->as.pool.event_id;
    uint32_t event;
    if (!hf_core_event(streams->context->core, event_id, &event) ||
        !has_subscribers(streams, event))
        return;
    hf_buffer_t *out = &streams->publish_open;
    size_t head_at = out->length;
    publish_head_t head = {event, 0};
    hf_buffer_append(out, &head, sizeof head);
    size_t text_at = out->length;
    if (seat) {
        const hf_mutation_seat_t *change = &mutation->as.seat;
        hf_buffer_printf(out, "event: seat\ndata: {\"id\":\"%s\",\"status\":\"%s\",\"version\":%u}\n\n",
                         change->seat_id, hf_seat_status_name((uint8_t)change->status),
                         change->version);
    } else {
        const hf_mutation_pool_t *change = &mutation->as.pool;
        hf_buffer_printf(out, "event: pool\ndata: {\"id\":\"%s\",\"available\":%lld,\"held\":%lld,"
                         "\"sold\":%lld}\n\n", change->pool_id, (long long)change->available,
                         (long long)change->held, (long long)change->sold);
    }
    head.length = (uint32_t)(out->length - text_at);
    memcpy(out->data + head_at, &head, sizeof head);
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

void hf_streams_batch_durable(hf_streams_t *streams, uint64_t sequence, bool ok) {
    hf_buffer_t *flight = flight_buffer(streams, sequence);
    for (size_t at = 0; ok && at < flight->length;) {
        publish_head_t head;
        memcpy(&head, flight->data + at, sizeof head);
        const char *text = flight->data + at + sizeof head;
        for (hf_subscriber_t *subscriber = streams->subscriber_lists[head.event]; subscriber;
             subscriber = subscriber->next) {
            bool after = subscriber->from_sequence < sequence ||
                         (subscriber->from_sequence == sequence && at >= subscriber->from_offset);
            if (after) hf_http_stream_send(subscriber->stream, text, head.length);
        }
        at += sizeof head + head.length;
    }
    hf_buffer_reset(flight);
}

static void send_all(hf_streams_t *streams, const char *text) {
    for (uint32_t event = 0; event < streams->subscriber_lists_count; event++)
        for (hf_subscriber_t *subscriber = streams->subscriber_lists[event]; subscriber;
             subscriber = subscriber->next)
            hf_http_stream_send(subscriber->stream, text, strlen(text));
}

void hf_streams_keepalive(hf_streams_t *streams) {
    send_all(streams, ": keepalive\n\n");
}

void hf_streams_close_all(hf_streams_t *streams) {
    for (uint32_t event = 0; event < streams->subscriber_lists_count; event++)
        for (hf_subscriber_t *subscriber = streams->subscriber_lists[event]; subscriber;
             subscriber = subscriber->next)
            hf_http_stream_close(subscriber->stream);
}

static void on_stream_closed(void *context, hf_http_stream_t *stream) {
    hf_subscriber_t *subscriber = context;
    hf_streams_t *streams = subscriber->streams;
    (void)stream;
    if (subscriber->previous) subscriber->previous->next = subscriber->next;
    else streams->subscriber_lists[subscriber->event] = subscriber->next;
    if (subscriber->next) subscriber->next->previous = subscriber->previous;
    /* With no stream left the core stops writing out seat changes nobody reads. */
    if (--streams->count == 0) hf_core_set_stream_records(streams->context->core, false);
    free(subscriber);
}

bool hf_streams_room(const hf_streams_t *streams) {
    return streams->count < HF_STREAMS_MAX;
}

void hf_streams_subscribe(hf_streams_t *streams, uint32_t event_index,
                          hf_http_response_t *response) {
    hf_subscriber_t *subscriber = calloc(1, sizeof *subscriber);
    if (!subscriber) abort();
    /* The snapshot shows everything applied so far: later batches carry what it lacks. */
    subscriber->streams = streams;
    subscriber->event = event_index;
    subscriber->from_sequence = hf_context_reply_sequence(streams->context);
    subscriber->from_offset = streams->publish_open.length;
    subscriber->stream = hf_http_response_stream(response, on_stream_closed, subscriber);
    hf_subscriber_t **list = event_list(streams, event_index);
    subscriber->next = *list;
    if (*list) (*list)->previous = subscriber;
    *list = subscriber;
    if (streams->count++ == 0) hf_core_set_stream_records(streams->context->core, true);
}

void hf_streams_init(hf_streams_t *streams, hf_context_t *context) {
    memset(streams, 0, sizeof *streams);
    streams->context = context;
}

void hf_streams_free(hf_streams_t *streams) {
    hf_buffer_free(&streams->publish_open);
    for (size_t i = 0; i < HF_STORE_BATCHES_IN_FLIGHT_MAX; i++)
        hf_buffer_free(&streams->publish_flight[i]);
    free(streams->subscriber_lists);
    streams->subscriber_lists = NULL;
    streams->subscriber_lists_count = 0;
}
