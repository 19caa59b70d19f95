/* Every limit of the server, in one place. Each is a named constant with the reason for its
 * value: nothing in Holdfast grows without a bound. It lives in lib/, the bottom room, so that
 * net/ reads it without including the core. */
#ifndef HF_LIMITS_H
#define HF_LIMITS_H

/* Client-chosen ids (event, section, row, pool): API.md section 1. */
#define HF_ID_SIZE_MAX 64
/* user_id: any non-empty string of at most 128 bytes (API.md section 1). */
#define HF_USER_ID_SIZE_MAX 128
/* Server-made ids: a 4-byte prefix ("res_", "ord_") and 36 hex digits: the creation time in
 * milliseconds (48 bits, so the store's indexes grow at one end) and the 96 random bits the
 * contract asks for. */
#define HF_SERVER_ID_SIZE 40
/* A seat id is SECTION-ROW-NUMBER: two ids, a number of at most 7 digits and two dashes. */
#define HF_SEAT_ID_SIZE_MAX (2 * HF_ID_SIZE_MAX + 2 + 7)
/* Event names and payment references are free text: bounded so a record has a bounded size. */
#define HF_NAME_SIZE_MAX 256
#define HF_PAYMENT_REF_SIZE_MAX 255
#define HF_CURRENCY_SIZE_MAX 8

/* An event must hold at least 1,000,000 seats (API.md section 2); 4,000,000 leaves room and
 * keeps a seat index within 22 bits with a 12-byte seat record (48 MiB per event at most). */
#define HF_EVENT_SEATS_MAX 4000000u
#define HF_EVENT_SECTIONS_MAX 1000u
#define HF_SECTION_ROWS_MAX 10000u
#define HF_EVENT_ROWS_MAX 100000u
#define HF_EVENT_POOLS_MAX 1000u
/* A pool's capacity fits comfortably in an int64 sum with prices; a billion units is more than
 * any venue or ticket allotment. */
#define HF_POOL_CAPACITY_MAX 1000000000LL
/* Prices in minor units: below 2^53 so a JSON client reading them as doubles loses nothing. */
#define HF_PRICE_MAX 1000000000000LL
/* Events per server: each event's tables are sized at creation. */
#define HF_EVENTS_MAX 10000u
/* Paging of GET /v1/events (API.md section 1: as the seat list, default 100, at most 1,000):
 * a page renders each event's summary, its sections and pools. */
#define HF_EVENTS_PAGE_DEFAULT 100u
#define HF_EVENTS_PAGE_MAX 1000u
/* Paging of a user's orders (GET /v1/users/{user}/orders, API.md section 1). */
#define HF_USER_ORDERS_PAGE_DEFAULT 100u
#define HF_USER_ORDERS_PAGE_MAX 1000u

/* Calendars (API.md section 12, core/calendars.h). Calendars per server, like events. */
#define HF_CALENDARS_MAX 10000u
/* Resources of one calendar: the contract asks for at least 100,000; a resource costs its
 * definition (some 200 bytes) and an empty span index. */
#define HF_CALENDAR_RESOURCES_MAX 100000u
/* Live uses (items of held holds and confirmed orders whose span has not ended) per node:
 * each costs two breakpoints of the span index (32 bytes each, at most). */
#define HF_CALENDAR_USES_MAX 10000000u
/* Items of one calendar hold or booking: max_items_per_hold may not exceed this. */
#define HF_CALENDAR_HOLD_ITEMS_MAX 100u
/* How far ahead a span may end (horizon_days at most). */
#define HF_CALENDAR_HORIZON_DAYS_MAX 1100u
/* GET /availability's window: 400 days for night calendars, 31 days for minute ones. */
#define HF_CALENDAR_AVAILABILITY_NIGHTS_MAX 400u
#define HF_CALENDAR_AVAILABILITY_MINUTE_DAYS_MAX 31u
/* GET /slots: the page (default 100, at most 1,000) and the window searched, as availability's. */
#define HF_CALENDAR_SLOTS_PAGE_DEFAULT 100u
#define HF_CALENDAR_SLOTS_PAGE_MAX 1000u
#define HF_CALENDAR_SLOTS_WINDOW_NIGHTS_MAX 400u
#define HF_CALENDAR_SLOTS_WINDOW_MINUTE_DAYS_MAX 31u
/* Ended uses leaving the span index in one millisecond's advance (core/calendar/sweep.c):
 * the rest wait for the next one, so a night whose stays all end at once (every checkout of a
 * large hotel group) costs a few milliseconds per advance, not a second in one. */
