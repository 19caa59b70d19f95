/* The waiting room (API.md section 6): per event with a room, a line of tickets in join order,
 * admitted at the room's admit_per_s by a continuously refilled bucket, capped by max_active,
 * with abandonment of tickets nobody polls. Pure, like the rest of the core: time is passed
 * in, ids of new tickets are the caller's, every change is a record (core/mutation.h) and a
 * poll is not a change.
 *
 * Positions: every ticket has its join number in the room (seq, from 1) and a place in the line
 * (core/line.h): its join number, or for a join before the room's opens_at (the pre-queue) the
 * place a uniformly random shuffle gave it at the opening (core/shuffle.h, keyed by the room's
 * seed, so a restart draws the same places again and nothing per ticket is written). A
 * position is the count of waiting tickets at places up to the ticket's, O(log n), and never
 * grows. The opening runs in slices from the rooms' timer; until it is done, a pre-queue ticket
 * has no position and nobody is admitted.
 *
 * Admission: a bucket of capacity max(1, admit_per_s / 10) refills continuously at
 * admit_per_s; each admission takes one unit, in join order, while fewer than max_active
 * tickets are admitted with live tokens (0: no cap). After an idle spell at most the bucket's
 * capacity is admitted at one instant. Admissions happen in hf_core_advance (a deadline of the
 * core's timers, so the engine's expiry timer drives them), never inside a join.
 *
 * Lifetimes: a ticket pointer is borrowed until the next call that changes the core; finished
 * tickets (completed, expired, abandoned) are kept up to a limit and then forgotten
 * (hf_core_evict), as finished holds are. */
#ifndef HF_CORE_QUEUE_H
#define HF_CORE_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"

typedef enum hf_ticket_status {
    HF_TICKET_WAITING = 0,
    HF_TICKET_ADMITTED = 1,
    HF_TICKET_COMPLETED = 2,
    HF_TICKET_EXPIRED = 3,   /* admitted, and its token's exp passed */
    HF_TICKET_ABANDONED = 4, /* waiting, and not polled for abandon_after_s */
    HF_TICKET_FORGOTTEN = 5, /* a slot waiting for reuse: never returned by a lookup */
} hf_ticket_status_t;

/* The words of API.md: "waiting", "admitted", "completed", "expired", "abandoned". */
const char *hf_ticket_status_name(uint8_t status);
/* The status a word names (forgotten excluded); false when none. */
bool hf_ticket_status_parse(const char *text, uint8_t *status);

typedef struct hf_ticket {
    char id[HF_SERVER_ID_SIZE + 1];
    uint8_t status;              /* hf_ticket_status_t */
    uint32_t event;              /* event index */
    uint32_t entry;              /* private: the (event, user) record naming the user */
    uint32_t seq;                /* join number in the room, from 1 */
    uint32_t next_finished;      /* private: the list of finished tickets, index + 1 */
    hf_time_ms_t admitted_at_ms; /* 0 until admitted */
    hf_time_ms_t last_seen_ms;   /* private: the last join or poll (memory only) */
    hf_time_ms_t armed_ms;       /* private: the deadline of its live timer entry */
    uint64_t last_change;        /* private: see hf_core_ticket_change */
} hf_ticket_t;

/* Joins the user to the event's line: a new ticket (id ticket_id, made by the caller) at the
 * back, or the user's ticket when it is waiting or admitted with a live token (*created
 * false, nothing changes). A new ticket is waiting: the room's next admission (due at once
 * in an idle room, at the next hf_core_advance) admits it.
 * HF_ERROR_EVENT_NOT_FOUND, HF_ERROR_WAITING_ROOM_DISABLED, HF_ERROR_WAITING_ROOM_FULL (the
 * room's max_waiting tickets wait), HF_ERROR_CAPACITY (HF_QUEUE_JOINS_MAX joins made),
 * HF_ERROR_INVALID_REQUEST (a user id empty or too long,
 * or ticket_id taken). */
hf_error_t hf_core_queue_join(hf_core_t *core, const char *event_id, const char *user_id,
                              const char *ticket_id, hf_time_ms_t now, uint32_t *index,
                              bool *created);
/* A poll: the event's ticket (a ticket of another event is not found), its last-seen time
 * refreshed in memory when waiting. Emits nothing. HF_ERROR_EVENT_NOT_FOUND,
 * HF_ERROR_TICKET_NOT_FOUND (also for a forgotten ticket: the caller revives it first). */
