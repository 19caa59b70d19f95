/* The outbox of notifications: the window, the units' cursors, retries (outbox.h). */
#include "engine/outbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/outbox_http.h"
#include "lib/hmac.h"
#include "lib/log.h"
#include "lib/map.h"
#include "store/history.h"

/* One notification in the window: its entry's key, its state, its body made once. */
typedef struct slot {
    bool used, in_flight;
    bool by_hand; /* made due by a retry by hand: the backlog's bound does not drop it */
    char unit[HF_ID_SIZE_MAX + 1];
    int64_t seq, at_ms;
    uint32_t attempts;
    int last_status;
    char last_error[HF_NOTIFY_ERROR_SIZE_MAX];
    int64_t next_attempt_ms;
    hf_buffer_t body;
} slot_t;

/* A unit this node delivers: how far its pending entries were read (cursor, a seq), and
 * whether more may wait. appended is the open sequence of the batch of its newest entry;
 * checked the sequence every batch up to which the last read saw. */
/* How many entries a unit had appended by the end of the batch of sequence (outbox.c's
 * durable head). */
typedef struct unit_mark {
    uint64_t sequence, count;
} unit_mark_t;

/* Marks kept per unit: a batch this many older than the open one is durable (the engine hands
 * over at most HF_STORE_BATCHES_IN_FLIGHT_MAX), so an older mark is folded into the floor. */
#define UNIT_MARKS (HF_STORE_BATCHES_IN_FLIGHT_MAX + 1)

typedef struct unit_state {
    char id[HF_ID_SIZE_MAX + 1];
    bool live;    /* false once the core no longer has it: its slot is free for another */
    bool more;    /* the last read filled its limit: more may follow */
    bool rewound; /* a retry by hand moved the cursor back: a read may meet slots it has */
    int64_t cursor;
    uint64_t appended, checked;
    int64_t pending; /* its notifications not yet delivered or failed */
    /* The durable head: the last seq committed when the state was made (base), then the
     * entries appended since, by batch, so that no entry is told before its batch is durable
     * (committed, a read would see it; durable, a crash of the machine keeps it). */
    int64_t base;
    uint64_t appended_count, durable_floor;
    unit_mark_t marks[UNIT_MARKS];
} unit_state_t;

struct hf_outbox {
    uv_loop_t *loop;
    hf_context_t *context;
    hf_outbox_config_t config;
    hf_outbox_http_t *http; /* NULL when no URL is set */
    uv_timer_t timer;
    bool started, stopped;
    slot_t *slots; /* HF_NOTIFY_WINDOW_MAX */
    uint32_t used;
    hf_map_t unit_index; /* unit id -> index in units */
    unit_state_t *units;
    uint32_t unit_count, unit_capacity;
    uint32_t next_read, next_send, ticks;
    hf_buffer_t entry; /* scratch: an entry's JSON */
    hf_outbox_stats_t stats;
};

/* ---- Units ---- */

static unit_state_t *unit_find(hf_outbox_t *outbox, const char *id) {
    uint32_t index;
    if (!hf_map_get(&outbox->unit_index, id, strlen(id), &index)) return NULL;
    return &outbox->units[index];
}

/* A new unit's slot in the table, indexed by its id. */
static unit_state_t *unit_add(hf_outbox_t *outbox, const char *id) {
    if (outbox->units == NULL || outbox->unit_count == outbox->unit_capacity) {
        outbox->unit_capacity = outbox->unit_capacity ? 2 * outbox->unit_capacity : 64;
        outbox->units = realloc(outbox->units, outbox->unit_capacity * sizeof *outbox->units);
        if (outbox->units == NULL) abort();
    }
    hf_map_put(&outbox->unit_index, id, strlen(id), outbox->unit_count);
    return &outbox->units[outbox->unit_count++];
}

/* The unit's state, made (live, with its pending count as the store has it) when missing; a
 * unit whose state went dead comes back counted again. NULL when the count cannot be read. */