#define HF_CALENDAR_SWEEP_PER_ADVANCE 4096u
/* A resource's capacity: how many uses may overlap at once. */
#define HF_RESOURCE_CAPACITY_MAX 1000000000LL
/* A buffer before or after a use of a minute calendar: at most a day. */
#define HF_RESOURCE_BUFFER_MIN_MAX 1440u

/* Items (seats plus pool lines) in one hold: max_seats_per_hold may not exceed this. It bounds
 * the work of one request and the size of one error detail. */
#define HF_HOLD_ITEMS_MAX 1000u
/* Allocations (API.md section 14): at most this many per event (each is a line of the
 * event's summary and list, and a slot of the per-seat index), and at most this many seats in
 * one allocation, named or picked: a partner's block of a stadium, while its stored row (one
 * JSON document, rewritten at each release) stays a few megabytes at most. */
#define HF_ALLOCATIONS_PER_EVENT_MAX 1000u
#define HF_ALLOCATION_SEATS_MAX 100000u
/* Released and expired holds kept in memory (core.h, hf_core_evict); older ones are read back
 * from the store when asked for. A finished hold costs about 150 bytes here, so this is some
 * 15 MB, and it covers the last few seconds of a flash sale at its busiest, when buyers look
 * at holds that just lapsed. */
#define HF_FINISHED_HOLDS_MAX 100000u
/* Waitlist entries one event may ever have (API.md section 14): each costs some 100 bytes and
 * a slot of its event's queues; a sold-out stadium's whole audience fits. */
#define HF_WAITLIST_ENTRIES_MAX 1000000u
/* Offer TTL bounds, as a hold's TTL (seconds in the API). */
#define HF_WAITLIST_OFFER_TTL_MS_DEFAULT 600000
/* The most --finished-holds may ask for: about 1.5 GB. */
#define HF_FINISHED_HOLDS_LIMIT 10000000u
/* Durations: a hold lives at most 30 days, an absurd but finite bound that keeps ms sums far
 * from overflow. */
#define HF_HOLD_TTL_MS_MAX (30LL * 24 * 3600 * 1000)
/* A cancel job's offers (API.md section 13): offer_ttl_s at most 30 days. */
#define HF_JOB_OFFER_TTL_MS_MAX (30LL * 24 * 3600 * 1000)
/* Orders a cancel job goes through in one turn of the server's loop (one durable batch), so
 * other events are served as before while it runs. */
#define HF_JOB_STEP_ORDERS 1000u
/* Records a step of the cancel jobs makes at most (it ends after the order that reaches
 * them): the engine puts a step in the batch that goes to the store with the turn's
 * requests, or alone when none came, and a request waits for the step's writing either way.
 * 64 records (about 30 offers) take the writer about as long as a sync of the log (0.7 ms):
 * measured in docs/DESIGN.md, "Cancel jobs", against 1,000 orders a step. */
#define HF_JOB_STEP_RECORDS 64u

/* HTTP (API.md section 1). */
#define HF_HTTP_HEAD_SIZE_MAX (16u * 1024)
#define HF_HTTP_BODY_SIZE_MAX (1024u * 1024)
/* Open connections: beyond this, new connections are accepted and closed at once so the
 * listen queue never backs up silently. 10,000 sockets stay well under the default fd limit
 * raised at start. */
#define HF_HTTP_CONNECTIONS_MAX 10000u
/* Requests parsed but not yet answered on one connection: a pipelining client past this stops
 * being read until answers drain, which bounds memory per connection. */
#define HF_HTTP_PIPELINE_MAX 128u
/* Unsent response bytes per connection before the connection stops being read. */
#define HF_HTTP_OUTPUT_SIZE_MAX (4u * 1024 * 1024)
/* Unsent bytes of one event stream: a reader this far behind is disconnected rather than
 * allowed to hold memory (API.md section 5). A snapshot of a large event is sent in full
 * first, so the bound applies to what follows it. */
#define HF_HTTP_STREAM_BUFFER_MAX (1024u * 1024)
/* Streams open at once, server-wide: each one costs a connection and a buffer. */
#define HF_STREAMS_MAX 5000u
/* A keepalive comment on every stream at least this often (API.md: at least every 15 s). */
#define HF_STREAM_KEEPALIVE_MS 10000u
/* Changes of one event kept for streams that reconnect with Last-Event-ID (API.md section 5):
 * a reader that lost its connection for a few seconds in a flash sale (tens of changes a
 * second per event, thousands at the peak) resumes without a gap. A change is kept in 12 bytes
 * (engine/replay.h), so one event's window is 117 KiB, allocated when the event first gets a
 * subscriber. */
