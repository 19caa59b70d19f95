/* Live streams (API.md section 5): the subscribers of each event, the ids of its changes, the
 * changes of each batch until it is durable, and the replay windows that let a client that
 * reconnects with Last-Event-ID resume where it stopped (replay.h).
 *
 * An event's changes are numbered (each gets an id, replay.h) while it has a subscriber or a
 * window; the core's SEAT and POOL records of such an event are kept, compact and numbered,
 * in the open batch's publish buffer as they are emitted. When a batch is durable its changes
 * go into their events' windows and, as SSE text, to every subscriber whose position is
 * before them. A window is made when its event first gets a subscriber and outlives the
 * subscribers (whoever lost a connection needs what changed since); at most
 * HF_STREAM_REPLAY_EVENTS_MAX exist, and a new one replaces the window of the event least
 * recently subscribed to, one without an open stream first.
 *
 * Ownership: the engine owns the hf_streams_t (engine.c) and reaches it through the request
 * context; the streams own their subscribers, windows and buffers. A subscriber lives until
 * the HTTP layer reports its stream closed. Loop thread only. */
#ifndef HF_ENGINE_STREAMS_H
#define HF_ENGINE_STREAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "engine/context.h"
#include "engine/replay.h"
#include "lib/buffer.h"
#include "lib/json.h"
#include "net/http.h"

/* A calendar's stream (API.md section 12) is keyed past every event's index: wherever a
 * function below takes an event_index, HF_STREAM_CALENDAR_BASE + the calendar's index names
 * the calendar's stream, whose changes are the core's CALENDAR_CHANGE records. */
#define HF_STREAM_CALENDAR_BASE HF_EVENTS_MAX

typedef struct hf_subscriber hf_subscriber_t;
/* An event's subscribers and ids (streams.c). */
typedef struct hf_stream_event hf_stream_event_t;

/* One event's replay window. */
typedef struct hf_stream_window {
    hf_replay_ring_t ring; /* slots allocated at the window's first use, then reused */
    uint32_t event;        /* the event it serves */
    uint64_t subscribed;   /* stamp of that event's latest subscription */
} hf_stream_window_t;

typedef struct hf_streams {
    hf_context_t *context;     /* for the core of the moment and the clock */
    hf_stream_event_t *events; /* by event index */
    uint32_t event_capacity;
    uint32_t count; /* open streams */
    hf_stream_window_t windows[HF_STREAM_REPLAY_EVENTS_MAX];
    uint32_t window_count;    /* windows in use: the first window_count */
    uint64_t subscriptions;   /* subscriptions so far: the windows' stamps */
    bool numbering;           /* some event's changes are numbered: records are wanted */
    bool failed;              /* the store failed: no window, no change any more */
    hf_buffer_t publish_open; /* numbered changes of the open batch */
    /* Those of each batch handed to the store and not yet durable, by sequence modulo the
     * ring's size. */
    hf_buffer_t publish_flight[HF_STORE_BATCHES_IN_FLIGHT_MAX];
    hf_buffer_t text; /* one change as SSE text, sent to each subscriber */
} hf_streams_t;

/* context is borrowed for the life of the streams. */
void hf_streams_init(hf_streams_t *streams, hf_context_t *context);
/* Frees the buffers, windows and lists (after every stream closed). */
void hf_streams_free(hf_streams_t *streams);
/* Whether another stream may open (HF_STREAMS_MAX). */
bool hf_streams_room(const hf_streams_t *streams);
/* For a client that has every change of event event_index up to last_id: when the event's
 * window covers it, appends every later durable change to out as SSE events, sets *position
 * to the newest one's id and returns true; otherwise false, out untouched (a snapshot is due). */
bool hf_streams_replay(hf_streams_t *streams, uint32_t event_index, uint64_t last_id,
                       hf_buffer_t *out, uint64_t *position);
/* The id a snapshot of the event taken now carries: its newest change's. Starts numbering
 * the event's changes (in a new epoch) when they are not numbered yet; the caller subscribes
 * at once. */
uint64_t hf_streams_snapshot_id(hf_streams_t *streams, uint32_t event_index);
/* Turns response, whose body holds the snapshot or the replay, into a stream of the changes
 * of event event_index numbered after position, and gives the event a window. */
void hf_streams_subscribe(hf_streams_t *streams, uint32_t event_index, uint64_t position,
                          hf_http_response_t *response);
/* Numbers a SEAT, POOL or CALENDAR_CHANGE record into the open batch's publish buffer (when
 * its event's or calendar's changes are numbered). */
void hf_streams_record(hf_streams_t *streams, const hf_mutation_t *mutation);
/* The open batch went to the store as batch sequence: its changes now wait for it to be
 * durable. */
void hf_streams_batch_submitted(hf_streams_t *streams, uint64_t sequence);
/* Batch sequence is durable (ok) or lost: keep and send or drop its changes. Called for each
 * batch in sequence order. */
void hf_streams_batch_durable(hf_streams_t *streams, uint64_t sequence, bool ok);
void hf_streams_keepalive(hf_streams_t *streams);
/* The store failed: every stream closes, the windows are dropped (a reconnect gets a
 * snapshot of the durable state) and no change is numbered any more. */
void hf_streams_fail(hf_streams_t *streams);
/* As hf_streams_fail, but streams may open again: the core was rebuilt (a node that lost a
 * unit, cluster/cluster.h), so every stream closes and its reconnect gets a snapshot. */
void hf_streams_reset(hf_streams_t *streams);
/* The event's layout changed or the event was deleted (its slot may serve another event):
 * its streams close (a reconnect gets a snapshot of what it is now, or a 404), its window
 * goes, and its changes not yet published are dropped (their seat indexes are of the old
 * layout). */
void hf_streams_forget(hf_streams_t *streams, uint32_t event_index);

/* GET .../stream of the unit whose stream is key (an event's index, or a calendar's past
 * HF_STREAM_CALENDAR_BASE): 503 when no stream has room; a HEAD's head alone; else the replay
 * after Last-Event-ID when the window still has it, or a snapshot whose data snapshot_write
 * writes (the unit's summary), then the request is subscribed. One opener for every unit. */
struct hf_request;
typedef void (*hf_stream_snapshot_fn)(hf_json_t *json, const void *unit, const hf_core_t *core);
void hf_streams_open(struct hf_request *request, uint32_t key, hf_stream_snapshot_fn snapshot_write,
                     const void *unit);

#endif