static unit_state_t *unit_take(hf_outbox_t *outbox, const char *id) {
    unit_state_t *unit = unit_find(outbox, id);
    if (unit != NULL && unit->live) return unit;
    int64_t pending = 0, last_seq = 0;
    char error[256];
    if (hf_store_outbox_pending(outbox->context->store, id, &pending, &last_seq, error,
                                sizeof error) != 0) {
        HF_LOG_FIELDS(HF_LOG_WARNING, "notifications: cannot count a unit's",
                      HF_LOG_TEXT("unit", id), HF_LOG_TEXT("error", error));
        return NULL;
    }
    bool again = unit != NULL;
    if (unit == NULL) unit = unit_add(outbox, id);
    *unit = (unit_state_t){.live = true,
                           .more = true,
                           .rewound = again,
                           .pending = pending,
                           .base = last_seq};
    snprintf(unit->id, sizeof unit->id, "%s", id);
    outbox->stats.pending += pending;
    return unit;
}

static void slot_free(hf_outbox_t *outbox, slot_t *slot) {
    slot->used = false;
    hf_buffer_reset(&slot->body);
    outbox->used--;
}

/* A unit the core no longer has (lost to another node, deleted): its notifications are the
 * next owner's, so the window lets go of them and its count leaves this node's. */
/* Whether the core has the unit: an event or a calendar (both keep an audit history). */
static bool unit_known(const hf_core_t *core, const char *id) {
    return hf_core_event(core, id, NULL) != NULL || hf_core_calendar(core, id, NULL) != NULL;
}

/* The hf_calendar_unit_t of the unit's calendar, or -1 for an event (or a unit gone). */
static int unit_calendar(const hf_core_t *core, const char *id) {
    const hf_calendar_t *calendar = hf_core_calendar(core, id, NULL);
    return calendar != NULL ? calendar->definition.unit : -1;
}

static void unit_lose(hf_outbox_t *outbox, unit_state_t *unit) {
    for (uint32_t i = 0; i < HF_NOTIFY_WINDOW_MAX; i++) {
        slot_t *slot = &outbox->slots[i];
        if (slot->used && !slot->in_flight && strcmp(slot->unit, unit->id) == 0)
            slot_free(outbox, slot);
    }
    outbox->stats.pending -= unit->pending;
    unit->live = false;
}

/* Every unit of the core has a live state, every other one none: a takeover's new units are
 * read from their cursor 0, a lost one's let go. Once a second (a scan of the core's events). */
static void units_follow(hf_outbox_t *outbox) {
    hf_core_t *core = outbox->context->core;
    for (uint32_t i = 0; i < outbox->unit_count; i++) {
        unit_state_t *unit = &outbox->units[i];
        if (unit->live && !unit_known(core, unit->id)) unit_lose(outbox, unit);
    }
    for (uint32_t i = 0; i < hf_core_event_count(core); i++) {
        const hf_event_t *event = hf_core_event_at(core, i);
        if (event != NULL) unit_take(outbox, event->id);
    }
    for (uint32_t i = 0; i < hf_core_calendar_count(core); i++)
        unit_take(outbox, hf_core_calendar_at(core, i)->definition.id);
}

void hf_outbox_appended(hf_outbox_t *outbox, const hf_mutation_t *mutation) {
    const char *type, *event_id;
    if (outbox->config.url == NULL || !hf_history_entry_of(mutation, &type, &event_id)) return;
    unit_state_t *unit = unit_take(outbox, event_id);
    if (unit == NULL) return;
    uint64_t sequence = outbox->context->open_sequence;
    unit_mark_t *mark = &unit->marks[sequence % UNIT_MARKS];
    if (mark->sequence != sequence) {
        if (mark->count > unit->durable_floor) unit->durable_floor = mark->count;
        mark->sequence = sequence;
    }
    mark->count = ++unit->appended_count;
    unit->appended = sequence;
    unit->pending++;
    outbox->stats.pending++;
}

/* The last seq of the unit whose batch is durable. */
static int64_t durable_head(const hf_outbox_t *outbox, const unit_state_t *unit) {
    uint64_t durable = outbox->context->durable_sequence, count = unit->durable_floor;
    for (uint32_t i = 0; i < UNIT_MARKS; i++) {
        const unit_mark_t *mark = &unit->marks[i];
        if (mark->sequence != 0 && mark->sequence <= durable && mark->count > count)
            count = mark->count;
    }
    return unit->base + (int64_t)count;
}

/* ---- The window ---- */

static slot_t *slot_find(const hf_outbox_t *outbox, const char *unit, int64_t seq) {
    for (uint32_t i = 0; i < HF_NOTIFY_WINDOW_MAX; i++) {
        slot_t *slot = &outbox->slots[i];
        if (slot->used && slot->seq == seq && strcmp(slot->unit, unit) == 0) return slot;
    }
    return NULL;
}