#define HF_STREAM_REPLAY_CHANGES_MAX 10000u
/* Events with such a window at once: 64 x 117 KiB = 7.3 MiB at most. A box office streams a
 * handful of events at a time; past this, the window of the event least recently subscribed
 * to (one with no open stream first) is dropped, and its late reconnects get a snapshot. */
#define HF_STREAM_REPLAY_EVENTS_MAX 64u
/* A stream's event id is (epoch in ms) * 2^20 + (changes of the event in that epoch): the
 * epoch starts when the event's changes start being numbered (its first subscriber in this
 * run), so ids of an earlier run are below every id of this one, and a 2^20th change starts
 * a new epoch (engine/replay.h). An epoch in ms stays below 2^43 until the year 2248, so ids
 * stay below 2^63. */
#define HF_STREAM_ID_COUNTER_BITS 20
/* A connection idle this long (no request in progress, nothing to send) is closed. */
#define HF_HTTP_IDLE_TIMEOUT_MS 60000u
/* A request head must be whole this long after its first byte, however slowly it trickles
 * (API.md section 1; nginx's client_header_timeout): past it, 408 and the connection closes.
 * The deadline is not moved by the bytes that arrive, or one line every 20 s would hold a
 * connection without end (slowloris). */
#define HF_HTTP_HEAD_TIMEOUT_MS 30000u
/* A body must arrive at HF_HTTP_BODY_RATE_BYTES per HF_HTTP_BODY_RATE_WINDOW_MS at least: it
 * is due one window after the end of the head, and each byte received moves that deadline
 * later by its share of a window (10 s per KiB), never to more than one window after the
 * byte's arrival; past the deadline, 408 and the connection closes. */
#define HF_HTTP_BODY_RATE_BYTES 1024u
#define HF_HTTP_BODY_RATE_WINDOW_MS 10000u
/* Idempotency-Key header (API.md section 1). */
#define HF_IDEMPOTENCY_KEY_SIZE_MAX 255
/* Keys are kept at least 24 hours (API.md section 1). */
#define HF_IDEMPOTENCY_KEEP_MS (24LL * 3600 * 1000)
/* Payment webhooks (API.md section 7): deliveries are deduplicated on (payment_intent_id,
 * type) for at least 7 days, since providers retry for days. Older ones are pruned, by age,
 * in the order they arrived (the core keeps them oldest first, so pruning reads only the
 * ones it drops), and the store deletes its rows of the same age. */
#define HF_WEBHOOK_DEDUP_KEEP_MS (7LL * 24 * 3600 * 1000)
/* Deliveries kept for deduplication in memory. Each costs about 100 bytes with its intent id,
 * so this is some 100 MB, and it allows a sustained 1.6 deliveries a second for the 7 days
 * they must be kept. A delivery beyond it (every kept one younger than 7 days) is refused with
 * 503 capacity_exceeded rather than forgetting one too early: the provider retries later,
 * whereas a forgotten delivery could commit or refund twice. */
#define HF_WEBHOOK_DELIVERIES_MAX 1000000u
/* The webhook's provider event id ("evt_1"): free text, bounded like payment references. */
#define HF_WEBHOOK_EVENT_ID_SIZE_MAX 255
/* A delivery's type is one of two short words: anything longer is refused unread. */
#define HF_WEBHOOK_TYPE_SIZE_MAX 64
/* The Holdfast-Signature header: t=10 digits and a few v1=64 hex digits (secret rotation); a
 * longer header is refused as invalid_signature before it is read any further. */
#define HF_SIGNATURE_HEADER_SIZE_MAX 1024u
/* v1= values of one header that are checked; more are refused (each costs an HMAC compare). */
#define HF_SIGNATURE_V1_MAX 8u
/* A signed delivery whose t is further than this from the server's clock is refused
 * (API.md section 7): a replayed old delivery is worthless. */
#define HF_SIGNATURE_TOLERANCE_S 300
/* The webhook's body: a provider's delivery is a few hundred bytes. */
#define HF_WEBHOOK_BODY_SIZE_MAX (64u * 1024)
/* A delivery's amount (API.md section 7): 1 to 10^12 minor units (ten billion dollars), so
 * no sum or difference of amounts can overflow and a typo of a provider's is refused rather
 * than owed as a refund of that size. */
