/* Live streams (API.md section 5): the subscribers of each event, and the seat and pool
 * changes of each batch until it is durable. The core's SEAT and POOL records are formatted
 * as they are emitted into the open batch's publish buffer; when a batch is durable its
 * buffer is sent to the subscribers of each event that subscribed before that batch.
 *
 * Ownership: the engine owns the hf_streams_t (engine.c) and reaches it through the request
 * context; the streams own their subscribers and buffers. A subscriber lives until the HTTP
 * layer reports its stream closed. Loop thread only. */
#ifndef HF_ENGINE_STREAMS_H
#define HF_ENGINE_STREAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "engine/context.h"
#include "lib/buffer.h"
#include "net/http.h"

typedef struct hf_subscriber hf_subscriber_t;

typedef struct hf_streams {
    hf_context_t *context;       /* for the core of the moment and the reply sequence */
    hf_subscriber_t **subscriber_lists; /* by event index */
    uint32_t subscriber_lists_count;
    uint32_t count;              /* open streams */
    hf_buffer_t publish_open;    /* seat and pool changes of the open batch, as SSE text */
    /* Those of each batch handed to the store and not yet durable, by sequence modulo the
     * ring's size. */
    hf_buffer_t publish_flight[HF_STORE_BATCHES_IN_FLIGHT_MAX];
} hf_streams_t;

/* context is borrowed for the life of the streams. */
void hf_streams_init(hf_streams_t *streams, hf_context_t *context);
/* Frees the buffers and lists (after every stream closed). */
void hf_streams_free(hf_streams_t *streams);
/* Whether another stream may open (HF_STREAMS_MAX). */
bool hf_streams_room(const hf_streams_t *streams);
/* Turns response, whose body holds the snapshot, into a stream of the changes of event
 * event_index made after everything applied so far. */
void hf_streams_subscribe(hf_streams_t *streams, uint32_t event_index,
                          hf_http_response_t *response);
/* Formats a SEAT or POOL record into the open batch's publish buffer (if anyone listens). */
void hf_streams_record(hf_streams_t *streams, const hf_mutation_t *mutation);
/* The open batch went to the store as batch sequence: its changes now wait for it to be
 * durable. */
void hf_streams_batch_submitted(hf_streams_t *streams, uint64_t sequence);
/* Batch sequence is durable (ok) or lost: send or drop its changes. Called for each batch in
 * sequence order. */
void hf_streams_batch_durable(hf_streams_t *streams, uint64_t sequence, bool ok);
void hf_streams_keepalive(hf_streams_t *streams);
void hf_streams_close_all(hf_streams_t *streams);

#endif