static slot_t *slot_empty(hf_outbox_t *outbox) {
    for (uint32_t i = 0; i < HF_NOTIFY_WINDOW_MAX; i++)
        if (!outbox->slots[i].used) return &outbox->slots[i];
    return NULL;
}

/* A read in progress: the unit read and how many rows came. */
typedef struct reading {
    hf_outbox_t *outbox;
    unit_state_t *unit;
    int64_t head; /* rows past it are not durable yet: the read stops there */
    uint32_t rows;
    bool held_back;
} reading_t;

static void state_copy(slot_t *slot, const hf_stored_history_t *entry) {
    slot->attempts = entry->notify_attempts;
    slot->last_status = entry->notify_last_status;
    snprintf(slot->last_error, sizeof slot->last_error, "%s",
             entry->notify_last_error ? entry->notify_last_error : "");
    slot->next_attempt_ms = entry->notify_next_attempt_ms;
}

/* Puts entry into slot, its body made now (the entry as the history shows it); false for a
 * damaged row. */
static bool slot_fill(hf_outbox_t *outbox, slot_t *slot, const hf_stored_history_t *entry) {
    hf_buffer_reset(&outbox->entry);
    int calendar = unit_calendar(outbox->context->core, entry->unit);
    if (!outbox->config.entry_write(&outbox->entry, entry, calendar)) return false;
    slot->used = true;
    slot->in_flight = slot->by_hand = false;
    outbox->used++;
    snprintf(slot->unit, sizeof slot->unit, "%s", entry->unit);
    slot->seq = entry->seq;
    slot->at_ms = entry->at_ms;
    state_copy(slot, entry);
    hf_notify_body_write(&slot->body, calendar >= 0 ? "calendar" : "event", slot->unit, slot->seq,
                         slot->at_ms, entry->type, outbox->entry.data, outbox->entry.length);
    return true;
}

/* One pending entry read: into a slot of the window. */
static int entry_taken(void *context, const hf_stored_history_t *entry) {
    reading_t *reading = context;
    hf_outbox_t *outbox = reading->outbox;
    if (entry->seq > reading->head) {
        reading->held_back = true;
        return HF_STORE_LIST_STOP;
    }
    reading->rows++;
    reading->unit->cursor = entry->seq;
    if (reading->unit->rewound && slot_find(outbox, entry->unit, entry->seq) != NULL) return 0;
    slot_t *slot = slot_empty(outbox);
    if (slot == NULL) return HF_STORE_LIST_STOP; /* cannot happen: the read's limit is the room */
    return slot_fill(outbox, slot, entry) ? 0 : -1;
}

/* Reads the unit's pending entries after its cursor into the room the window has. */
static bool unit_read(hf_outbox_t *outbox, unit_state_t *unit) {
    uint32_t room = HF_NOTIFY_WINDOW_MAX - outbox->used;
    hf_store_outbox_query_t query = {.unit = unit->id,
                                     .after_seq = unit->cursor,
                                     .limit = room < HF_NOTIFY_READ_MAX ? room
                                                                        : HF_NOTIFY_READ_MAX};
    /* Everything of the batches up to the durable one is committed, so this read sees it. */
    uint64_t seen = outbox->context->durable_sequence;
    reading_t reading = {outbox, unit, durable_head(outbox, unit), 0, false};
    char error[512];
    if (hf_store_read_outbox(outbox->context->store, &query, entry_taken, &reading, error,
                             sizeof error) != 0) {
        HF_LOG_FIELDS(HF_LOG_WARNING, "notifications: cannot read a unit's",
                      HF_LOG_TEXT("unit", unit->id), HF_LOG_TEXT("error", error));
        return false;
    }
    unit->more = reading.rows == query.limit || reading.held_back;
    if (!unit->more) unit->rewound = false;
    unit->checked = unit->appended < seen ? unit->appended : seen;
    return true;
}

/* Fills the window's room from the units with entries not read yet, round the units in turn
 * so that a busy one does not keep the others waiting. */
static void window_fill(hf_outbox_t *outbox) {
    for (uint32_t n = 0; n < outbox->unit_count && outbox->used < HF_NOTIFY_WINDOW_MAX; n++) {
        uint32_t index = (outbox->next_read + n) % outbox->unit_count;
        unit_state_t *unit = &outbox->units[index];
        if (!unit->live || (!unit->more && unit->appended <= unit->checked)) continue;
        if (!unit_read(outbox, unit)) return;
        outbox->next_read = index + 1;
    }
}