#define HF_PAYMENT_AMOUNT_MAX 1000000000000LL
/* A delivery's currency: an ISO 4217 code is three letters; a longer word is refused unread
 * (400) rather than compared. */
#define HF_WEBHOOK_CURRENCY_SIZE_MAX 16
/* Paging of GET /v1/refunds, as every list that grows without bound (API.md section 1):
 * refunds are few (each one is money a person must send back), but a page has a bound so
 * one answer stays small. */
#define HF_REFUNDS_PAGE_DEFAULT 100u
#define HF_REFUNDS_PAGE_MAX 1000u

/* JSON nesting (API.md section 1). */
#define HF_JSON_DEPTH_MAX 64
/* The block a request body's JSON is parsed into (src/engine/arena.c). A hold of a few seats
 * takes under 2 KiB; 256 KiB covers a hold of the most items (HF_HOLD_ITEMS_MAX) and an event
 * of a few hundred rows, and a larger DOM falls back to malloc, so this bounds only what is
 * kept between requests. */
#define HF_REQUEST_ARENA_SIZE (256u * 1024)

/* Paging of the seat listing (API.md section 2). */
#define HF_SEATS_PAGE_DEFAULT 1000u
#define HF_SEATS_PAGE_MAX 10000u

/* Paging of the staff's listings of an event's holds and orders (API.md section 2): a page
 * of holds may read forgotten ones from the store on the loop's thread, so a page stays
 * small enough (about 1,000 rows) not to hold other requests back for long. */
#define HF_STAFF_PAGE_DEFAULT 100u
#define HF_STAFF_PAGE_MAX 1000u
/* Paging of an event's audit history (API.md section 7): a page is one range scan of the
 * store's key on the loop's thread, so it stays small enough (1,000 rows) not to hold other
 * requests back for long, however long the history grows. */
#define HF_HISTORY_PAGE_DEFAULT 100u
#define HF_HISTORY_PAGE_MAX 1000u
/* Entries a filtered page of the history (seat=, user=, reservation=) examines at most: the
 * history has no index by seat, user or hold (one would cost a write per entry in every
 * change's durable step), so a filtered page scans the key from after=, joining each entry
 * with its hold or order, and answers next where it stopped. As many as an unfiltered page
 * reads at most, so a filtered page holds the loop's thread no longer (a few milliseconds);
 * twice as many took twice as long. */
#define HF_HISTORY_SCAN_MAX 1000u

/* Mutations waiting in the open batch (those of the commands applied while the previous batch
 * commits). Past this the store is far behind: changes are answered 503 at once instead of
 * queueing without bound; expiries still join the batch. */
#define HF_STORE_BATCH_MUTATIONS_MAX 200000u

/* Batches handed to the store and not yet durable: the one being written plus those written
 * and waiting for a sync of the log. Syncs overlap, so a few are in flight at full load; the
 * bound keeps the streams' per-batch publish buffers a small fixed ring. */
#define HF_STORE_BATCHES_IN_FLIGHT_MAX 8u

/* Batches handed to the store and not yet durable before the engine keeps the next one open:
 * one being synced and one written behind it (the second syncer's). The writer is free again
 * within tens of microseconds, so handing more over only cut the same load into smaller
 * batches, and each batch costs the same fixed work (six lock calls, the frames of the same
 * tail pages again, its share of a sync): at 50 connections, 2 instead of 8 took a quarter of
 * the writer's CPU per answer and gave 10% more holds per second (docs/PERFORMANCE.md). At
 * most HF_STORE_BATCHES_IN_FLIGHT_MAX. */
#define HF_STORE_BATCHES_UNSYNCED_MAX 2u

/* Batches a store that overlaps them (PostgreSQL, store/backend.h) has sent and not yet seen
 * committed: while batch N's COMMIT waits for PostgreSQL's WAL flush and the round trip, batch
 * N+1 is already on the wire, so the server starts it the moment N is done instead of a round
 * trip later. Each one more in flight can only be cut from the same load (the engine gathers a
 * batch while the others commit), and one more failed with the first when one fails: 2 and 3
 * measured (docs/BENCHMARKS.md). At most HF_STORE_BATCHES_IN_FLIGHT_MAX. */