hf_error_t hf_core_queue_poll(hf_core_t *core, const char *event_id, const char *ticket_id,
                              hf_time_ms_t now, uint32_t *index);
/* The user is done: a waiting or admitted ticket becomes completed (its slot and token are
 * void at once); a finished one stays as it is. Errors as hf_core_queue_poll. */
hf_error_t hf_core_queue_complete(hf_core_t *core, const char *event_id, const char *ticket_id,
                                  hf_time_ms_t now, uint32_t *index);

/* What an admission token's ticket says of it (the engine checked the signature, the
 * claims' event and user and the token's own exp). */
typedef enum hf_admission {
    HF_ADMISSION_VALID = 0,
    HF_ADMISSION_INVALID, /* no such ticket here, another user's, or completed */
    HF_ADMISSION_EXPIRED, /* the ticket's token expired */
} hf_admission_t;
hf_admission_t hf_core_queue_admission(const hf_core_t *core, uint32_t event_index,
                                       const char *ticket_id, const char *user_id);

/* Lookups. NULL for an unknown or forgotten ticket. */
const hf_ticket_t *hf_core_ticket_find(const hf_core_t *core, const char *ticket_id,
                                       uint32_t *index);
const hf_ticket_t *hf_core_ticket_at(const hf_core_t *core, uint32_t index);
const char *hf_core_ticket_user(const hf_core_t *core, uint32_t index);
/* A waiting ticket's position: waiting tickets ahead of it plus one. 0 when not waiting, or
 * of the pre-queue (it has no place yet). */
uint32_t hf_core_ticket_position(const hf_core_t *core, uint32_t index);
/* Whether a waiting ticket joined before opens_at and the opening has not placed it yet: the
 * API's "pre_queue". */
bool hf_core_ticket_pre_queue(const hf_core_t *core, uint32_t index);
/* estimated_wait_s of a waiting ticket at position (hf_core_ticket_position, read once by the
 * caller): ceil(position / r), r the room's recent admission rate, never above admit_per_s,
 * and at most max_active / token_ttl_s while every slot is taken (core/estimate.h). Constant
 * time: a poll never scans. */
int64_t hf_core_ticket_wait_s(const hf_core_t *core, uint32_t index, uint32_t position,
                              hf_time_ms_t now);
/* An admitted ticket's token: iat = admission time in whole seconds (rounded down),
 * exp = iat + token_ttl_s. */
int64_t hf_core_ticket_issued_s(const hf_core_t *core, uint32_t index);
int64_t hf_core_ticket_expires_s(const hf_core_t *core, uint32_t index);
/* The number (hf_core_change_count) of the ticket's newest record: its join or its last
 * change of status. 0 for one restored from the store. */
uint64_t hf_core_ticket_change(const hf_core_t *core, uint32_t index);
/* The room of an event: tickets waiting, admitted with live tokens, admissions so far. */
uint32_t hf_core_room_waiting(const hf_core_t *core, uint32_t event_index);
uint32_t hf_core_room_active(const hf_core_t *core, uint32_t event_index);
uint64_t hf_core_room_admissions(const hf_core_t *core, uint32_t event_index);
/* Finished tickets kept in memory; and how many may be (HF_QUEUE_FINISHED_TICKETS_MAX). */
uint32_t hf_core_tickets_finished(const hf_core_t *core);
void hf_core_set_tickets_finished_max(hf_core_t *core, uint32_t finished_max);
/* Events with a waiting room: 0 lets the admission check skip even the event's lookup. */
uint32_t hf_core_rooms_enabled(const hf_core_t *core);
/* Checks room settings (restore and the tests; the engine's decoder names the field). */
bool hf_core_room_valid(const hf_room_definition_t *room);

/* ---- Restore (at start; nothing emitted) ---- */

typedef struct hf_stored_ticket {
    const char *ticket_id, *event_id, *user_id;
    uint32_t seq; /* join number in the room */
    uint8_t status;
    hf_time_ms_t admitted_at_ms; /* 0 unless admitted once */
    hf_time_ms_t created_at_ms;  /* the join: before opens_at, of the pre-queue */
} hf_stored_ticket_t;

/* In join order (the store's). A waiting ticket's abandonment clock starts again at now. */
hf_error_t hf_core_restore_ticket(hf_core_t *core, const hf_stored_ticket_t *ticket,
                                  hf_time_ms_t now);
/* Takes back a forgotten finished ticket as the store has it; *index is its new index. */
hf_error_t hf_core_revive_ticket(hf_core_t *core, const hf_stored_ticket_t *ticket,
                                 uint32_t *index);

#endif