/* ---- Attempts ---- */

/* The slot's state to the open batch (a NOTIFY record), so it is durable with what follows:
 * not for a unit the core no longer has, whose batch the fence would refuse. */
static void state_record(hf_outbox_t *outbox, const slot_t *slot, int status) {
    hf_context_t *context = outbox->context;
    if (context->store_failed || !unit_known(context->core, slot->unit)) return;
    hf_mutation_t mutation = {
        .type = HF_MUTATION_NOTIFY,
        .at_ms = hf_context_now_ms(context),
        .as.notify = {.unit = slot->unit,
                      .seq = slot->seq,
                      .status = status,
                      .attempts = slot->attempts,
                      .last_status = slot->last_status,
                      .last_error = slot->last_error[0] ? slot->last_error : NULL,
                      .next_attempt_ms = slot->next_attempt_ms}};
    hf_batch_append(context->open_batch, &mutation);
}

/* The slot leaves the window delivered or failed: its unit has one pending fewer. */
static void slot_settle(hf_outbox_t *outbox, slot_t *slot, int status) {
    state_record(outbox, slot, status);
    unit_state_t *unit = unit_find(outbox, slot->unit);
    if (unit != NULL && unit->live) {
        unit->pending--;
        outbox->stats.pending--;
    }
    if (status == HF_NOTIFY_DELIVERED) outbox->stats.delivered++;
    else outbox->stats.failed++;
    slot_free(outbox, slot);
}

static void attempts_start(hf_outbox_t *outbox, int64_t now_ms);
static void answer_take(hf_outbox_t *outbox, slot_t *slot, int status, const char *error);

/* An attempt's end: its slot settled or rescheduled, and the room it left used at once (the
 * tick would leave the client idle for up to HF_NOTIFY_TICK_MS). */
static void on_answer(void *context, uint32_t tag, int status, const char *error) {
    hf_outbox_t *outbox = context;
    answer_take(outbox, &outbox->slots[tag], status, error);
    if (!outbox->stopped && !outbox->context->store_failed)
        attempts_start(outbox, hf_context_now_ms(outbox->context));
}

static void answer_take(hf_outbox_t *outbox, slot_t *slot, int status, const char *error) {
    slot->in_flight = false;
    const unit_state_t *unit = unit_find(outbox, slot->unit);
    if (unit == NULL || !unit->live) {
        /* Lost while in flight: its state is the next owner's to keep. */
        slot_free(outbox, slot);
        return;
    }
    slot->attempts++;
    slot->last_status = status;
    if (status >= 200 && status <= 299) {
        outbox->stats.attempts_succeeded++;
        slot->last_error[0] = '\0';
        slot_settle(outbox, slot, HF_NOTIFY_DELIVERED);
        return;
    }
    outbox->stats.attempts_failed++;
    if (error != NULL) snprintf(slot->last_error, sizeof slot->last_error, "%s", error);
    else snprintf(slot->last_error, sizeof slot->last_error, "the receiver answered %d", status);
    int64_t now_ms = hf_context_now_ms(outbox->context);
    int64_t next = hf_notify_next_attempt_ms(slot->at_ms, now_ms, slot->attempts);
    if (next < 0) {
        slot_settle(outbox, slot, HF_NOTIFY_FAILED);
        return;
    }
    slot->next_attempt_ms = next;
    state_record(outbox, slot, HF_NOTIFY_PENDING);
}

/* Signs the slot's body with the time of this attempt and hands it to the client. */
static bool attempt_start(hf_outbox_t *outbox, slot_t *slot, int64_t now_ms) {
    char signature[HF_HMAC_HEADER_SIZE];
    if (!hf_hmac_signature_header(outbox->config.secret, now_ms / 1000, slot->body.data,
                                  slot->body.length, signature))
        return false;
    uint32_t tag = (uint32_t)(slot - outbox->slots);
    if (hf_outbox_http_send(outbox->http, tag, slot->body.data, slot->body.length, signature) != 0)
        return false;
    slot->in_flight = true;
    return true;
}