#define HF_STORE_BATCHES_OVERLAP_MAX 2u

/* Threads that fdatasync the store's log while its writer goes on with the next batch. Two
 * overlapping flushes finish sooner than two in a row on this kind of disk, and a batch
 * written during a sync waits for at most one sync to finish before its own starts; a third
 * thread only queued more flushes behind the first two. */
#define HF_STORE_SYNCERS 2

/* Bytes of the store's log gathered before they are written in one call (store/sqlite/vfs.h): a
 * batch's frames are 4,120 bytes each, and most batches write fewer than 30; a larger batch
 * is written in several calls. SQLite's unix VFS writes at most 128 KiB - 1 bytes per call
 * (os_unix.c masks the length with 0x1ffff, and a longer write comes out short, as a full
 * disk would). One buffer per connection that writes the log. */
#define HF_STORE_LOG_BUFFER_SIZE (128u * 1024 - 1)

/* Origins given with --cors-origin or HOLDFAST_CORS_ORIGINS (API.md section 1): a box office
 * has a handful of front ends, and the engine compares each request's Origin against every one
 * of them, so the list stays short. */
#define HF_CORS_ORIGINS_MAX 16
/* One origin, scheme://host[:port]: "https://" (8 bytes), a DNS name (at most 253) and
 * ":65535" (6). */
#define HF_CORS_ORIGIN_SIZE_MAX (8 + 253 + 6)

/* Headers an answer carries beyond its status line, Content-Type, Content-Length and
 * Connection (net/http.h): a CORS preflight needs six (Allow, Vary and four Access-Control-*),
 * and a node's Holdfast-Node makes seven; the list is an array inside each response, so it is
 * fixed and small. */
#define HF_HTTP_RESPONSE_HEADERS_MAX 8
/* Answers waiting for another node at once (net/http.h's deferred answers, the cluster's
 * forwarded requests): each holds a connection to the owner, so a node cut off from its
 * peers refuses more (503) rather than piling up requests without bound. */
#define HF_HTTP_DEFERRED_MAX 1024

/* One log line's text: HF_LOG_LINE_SIZE_MAX in lib/log.h (lib/ includes nothing above it). */

/* A batch whose commit (store/pipeline.c) or whose log's sync (store/sqlite/sync.c) takes
 * longer than this is logged as slow: a healthy one takes a few milliseconds at most, a second
 * means a disk in trouble, and every reply of that batch waited as long. */
#define HF_STORE_SLOW_BATCH_MS 1000
/* ---- The waiting room (API.md section 6, core/queue.h) ---- */

/* Users waiting in one room's line unless the room says otherwise (max_waiting): a flash sale
 * draws millions, and a waiting ticket costs some 150 bytes with its share of the indexes, so
 * 2,000,000 is about 300 MB at most. Joins beyond it answer 429 waiting_room_full. */
#define HF_QUEUE_WAITING_DEFAULT 2000000u
/* The most max_waiting may say: a ticket's join number is 32 bits, and 16,000,000 waiting
 * users are some 2.4 GB, more than a box office should keep in one process. */
#define HF_QUEUE_WAITING_LIMIT 16000000u
/* admit_per_s: at most a million admissions a second (far beyond what a sale can bear) keeps
 * the admission bucket's arithmetic in plain doubles without loss. The least is one
 * admission every 1,000,000 s: any positive rate below would never admit anyone. */
#define HF_QUEUE_ADMIT_PER_S_MAX 1000000.0
#define HF_QUEUE_ADMIT_PER_S_MIN 0.000001
/* Defaults of a room's settings (API.md section 6). */
#define HF_QUEUE_ADMIT_PER_S_DEFAULT 10.0
#define HF_QUEUE_TOKEN_TTL_S_DEFAULT 900
#define HF_QUEUE_ABANDON_AFTER_MS_DEFAULT 300000
/* A token lives at most 30 days and a waiting ticket is abandoned after at most 30 days
 * without a poll, like holds (HF_HOLD_TTL_MS_MAX): finite, far from overflow. */
#define HF_QUEUE_TOKEN_TTL_S_MAX (30LL * 24 * 3600)
/* Finished tickets (completed, expired, abandoned) kept in memory; older ones are forgotten
 * and a poll of one is read back from the store (engine/restore.h). A ticket costs about 100
 * bytes, so this is some 100 MB, and it covers everyone who finished in the busiest minutes of
 * a sale. */