/* Starts due attempts while the client has room, from where the last tick stopped. */
static void attempts_start(hf_outbox_t *outbox, int64_t now_ms) {
    for (uint32_t n = 0; n < HF_NOTIFY_WINDOW_MAX; n++) {
        if (hf_outbox_http_in_flight(outbox->http) >= HF_NOTIFY_IN_FLIGHT_MAX) return;
        uint32_t index = (outbox->next_send + n) % HF_NOTIFY_WINDOW_MAX;
        slot_t *slot = &outbox->slots[index];
        if (!slot->used || slot->in_flight || slot->next_attempt_ms > now_ms) continue;
        if (slot->body.length > HF_NOTIFY_BODY_SIZE_MAX) {
            snprintf(slot->last_error, sizeof slot->last_error, "the body is over %u bytes",
                     (unsigned)HF_NOTIFY_BODY_SIZE_MAX);
            slot_settle(outbox, slot, HF_NOTIFY_FAILED);
            continue;
        }
        if (!attempt_start(outbox, slot, now_ms)) return;
        outbox->next_send = index + 1;
    }
}

/* Past the backlog's bound, the oldest pending the window holds are failed (and counted):
 * nothing blocks, and the window fills again from the next oldest. */
static void backlog_trim(hf_outbox_t *outbox) {
    for (uint32_t n = 0; n < HF_NOTIFY_DROPS_PER_TICK_MAX; n++) {
        if (outbox->stats.pending <= outbox->config.backlog_max) return;
        slot_t *oldest = NULL;
        for (uint32_t i = 0; i < HF_NOTIFY_WINDOW_MAX; i++) {
            slot_t *slot = &outbox->slots[i];
            if (slot->used && !slot->in_flight && !slot->by_hand &&
                (oldest == NULL || slot->at_ms < oldest->at_ms))
                oldest = slot;
        }
        if (oldest == NULL) return;
        snprintf(oldest->last_error, sizeof oldest->last_error,
                 "dropped: the backlog passed --notify-backlog-max");
        outbox->stats.dropped++;
        slot_settle(outbox, oldest, HF_NOTIFY_FAILED);
    }
}

static void on_tick(uv_timer_t *timer) {
    hf_outbox_t *outbox = timer->data;
    hf_context_t *context = outbox->context;
    if (outbox->stopped || context->store_failed) return;
    if (outbox->ticks++ % (1000 / HF_NOTIFY_TICK_MS) == 0) units_follow(outbox);
    window_fill(outbox);
    backlog_trim(outbox);
    window_fill(outbox);
    attempts_start(outbox, hf_context_now_ms(context));
}

/* ---- Inspection and retries ---- */

static void slot_overlay(const slot_t *slot, hf_stored_history_t *entry) {
    entry->notify_status = HF_NOTIFY_PENDING;
    entry->notify_attempts = slot->attempts;
    entry->notify_last_status = slot->last_status;
    entry->notify_last_error = slot->last_error[0] ? slot->last_error : NULL;
    entry->notify_next_attempt_ms = slot->next_attempt_ms;
}

bool hf_outbox_overlay(const hf_outbox_t *outbox, const char *unit, int64_t seq,
                       hf_stored_history_t *entry) {
    const slot_t *slot = outbox->config.url ? slot_find(outbox, unit, seq) : NULL;
    if (slot == NULL) return false;
    slot_overlay(slot, entry);
    return true;
}

/* The stored notification (unit, seq), for a retry. */
typedef struct lookup {
    const char *unit;
    int64_t seq;
    bool found, due;
    hf_outbox_shown_fn shown;
    void *context;
    hf_outbox_t *outbox;
    int64_t now_ms;
} lookup_t;

/* A failed notification made pending again: into the window when its unit is delivered here
 * and there is room (else the next start reads it, as every pending one). */
static void retry_take(hf_outbox_t *outbox, const hf_stored_history_t *entry) {
    unit_state_t *unit = outbox->config.url ? unit_find(outbox, entry->unit) : NULL;
    if (unit == NULL || !unit->live) return;
    unit->pending++;
    outbox->stats.pending++;
    slot_t *slot = slot_empty(outbox);
    if (slot != NULL && slot_fill(outbox, slot, entry)) return;
    if (unit->cursor >= entry->seq) unit->cursor = entry->seq - 1;
    unit->more = unit->rewound = true;
}

/* The entry a retry found: made due now, durably (a NOTIFY record), and shown as it now
 * stands; one in the window is due at once (unless in flight: it is being tried now). */
static int retry_found(void *context, const hf_stored_history_t *entry) {
    lookup_t *lookup = context;
    if (entry->seq != lookup->seq || strcmp(entry->unit, lookup->unit) != 0)
        return HF_STORE_LIST_STOP;
    hf_outbox_t *outbox = lookup->outbox;
    lookup->found = true;
    slot_t *slot = outbox->config.url ? slot_find(outbox, entry->unit, entry->seq) : NULL;
    if (slot == NULL && entry->notify_status == HF_NOTIFY_DELIVERED) return HF_STORE_LIST_STOP;
    slot_t record = {.seq = entry->seq};
    if (slot == NULL) {
        snprintf(record.unit, sizeof record.unit, "%s", entry->unit);
        state_copy(&record, entry);
        record.next_attempt_ms = lookup->now_ms;
        state_record(outbox, &record, HF_NOTIFY_PENDING);
        if (entry->notify_status == HF_NOTIFY_FAILED) retry_take(outbox, entry);
        slot = slot_find(outbox, entry->unit, entry->seq);
    }
    if (slot != NULL) {
        if (!slot->in_flight) slot->next_attempt_ms = lookup->now_ms;
        slot->by_hand = true;
        state_record(outbox, slot, HF_NOTIFY_PENDING);
    }
    hf_stored_history_t shown = *entry;
    slot_overlay(slot != NULL ? slot : &record, &shown);
    lookup->due = true;
    lookup->shown(lookup->context, &shown);
    return HF_STORE_LIST_STOP;
}

hf_outbox_retry_result_t hf_outbox_retry(hf_outbox_t *outbox, const char *unit, int64_t seq,
                                         int64_t now_ms, hf_outbox_shown_fn shown_fn, void *context,
                                         char *error, size_t error_size) {
    lookup_t lookup = {unit, seq, false, false, shown_fn, context, outbox, now_ms};
    hf_store_outbox_query_t query = {.after_unit = unit,
                                     .after_seq = seq - 1,
                                     .status = -1,
                                     .limit = 1};
    if (hf_store_read_outbox(outbox->context->store, &query, retry_found, &lookup, error,
                             error_size) != 0)
        return HF_OUTBOX_RETRY_FAILED;
    if (!lookup.found) return HF_OUTBOX_RETRY_NOT_FOUND;
    return lookup.due ? HF_OUTBOX_RETRY_DUE : HF_OUTBOX_RETRY_DELIVERED;
}

void hf_outbox_stats(const hf_outbox_t *outbox, hf_outbox_stats_t *stats) {
    *stats = outbox->stats;
}

/* ---- Life ---- */

hf_outbox_t *hf_outbox_create(uv_loop_t *loop, hf_context_t *context,
                              const hf_outbox_config_t *config, char *error, size_t error_size) {
    hf_outbox_t *outbox = calloc(1, sizeof *outbox);
    if (outbox == NULL) abort();
    outbox->loop = loop;
    outbox->context = context;
    outbox->config = *config;
    hf_map_init(&outbox->unit_index);
    if (config->url != NULL) {
        outbox->slots = calloc(HF_NOTIFY_WINDOW_MAX, sizeof *outbox->slots);
        if (outbox->slots == NULL) abort();
        outbox->http = hf_outbox_http_create(loop, config->url, config->ca_file, on_answer, outbox,
                                             error, error_size);
        if (outbox->http == NULL) {
            hf_outbox_free(outbox);
            return NULL;
        }
    }
    uv_timer_init(loop, &outbox->timer);
    outbox->timer.data = outbox;
    return outbox;
}

void hf_outbox_start(hf_outbox_t *outbox) {
    if (outbox->http == NULL || outbox->started) return;
    outbox->started = true;
    uv_timer_start(&outbox->timer, on_tick, 0, HF_NOTIFY_TICK_MS);
}

void hf_outbox_stop(hf_outbox_t *outbox) {
    if (outbox->stopped) return;
    outbox->stopped = true;
    uv_timer_stop(&outbox->timer);
    uv_close((uv_handle_t *)&outbox->timer, NULL);
    hf_outbox_http_close(outbox->http);
    outbox->http = NULL;
}

void hf_outbox_free(hf_outbox_t *outbox) {
    if (outbox == NULL) return;
    if (outbox->slots != NULL)
        for (uint32_t i = 0; i < HF_NOTIFY_WINDOW_MAX; i++) hf_buffer_free(&outbox->slots[i].body);
    free(outbox->slots);
    free(outbox->units);
    hf_map_free(&outbox->unit_index);
    hf_buffer_free(&outbox->entry);
    free(outbox);
}