#define HF_QUEUE_FINISHED_TICKETS_MAX 1000000u
/* Joins one room takes over its life: each join number keeps 4 bytes and a bit (the line's
 * order and its positions) whatever became of its ticket, so 100,000,000 joins are some 410
 * MB. Beyond it a join answers 503 capacity_exceeded: a sale that size needs several
 * events. */
#define HF_QUEUE_JOINS_MAX 100000000u
/* estimated_wait_s (core/estimate.h): the admission rate is measured over the last 10 s (T in
 * API.md section 6: long enough to smooth the bucket's steps, short enough to follow a change
 * of max_active), or since the room's first admission when that is shorter, but never over
 * less than 1 s (a first instant's burst is no rate). */
#define HF_QUEUE_RATE_WINDOW_MS 10000
#define HF_QUEUE_RATE_SPAN_MIN_MS 1000
/* The window's admissions are counted in steps of 100 ms (the window's start is exact to one
 * step: 1% of it), in a ring of 128 steps: more than the window's 100, so the count at the
 * step just before the window is still kept; 1 KiB a room. */
#define HF_QUEUE_RATE_STEP_MS 100
#define HF_QUEUE_RATE_RING_STEPS 128
/* The pre-queue (API.md section 6): a room's shuffle is keyed by a seed of 32 bytes (a
 * ChaCha20 key: 256 bits, drawn from OpenSSL's RAND_bytes), and the opening places its
 * pre-queue tickets in slices of 8,192 Fisher-Yates steps (or copies) per loop turn: about a
 * tenth of a millisecond each (bench/corebench --only prequeue), so polls and holds of other
 * events wait no longer behind one than behind a busy turn's own requests, and a million
 * tickets get their places in some 340 turns (0.4 s), well within the 2 s asked. */
#define HF_QUEUE_SEED_SIZE 32
#define HF_QUEUE_OPENING_SLICE 8192u
/* Before its first step the opening touches its 12 bytes per ticket 128 KiB a turn (92 turns
 * for a million tickets): a page fault costs the loop as much as a few steps, and the
 * shuffle's random steps would otherwise fault in every page of the order in its first
 * slice. */
#define HF_QUEUE_OPENING_PREPARE_SIZE (128u * 1024)

/* On SIGTERM the server waits at most this long for in-flight work to become durable. */
#define HF_SHUTDOWN_GRACE_MS 10000u

/* ---- Dispatch (API.md section 8, core/dispatch/) ---- */
/* Fleets per server: a fleet is made by its first driver's PUT, so this bounds what a typo in
 * a path can make; a city's operator runs a handful. */
#define HF_DISPATCH_FLEETS_MAX 1000u
/* Drivers per fleet: the largest cities have some 100,000 ride-hailing drivers online at
 * once; 200,000 leaves room. A driver costs about 150 bytes (30 MB per full fleet). */
#define HF_DISPATCH_FLEET_DRIVERS_MAX 200000u
/* Rides kept in memory, every status: about 300 bytes each, so 300 MB at most. A ride beyond
 * it is refused with 503 capacity_exceeded. Finished rides past HF_DISPATCH_FINISHED_RIDES_MAX
 * are forgotten, so only rides in progress can fill it. */
#define HF_DISPATCH_RIDES_MAX 1000000u
/* Finished rides (completed, cancelled) kept in memory (--finished-rides); older ones are
 * forgotten once durable and read back from the store when a request names them
 * (core/dispatch/dispatch.h). A rider or driver looks at a ride in the minutes after it
 * ends: 100,000 covers them at thousands of rides a minute, for some 30 MB. */
#define HF_DISPATCH_FINISHED_RIDES_MAX 100000u
/* The most --finished-rides may ask for: half of the rides kept, so rides in progress always
 * have the other half. */
#define HF_DISPATCH_FINISHED_RIDES_LIMIT (HF_DISPATCH_RIDES_MAX / 2)
/* The filter of forgotten rides' ids (core/dispatch/slots.c): a new ride's id is looked up in
 * the store only when the filter says it may be a forgotten one. 2^26 bits (8 MiB, made at the
 * first ride forgotten) with 3 probes: 1 id in 10,000 asks the store needlessly after a
 * million forgotten rides, 1 in 20 after ten million; never a wrong answer, only a read. */
#define HF_DISPATCH_FORGOTTEN_FILTER_BITS (1u << 26)
/* Searching rides per fleet when a ride is created: a driver freed (or moving while free)
 * reads the fleet's searching rides, oldest first, so this bounds that work (a haversine per
 * ride). A new ride is refused with 503 capacity_exceeded while the fleet has this many;
 * rides whose offer moves on may go past it, by at most the fleet's drivers. */
#define HF_DISPATCH_FLEET_SEARCHING_MAX 1000u
/* Drivers a ride remembers as having declined it or let its offer lapse, never offered it
 * again: past this many the ride stays searching without further offers until cancelled
 * (a rider refused by 100 drivers needs a person, not the 101st offer). */
#define HF_DISPATCH_RIDE_EXCLUDED_MAX 100u
/* radius_m: at most 50 km (a ride-hailing pickup farther than that is no pickup), default
 * 3 km (API.md). */
#define HF_DISPATCH_RADIUS_M_MAX 50000
#define HF_DISPATCH_RADIUS_M_DEFAULT 3000
/* offer_ttl_s: at most 10 minutes (an offer is a few seconds' decision), default 15 s. */
#define HF_DISPATCH_OFFER_TTL_MS_MAX (600LL * 1000)
#define HF_DISPATCH_OFFER_TTL_MS_DEFAULT (15LL * 1000)
/* Pages of a fleet's rides and drivers (API.md section 1's rule for every list of section 8):
 * 100 unless asked, at most 1,000. */
#define HF_DISPATCH_PAGE_DEFAULT 100u
#define HF_DISPATCH_PAGE_MAX 1000u
/* Locations are soft state: a driver's row is written to the store at most this often (the
 * engine's flush timer), never once per update. */
#define HF_DISPATCH_FLUSH_INTERVAL_MS 1000u
/* Drivers written by one flush: a city of 100,000 drivers all moving would otherwise put
 * 100,000 rows a second into the store's batches, and every durable answer (a hold, a ride)
 * waits behind them (make bench's dispatch part measured holds falling from 3,354/s to 398/s
 * beside such updates). Past this, the drivers changed longest ago go first and the rest wait
 * for the next flush: under full churn each driver is written every few seconds, and a restart
 * loses at most those seconds of positions, which drivers report again. */
#define HF_DISPATCH_FLUSH_DRIVERS_MAX 20000u

/* ---- Several nodes (API.md section 11, cluster/cluster.h, cluster/forward.h) ---- */

/* Nodes a node forwards to: each has a pool of connections; a cluster is a few nodes. */
#define HF_FORWARD_PEERS_MAX 16
/* Keep-alive connections to one peer at once: requests beyond them wait for none and are
 * answered 503, so a slow owner cannot take every descriptor of the node forwarding to it. */
#define HF_FORWARD_CONNECTIONS_MAX 64
/* A forwarded request unanswered this long gets 503 unavailable (its outcome unknown): about
 * the lease's length, after which another node would own the unit anyway. */
#define HF_FORWARD_TIMEOUT_MS 5000u
/* A relayed answer's body: the largest answer about one unit (a list page of an event's holds
 * or seats) stays well under it. */
#define HF_FORWARD_BODY_MAX (16u * 1024 * 1024)
/* Internal calls (cluster/call.h: a node asking a unit's owner, as the exchange across two
 * owners does) in flight at once; more are refused at once, as if the owner did not answer,
 * so a slow owner cannot pile up one node's connections and memory. */
#define HF_CLUSTER_CALLS_MAX 256
/* An internal call unanswered this long has no answer (its outcome unknown): longer than
 * HF_FORWARD_TIMEOUT_MS, since the node it reaches may forward it once more to the owner. */
#define HF_CLUSTER_CALL_TIMEOUT_MS 7000u
/* Units one node owns at once (its table's capacity); more are refused (503) rather than
 * grown without bound. */
#define HF_CLUSTER_UNITS_MAX 65536
/* A unit's id as leases name it: an event's or a fleet's id. */
#define HF_CLUSTER_UNIT_SIZE_MAX 128
/* A node's id and its advertised URL (--node-id, --advertise). */
#define HF_CLUSTER_NODE_ID_SIZE_MAX 128
#define HF_CLUSTER_ADDRESS_SIZE_MAX 256
/* The lease's renewal period: the lease lasts 5 s (store/postgres/lease.c), so four renewals
 * may fail before it lapses. */
#define HF_CLUSTER_RENEW_MS 1000u
/* The cluster's work on the database for a request (a takeover, an id's unit, a list across
 * units: cluster/jobs.h), waiting or running: it runs on libuv's thread pool one job
 * at a time (they share the lease connection; libpq's connections are not thread-safe, and
 * one at a time leaves pool threads for the renewal), so past this many the database is far
 * behind and a request needing one more is answered 503 at once. */
#define HF_CLUSTER_JOBS_MAX 64
/* Requests parked on one job (every request about one unit being taken over, say); more are
 * answered 503 at once. Every parked request also holds one of HF_HTTP_DEFERRED_MAX. */
#define HF_CLUSTER_JOB_PARKED_MAX 256

/* ---- user tokens (API.md section 16) ---- */
/* A user token is refused as malformed above this many bytes, before anything is decoded:
 * the platform's JWTs carry a few claims, and a client cannot make the server decode and
 * parse more than this. */
#define HF_USER_TOKEN_SIZE_MAX 4096
/* exp may be at most this many seconds after iat: a stolen token is good for a day at most. */
#define HF_USER_TOKEN_LIFETIME_S_MAX 86400
/* iat may be this many seconds ahead of the server's clock (the platform's clock may run a
 * little ahead); further is not yet valid. */
#define HF_USER_TOKEN_CLOCK_SKEW_S 60

/* ---- Outbound notifications (API.md section 15, engine/outbox.h) ---- */
/* Deliveries in flight at once per node: enough to keep a receiver busy, few enough that a
 * slow one costs at most this many connections. */
#define HF_NOTIFY_IN_FLIGHT_MAX 16
/* An attempt that has no 2xx answer within this long failed (and is retried). */
#define HF_NOTIFY_TIMEOUT_MS 10000
/* The backoff: 1 s after the first failure, doubling, at most 1 h apart. */
#define HF_NOTIFY_BACKOFF_FIRST_MS 1000
#define HF_NOTIFY_BACKOFF_MAX_MS (3600 * 1000)
/* How long a notification is retried, counted from its change: then it is failed. */
#define HF_NOTIFY_RETRY_FOR_MS (3LL * 24 * 3600 * 1000)
/* --notify-backlog-max's default: pending notifications past it are dropped, oldest first. */
#define HF_NOTIFY_BACKLOG_DEFAULT 1000000
/* The largest bound --notify-backlog-max takes: a billion entries is years of a busy store. */
#define HF_NOTIFY_BACKLOG_LIMIT 1000000000
/* Notifications held in memory at once (the delivery window): the rest stay in the store
 * (the history is the outbox) until the window has room, so a dead receiver costs memory for
 * this many, whatever the backlog. Each holds its body (an entry of a few hundred bytes). */
#define HF_NOTIFY_WINDOW_MAX 1024
/* Entries read from the store in one read of one unit. */
#define HF_NOTIFY_READ_MAX 256
/* How often the notifier looks for due attempts, new entries and the backlog. */
#define HF_NOTIFY_TICK_MS 50
/* Notifications dropped from the window in one tick when the backlog is over its bound. */
#define HF_NOTIFY_DROPS_PER_TICK_MAX HF_NOTIFY_WINDOW_MAX
/* A notification's body: an entry's data is bounded by its record (a hold of a
 * bounded number of seats); one longer than this is failed, not sent. */
#define HF_NOTIFY_BODY_SIZE_MAX (256u * 1024)
/* last_error's text, as kept and shown. */
#define HF_NOTIFY_ERROR_SIZE_MAX 160
/* GET /v1/notifications: a page's default and most rows. */
#define HF_NOTIFY_PAGE_DEFAULT 100
#define HF_NOTIFY_PAGE_MAX 1000
/* A page of delivered or failed ones examines at most this many entries (no index has them:
 * the pending have theirs) and then answers next to go on, so a page never scans the whole
 * history on the loop thread. */
#define HF_NOTIFY_SCAN_MAX 10000

/* The API of calendars (api/calendars.c). A 409 range_unavailable lists at most this many
 * sub-spans: enough for every item of a hold to name a few, and a bound on the answer. */
#define HF_CALENDAR_CONFLICTS_MAX 256u
/* Resources named by one GET /free or /slots (?resource=A&resource=B...): a query string is
 * at most a head long, so more could not be sent anyway. */
#define HF_CALENDAR_QUERY_RESOURCES_MAX 1000u
/* GET /availability writes its segments in chunks of this many, merged across chunks. */
#define HF_CALENDAR_SEGMENTS_CHUNK 1024u

#endif
