/* bench/loadgen: a load generator for Holdfast's HTTP API (libuv, HTTP/1.1 keep-alive,
 * N connections, optional pipelining, seeded). One thread, one loop: on the 2-core machines
 * the benchmarks run on, a second client thread would only take CPU from the server.
 *
 * Workloads (see bench/README.md):
 *   noop         GET /healthz: the floor of the HTTP stack.
 *   hold-random  single-seat holds of a random seat by a random user on a 60,000-seat event.
 *   hold-hot     every connection fights for the same 10 seats; a winner releases at once.
 *   flash-sale   buyers hold 1-4 seats, 80% commit, 20% abandon (short ttl); runs until sold
 *                out, then checks through the API that every seat is sold exactly once and
 *                every acknowledged order exists. Exits 1 on any violation.
 *   redis-set    not Holdfast: Redis's `SET seat:N uM NX EX ttl` (RESP) with hold-random's
 *                seats and users, so Redis can be measured with the same client as Holdfast.
 *                redis-benchmark takes about twice this client's CPU per request, and on two
 *                shared cores that is CPU the server does not get. Statuses: 201 for +OK (the
 *                key was set), 409 for a nil answer (NX refused: the seat is taken).
 *   webhook      each connection holds a random seat not yet sold (as hold-random, on an event
 *                of its own) and then sends the signed payment.succeeded webhook for that hold
 *                with its total (HMAC-SHA256 with --webhook-secret), as a payment provider
 *                would. The rate quoted is webhooks answered {"result":"committed",...} per
 *                second; each of them also cost a hold, which is counted apart.
 *   exchange     each connection buys a random seat (a hold, then its commit) and then changes
 *                that order again and again (API.md section 13): an exchange hold of another
 *                random seat with exchange_for its current order, then the hold's commit, whose
 *                new order the next exchange replaces. Every seat has one price, so the
 *                difference is 0. The rate quoted is exchanges committed per second (each cost
 *                two answers, its hold and its commit); pipeline 1.
 *   queue-join   each request a new user joins the line of an event with a waiting room
 *                (API.md section 6) whose admit_per_s is tiny, so the line only grows.
 *   queue-poll   first fills the line with --line users (joins, pipelined: the fill is timed),
 *                then polls tickets of that line drawn at random, each a GET of a ticket the
 *                server gave; the answer must name that ticket. --rss-pid reads the server's
 *                resident set before and after the fill.
 *   queue-admit  joins and polls at once on a room admitting --admit-per-s users a second;
 *                polls go to the front of the line, so the moment a ticket turns admitted is
 *                seen within a few milliseconds: admissions counted per 100 ms window.
 *   driver-update  first puts --drivers drivers of one fleet in a 20 km square (API.md section
 *                8), then moves random drivers to random places in it.
 *   ride-request the first --ride-connections connections request rides at random places in
 *                that square (and accept each offer for its driver, or cancel a ride left
 *                searching) while the others keep moving drivers; the ride's latency is the
 *                time from the POST leaving to its answer, which carries the offer.
 *   calendar-hold  durable holds on a night calendar (API.md section 12) of --resources
 *                resources, half of capacity 1 and half of capacity 10 (created in batches
 *                through POST /v1/calendars/{cal}/resources): each a random resource for a
 *                random 1-5-night span starting 1 to --span-days days ahead, ttl_s --ttl, so
 *                they lapse. 201 won, 409 range_unavailable lost.
 *   calendar-free  GET /free for a random 3-night span, quantity 1, over every resource;
 *                with --fill-uses N the calendar is first filled with N back-to-back 3-night
 *                bookings per resource from tomorrow on (bookings of up to 10 items: the fill
 *                is timed, and --rss-pid reads the server's resident set around it).
 *   calendar-availability  GET /availability of a random resource over the next 365 days,
 *                on the same calendar and fill.
 *
 * The client is closed-loop: each connection keeps `pipeline` requests in flight and sends the
 * next one when an answer arrives, so latencies are those of a saturated server.
 * Latency is measured from the moment a request is queued for writing to the moment its whole
 * answer is parsed, kept in a log-linear histogram (under 1% error). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <uv.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#define PIPELINE_MAX 128       /* the server's own limit (HF_HTTP_PIPELINE_MAX) */
#define CONNECTIONS_MAX 5000
#define BUYER_SEATS_MAX 4
#define RESPONSE_SIZE_MAX (4u << 20)
#define SERVER_ID_SIZE 64
#define TICKET_SIZE 48          /* a queue ticket, "q_" and its random part, with its NUL */
#define LINE_DEFAULT_MAX 2000000u /* the server's default limit of a line (max_waiting) */
#define ADMIT_FRONT 64          /* queue-admit: tickets at the line's front that polls cycle over */
#define ADMIT_WINDOW_MS 100     /* queue-admit: admissions are counted per window of this */
#define CALENDAR_BATCH 1000     /* calendar-*: resources per request of the setup */
#define CALENDAR_ITEMS_MAX 10   /* the server's default max_items_per_hold: uses per booking */
#define CALENDAR_HORIZON_DAYS 365 /* the calendar's horizon_days (the server's default) */
#define CALENDAR_FILL_NIGHTS 3  /* calendar-*: the nights of each use of the fill */
#define CALENDAR_NIGHTS_MAX 5   /* calendar-hold: spans of 1 to this many nights */
#define CITY_HALF_SIDE_M 10000  /* the dispatch workloads' square: 20 km a side */
#define CITY_LAT 40.75          /* its centre (Manhattan) */
#define CITY_LNG (-73.99)

/* ---- small tools ---- */

static void die(const char *format, ...) {
    va_list args;
    va_start(args, format);
    fprintf(stderr, "loadgen: ");
    vfprintf(stderr, format, args);
    fprintf(stderr, "\n");
    va_end(args);
    exit(2);
}

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A uniform integer in [0, bound). */
static uint32_t random_below(uint64_t *state, uint32_t bound) {
    return (uint32_t)(((splitmix64(state) >> 32) * (uint64_t)bound) >> 32);
}

typedef struct buffer {
    char *data;
    size_t length, capacity;
} buffer_t;

static void buffer_reserve(buffer_t *buffer, size_t extra) {
    if (buffer->length + extra <= buffer->capacity) return;
    size_t capacity = buffer->capacity ? buffer->capacity : 4096;
    while (capacity < buffer->length + extra) capacity *= 2;
    buffer->data = realloc(buffer->data, capacity);
    if (!buffer->data) die("out of memory");
    buffer->capacity = capacity;
}

static void buffer_append(buffer_t *buffer, const char *data, size_t length) {
    buffer_reserve(buffer, length);
    memcpy(buffer->data + buffer->length, data, length);
    buffer->length += length;
}

static void buffer_printf(buffer_t *buffer, const char *format, ...) {
    va_list args;
    va_start(args, format);
    int needed = vsnprintf(NULL, 0, format, args);
    va_end(args);
    if (needed < 0) die("bad format");
    buffer_reserve(buffer, (size_t)needed + 1);
    va_start(args, format);
    vsnprintf(buffer->data + buffer->length, (size_t)needed + 1, format, args);
    va_end(args);
    buffer->length += (size_t)needed;
}

/* ---- latency histogram: log-linear, 64 sub-buckets per power of two, microseconds ---- */

#define HISTOGRAM_SUB 64
#define HISTOGRAM_BUCKETS (2 * HISTOGRAM_SUB + 48 * HISTOGRAM_SUB)

typedef struct histogram {
    uint64_t counts[HISTOGRAM_BUCKETS];
    uint64_t total, max_us, sum_us;
} histogram_t;

static unsigned bucket_of(uint64_t value) {
    if (value < 2 * HISTOGRAM_SUB) return (unsigned)value;
    int msb = 63 - __builtin_clzll(value);
    int shift = msb - 6; /* value >> shift lies in [64, 128) */
    unsigned bucket = 2 * HISTOGRAM_SUB + (unsigned)(shift - 1) * HISTOGRAM_SUB +
                      (unsigned)((value >> shift) - HISTOGRAM_SUB);
    return bucket < HISTOGRAM_BUCKETS ? bucket : HISTOGRAM_BUCKETS - 1;
}

/* The middle of a bucket's range. */
static double bucket_value(unsigned bucket) {
    if (bucket < 2 * HISTOGRAM_SUB) return bucket;
    unsigned shift = (bucket - 2 * HISTOGRAM_SUB) / HISTOGRAM_SUB + 1;
    uint64_t mantissa = (bucket - 2 * HISTOGRAM_SUB) % HISTOGRAM_SUB + HISTOGRAM_SUB;
    return (double)(mantissa << shift) + (double)((1ull << shift) - 1) / 2.0;
}

static void histogram_record(histogram_t *histogram, uint64_t value_us) {
    histogram->counts[bucket_of(value_us)]++;
    histogram->total++;
    histogram->sum_us += value_us;
    if (value_us > histogram->max_us) histogram->max_us = value_us;
}

/* Percentile in milliseconds, p in [0, 100]. */
static double histogram_percentile_ms(const histogram_t *histogram, double p) {
    if (histogram->total == 0) return 0;
    uint64_t rank = (uint64_t)(p / 100.0 * (double)histogram->total + 0.5);
    if (rank < 1) rank = 1;
    uint64_t seen = 0;
    for (unsigned b = 0; b < HISTOGRAM_BUCKETS; b++) {
        seen += histogram->counts[b];
        if (seen >= rank) {
            double value = bucket_value(b);
            if (value > (double)histogram->max_us) value = (double)histogram->max_us;
            return value / 1000.0;
        }
    }
    return (double)histogram->max_us / 1000.0;
}

/* ---- options ---- */

typedef enum workload {
    W_NOOP, W_HOLD_RANDOM, W_HOLD_HOT, W_FLASH_SALE, W_REDIS_SET, W_WEBHOOK, W_QUEUE_JOIN,
    W_QUEUE_POLL, W_QUEUE_ADMIT, W_DRIVER_UPDATE, W_RIDE_REQUEST, W_CALENDAR_HOLD,
    W_CALENDAR_FREE, W_CALENDAR_AVAILABILITY, W_EXCHANGE
} workload_t;

static const char *workload_names[] = {"noop", "hold-random", "hold-hot", "flash-sale",
                                       "redis-set", "webhook", "queue-join", "queue-poll",
                                       "queue-admit", "driver-update", "ride-request",
                                       "calendar-hold", "calendar-free",
                                       "calendar-availability", "exchange"};
#define WORKLOAD_COUNT (sizeof workload_names / sizeof workload_names[0])

typedef struct options {
    const char *host;
    int port;
    workload_t workload;
    int connections;
    int pipeline;
    double duration_s, warmup_s;
    uint64_t seed;
    double ttl_s;
    const char *event;
    uint32_t seats;            /* seats of the event, rows of 1,000 */
    uint32_t users;            /* hold-random: distinct users */
    uint32_t hot_seats;        /* hold-hot */
    uint32_t seat_step;        /* hold-random: only seats whose index is a multiple of it */
    uint64_t buyers;           /* flash-sale: the buyer population */
    uint32_t commit_percent;   /* flash-sale */
    double max_s;              /* flash-sale: give up after this long */
    bool create_event;
    const char *json_path;
    const char *api_key;
    const char *webhook_secret; /* webhook: the server's --webhook-secret */
    /* The server's --user-token-secret: each connection then acts as a buyer of its own, with
     * a user token (API.md section 16) minted here for user cN (connection N), and its holds
     * name that user. The event is still created with --api-key. */
    const char *user_token_secret;
    uint32_t line;             /* queue-poll: waiting users to fill the line with */
    double admit_per_s;        /* queue-*: the room's admit_per_s */
    double opens_at_ms;        /* queue-*: the room's opens_at (ms since the epoch), 0: none */
    uint32_t join_percent;     /* queue-admit: joins among the requests */
    const char *tickets_path;  /* queue-poll: a filled line's tickets, kept for the next run */
    int rss_pid;               /* queue-poll: the server, to read its resident set */
    int fill_pipeline;         /* queue-poll, driver-update: requests in flight while filling */
    uint32_t drivers;          /* driver-update, ride-request: drivers of the fleet */
    int ride_connections;      /* ride-request: connections that request rides */
    uint32_t radius_m;         /* ride-request: the rides' radius_m */
    uint32_t resources;        /* calendar-*: resources of the calendar */
    uint32_t span_days;        /* calendar-hold, calendar-free: spans start 1 to this many days ahead */
    uint32_t fill_uses;        /* calendar-free, calendar-availability: uses per resource */
} options_t;

static options_t options = {
    .host = "127.0.0.1",
    .port = 8080,
    .workload = W_HOLD_RANDOM,
    .connections = 50,
    .pipeline = 1,
    .duration_s = 3,
    .warmup_s = 0.5,
    .seed = 1,
    .ttl_s = -1,
    .event = NULL,
    .seats = 60000,
    .users = 1000000,
    .hot_seats = 10,
    .seat_step = 1,
    .buyers = 2000000,
    .commit_percent = 80,
    .max_s = 300,
    .create_event = true,
    .json_path = NULL,
    .api_key = NULL,
    .webhook_secret = NULL,
    .user_token_secret = NULL,
    .line = 1000000,
    .admit_per_s = -1,
    .join_percent = 10,
    .tickets_path = NULL,
    .rss_pid = 0,
    .fill_pipeline = 32,
    .drivers = 100000,
    .ride_connections = 0,
    .radius_m = 3000,
    .resources = 10000,
    .span_days = 300,
    .fill_uses = 0,
};

static void usage(void) {
    fprintf(stderr,
        "usage: loadgen [options]\n"
        "  --workload noop|hold-random|hold-hot|flash-sale|redis-set|webhook|queue-join|\n"
        "             queue-poll|queue-admit|driver-update|ride-request|calendar-hold|\n"
        "             calendar-free|calendar-availability|exchange               (hold-random)\n"
        "  --host H --port P          server (127.0.0.1:8080)\n"
        "  -c, --connections N        connections (50)\n"
        "  -p, --pipeline D           requests in flight per connection (1, at most %d)\n"
        "  -d, --duration S           measured seconds (3); flash-sale runs until sold out\n"
        "  --warmup S                 seconds before measuring (0.5)\n"
        "  --seed N                   random seed (1)\n"
        "  --ttl S                    hold ttl_s (hold-random 1, hold-hot 1, flash-sale 1);\n"
        "                             redis-set: EX, whole seconds (1)\n"
        "  --event ID                 event, fleet or calendar id (bench, hot, flash, webhook,\n"
        "                             exchange, queue, fleet, cal)\n"
        "  --seats N                  seats of the event, rows of 1,000 (60000)\n"
        "  --users N                  hold-random: distinct users (1000000)\n"
        "  --hot-seats N              hold-hot: seats fought for (10)\n"
        "  --seat-step K              hold-random: only every K-th seat (1), the public ones\n"
        "                             of an event whose others are set aside (allocations.sh)\n"
        "  --buyers N                 flash-sale: buyer population (2000000)\n"
        "  --commit-percent N         flash-sale: buyers who commit (80)\n"
        "  --max-seconds S            flash-sale: give up after S seconds (300)\n"
        "  --no-create                do not create the event (it exists already)\n"
        "  --api-key KEY              sends Authorization: Bearer KEY\n"
        "  --webhook-secret S         webhook: the server's --webhook-secret, to sign with\n"
        "  --user-token-secret S      hold-*: one user token per connection (user cN), minted\n"
        "                             with the server's --user-token-secret, sent as Bearer\n"
        "  --line N                   queue-poll: waiting users to fill the line with (1000000)\n"
        "  --admit-per-s R            queue-*: the room's admit_per_s (0.001; queue-admit 100)\n"
        "  --opens-at MS              queue-*: the room's opens_at, in ms since the epoch (the\n"
        "                             pre-queue: joins before it are shuffled at it)\n"
        "  --join-percent N           queue-admit: joins among the requests (10)\n"
        "  --tickets PATH             queue-poll: read the line's tickets from PATH if it holds\n"
        "                             --line of them (no fill), else fill and write them there\n"
        "  --rss-pid PID              queue-poll: the server's VmRSS before and after the fill\n"
        "  --fill-pipeline D          requests in flight per connection while filling (32)\n"
        "  --drivers N                driver-update, ride-request: drivers (100000)\n"
        "  --ride-connections N       ride-request: connections requesting rides (c/10, >= 1)\n"
        "  --radius M                 ride-request: radius_m of the rides (3000)\n"
        "  --resources N              calendar-*: resources, half of capacity 1, half 10 (10000)\n"
        "  --span-days N              calendar-hold, calendar-free: spans start 1 to N days\n"
        "                             ahead (300)\n"
        "  --fill-uses N              calendar-free, calendar-availability: fill N back-to-back\n"
        "                             3-night bookings per resource first (0; at most 121)\n"
        "  --json PATH                also write the results as JSON to PATH\n",
        PIPELINE_MAX);
    exit(2);
}

static double parse_number(const char *text, const char *name) {
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (errno || end == text || *end) die("bad value for %s: %s", name, text);
    return value;
}

static void parse_options(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
#define TAKES(name) (strcmp(arg, name) == 0 && (value || (usage(), 0)) && ++i)
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) usage();
        else if (strcmp(arg, "--no-create") == 0) options.create_event = false;
        else if (TAKES("--workload")) {
            bool found = false;
            for (int w = 0; w < (int)WORKLOAD_COUNT; w++)
                if (strcmp(value, workload_names[w]) == 0) options.workload = (workload_t)w, found = true;
            if (!found) die("unknown workload %s", value);
        }
        else if (TAKES("--host")) options.host = value;
        else if (TAKES("--port")) options.port = (int)parse_number(value, arg);
        else if (TAKES("-c") || TAKES("--connections")) options.connections = (int)parse_number(value, arg);
        else if (TAKES("-p") || TAKES("--pipeline")) options.pipeline = (int)parse_number(value, arg);
        else if (TAKES("-d") || TAKES("--duration")) options.duration_s = parse_number(value, arg);
        else if (TAKES("--warmup")) options.warmup_s = parse_number(value, arg);
        else if (TAKES("--seed")) options.seed = (uint64_t)parse_number(value, arg);
        else if (TAKES("--ttl")) options.ttl_s = parse_number(value, arg);
        else if (TAKES("--event")) options.event = value;
        else if (TAKES("--seats")) options.seats = (uint32_t)parse_number(value, arg);
        else if (TAKES("--users")) options.users = (uint32_t)parse_number(value, arg);
        else if (TAKES("--hot-seats")) options.hot_seats = (uint32_t)parse_number(value, arg);
        else if (TAKES("--seat-step")) options.seat_step = (uint32_t)parse_number(value, arg);
        else if (TAKES("--buyers")) options.buyers = (uint64_t)parse_number(value, arg);
        else if (TAKES("--commit-percent")) options.commit_percent = (uint32_t)parse_number(value, arg);
        else if (TAKES("--max-seconds")) options.max_s = parse_number(value, arg);
        else if (TAKES("--api-key")) options.api_key = value;
        else if (TAKES("--webhook-secret")) options.webhook_secret = value;
        else if (TAKES("--user-token-secret")) options.user_token_secret = value;
        else if (TAKES("--json")) options.json_path = value;
        else if (TAKES("--line")) options.line = (uint32_t)parse_number(value, arg);
        else if (TAKES("--admit-per-s")) options.admit_per_s = parse_number(value, arg);
        else if (TAKES("--opens-at")) options.opens_at_ms = parse_number(value, arg);
        else if (TAKES("--join-percent")) options.join_percent = (uint32_t)parse_number(value, arg);
        else if (TAKES("--tickets")) options.tickets_path = value;
        else if (TAKES("--rss-pid")) options.rss_pid = (int)parse_number(value, arg);
        else if (TAKES("--fill-pipeline")) options.fill_pipeline = (int)parse_number(value, arg);
        else if (TAKES("--drivers")) options.drivers = (uint32_t)parse_number(value, arg);
        else if (TAKES("--ride-connections")) options.ride_connections = (int)parse_number(value, arg);
        else if (TAKES("--radius")) options.radius_m = (uint32_t)parse_number(value, arg);
        else if (TAKES("--resources")) options.resources = (uint32_t)parse_number(value, arg);
        else if (TAKES("--span-days")) options.span_days = (uint32_t)parse_number(value, arg);
        else if (TAKES("--fill-uses")) options.fill_uses = (uint32_t)parse_number(value, arg);
        else usage();
#undef TAKES
    }
    if (options.connections < 1 || options.connections > CONNECTIONS_MAX) die("bad --connections");
    if (options.pipeline < 1 || options.pipeline > PIPELINE_MAX) die("bad --pipeline");
    if (options.seats < 1 || options.users < 1 || options.commit_percent > 100) die("bad option");
    if (options.hot_seats < 1 || options.hot_seats > options.seats) die("bad --hot-seats");
    if (options.seat_step < 1 || options.seat_step > options.seats) die("bad --seat-step");
    if (options.ttl_s < 0) options.ttl_s = 1;
    if (options.workload == W_REDIS_SET && (options.ttl_s < 1 || options.ttl_s != (uint32_t)options.ttl_s))
        die("redis-set: --ttl must be a whole number of seconds");
    if (options.workload == W_EXCHANGE && options.pipeline != 1)
        die("exchange: each connection changes one order at a time (-p 1)");
    if (options.workload == W_WEBHOOK && (!options.webhook_secret || !*options.webhook_secret))
        die("webhook: --webhook-secret is needed to sign the deliveries");
    if (options.fill_pipeline < 1 || options.fill_pipeline > PIPELINE_MAX) die("bad --fill-pipeline");
    if (options.line < 1 || options.drivers < 1 || options.join_percent > 100) die("bad option");
    if (options.admit_per_s < 0) options.admit_per_s = options.workload == W_QUEUE_ADMIT ? 100 : 0.001;
    if (options.admit_per_s <= 0) die("bad --admit-per-s");
    if (options.ride_connections <= 0) options.ride_connections = (options.connections + 9) / 10;
    if (options.workload == W_RIDE_REQUEST && options.ride_connections >= options.connections)
        die("ride-request: --ride-connections must leave connections that move drivers");
    /* Every span within the horizon: a hold's to at most span_days + 5 days ahead, the
     * fill's last check-out 1 + 3 * fill_uses days ahead. */
    if (options.resources < 1 || options.span_days < 1 ||
        options.span_days + CALENDAR_NIGHTS_MAX > CALENDAR_HORIZON_DAYS)
        die("bad --resources or --span-days (spans must end within %d days)", CALENDAR_HORIZON_DAYS);
    if (1 + (uint64_t)CALENDAR_FILL_NIGHTS * options.fill_uses > CALENDAR_HORIZON_DAYS)
        die("bad --fill-uses: at most %d 3-night uses fit the horizon", (CALENDAR_HORIZON_DAYS - 1) / 3);
    bool queue = options.workload == W_QUEUE_JOIN || options.workload == W_QUEUE_POLL ||
                 options.workload == W_QUEUE_ADMIT;
    bool calendar = options.workload == W_CALENDAR_HOLD || options.workload == W_CALENDAR_FREE ||
                    options.workload == W_CALENDAR_AVAILABILITY;
    bool fleet = options.workload == W_DRIVER_UPDATE || options.workload == W_RIDE_REQUEST;
    if (!options.event)
        options.event = options.workload == W_HOLD_HOT ? "hot"
                      : options.workload == W_FLASH_SALE ? "flash"
                      : options.workload == W_WEBHOOK ? "webhook"
                      : options.workload == W_EXCHANGE ? "exchange"
                      : queue ? "queue" : fleet ? "fleet" : calendar ? "cal" : "bench";
}

/* ---- the run ---- */

typedef enum kind {
    K_NOOP, K_CREATE_EVENT, K_HOLD, K_RELEASE, K_COMMIT, K_GET_SEATS, K_GET_ORDER, K_REDIS_SET,
    K_WEBHOOK, K_JOIN, K_POLL, K_DRIVER, K_RIDE, K_ACCEPT, K_CANCEL, K_ADD_RESOURCES, K_BOOKING,
    K_GET_CALENDAR
} kind_t;

/* What a request in flight remembers, to judge its answer. */
typedef struct pending {
    uint64_t sent_ns;
    uint8_t kind;
    uint8_t seat_count;
    bool fill;                 /* part of the fill before the run: neither measured nor counted */
    uint32_t user;             /* user or buyer number; order index for K_GET_ORDER; ticket
                                * index for K_JOIN and K_POLL; driver number for K_DRIVER and
                                * K_ACCEPT */
    uint32_t seats[BUYER_SEATS_MAX];
    uint64_t amount;           /* K_WEBHOOK: the hold's total, what the payment paid */
    bool exchange;             /* exchange: a K_HOLD or K_COMMIT of an exchange hold */
    char id[SERVER_ID_SIZE];   /* K_RELEASE, K_COMMIT, K_WEBHOOK: the hold */
} pending_t;

typedef enum phase { P_CONNECT, P_SETUP, P_FILL, P_RUN, P_DRAIN, P_VERIFY_SEATS, P_VERIFY_ORDERS,
                     P_DONE } phase_t;

typedef struct connection {
    uv_tcp_t tcp;
    uv_connect_t connect_request;
    uv_write_t write_request;
    int index;
    bool open, writing;
    uint64_t rng;
    buffer_t input;
    buffer_t output[2];        /* one being written, one being filled */
    int filling;
    pending_t inflight[PIPELINE_MAX];
    unsigned head, count;      /* ring of requests in flight, in order */
    pending_t followups[PIPELINE_MAX];
    unsigned followup_head, followup_count;
    char token[256];           /* --user-token-secret: this connection's user token, else "" */
    char order[SERVER_ID_SIZE]; /* exchange: the order the next exchange replaces, else "" */
} connection_t;

typedef struct order_record {
    char id[SERVER_ID_SIZE];
    uint32_t seats[BUYER_SEATS_MAX];
    uint8_t seat_count;
} order_record_t;

static struct {
    uv_loop_t *loop;
    uv_timer_t timer;
    connection_t *connections;
    int connected, open_connections;
    phase_t phase;
    uint64_t start_ns, measure_start_ns, measure_end_ns;
    bool measuring;
    histogram_t latency;
    histogram_t hold_latency, commit_latency, webhook_latency;
    uint64_t statuses[600];
    uint64_t measured, errors, transport_errors;
    uint64_t answered;                /* warm-up included: the server's work of the whole run */
    char first_error[512];
    /* hold-hot */
    uint64_t hot_wins, hot_losses, releases;
    /* flash-sale */
    uint64_t buyers_started, buyers_answered, holds_won, holds_lost, abandoned, commits;
    uint64_t commit_failures;
    uint32_t *view, *view_position;   /* seats not known to be sold, for picking */
    uint32_t view_count;
    uint32_t *sold_by;                /* order index + 1 per seat, from acknowledgments */
    uint64_t double_sales, sold_seats;
    order_record_t *orders;
    uint32_t order_count, order_capacity;
    uint64_t sold_out_ns;
    bool sold_out;
    char seats_after[128];
    bool seats_last_page_done;
    uint64_t verified_seats, verified_sold, verified_not_sold, seat_pages;
    uint32_t orders_checked_next, orders_verified, orders_lost, orders_mismatched;
    uint32_t verify_outstanding;
    bool violations;
    uint64_t nonce;                   /* this run's, in the webhooks' ids */
    /* webhook (each counted when answered in the measured window) */
    uint64_t webhooks_sent, webhooks_committed, webhooks_late, webhooks_other;
    char first_other_result[128];
    /* exchange (each counted when its commit is answered in the measured window) */
    uint64_t orders_bought, exchanges_committed;
    /* queue-*, driver-update and ride-request: the fill before the measured run */
    uint64_t fill_target, fill_sent, fill_answered, fill_start_ns, fill_end_ns;
    bool filled;                      /* this run filled (not read from --tickets) */
    long rss_before_kb, rss_after_kb, rss_end_kb;
    char (*tickets)[TICKET_SIZE];     /* queue-poll: by user; queue-admit: in answer order */
    uint32_t ticket_count, ticket_capacity;
    uint64_t joins_started, joins_new, joins_repeat, polls_waiting, polls_admitted, polls_other;
    uint64_t tickets_mismatched;
    /* queue-admit */
    uint8_t *admitted;                /* per ticket: seen admitted */
    uint64_t *last_waiting_ns;        /* per ticket: the last answer that said waiting */
    uint32_t admit_front;             /* first ticket not seen admitted */
    uint64_t admit_cursor;
    uint64_t *admission_ns;           /* when each admission was seen, in the window */
    uint64_t admission_count, admission_capacity;
    histogram_t admission_resolution; /* time between the last waiting and the admitted poll */
    /* driver-update, ride-request */
    uint64_t rides_started, rides_offered, rides_searching, accepts, accepts_failed, cancels;
    uint64_t updates;
    histogram_t ride_latency, accept_latency, update_latency;
    /* calendar-* */
    uint32_t resources_sent;          /* resources in the setup's requests so far */
    int64_t today_days;               /* today's UTC date, in days since 1970-01-01 */
} run;

static void record_error(const char *format, ...) {
    run.errors++;
    if (run.first_error[0]) return;
    va_list args;
    va_start(args, format);
    vsnprintf(run.first_error, sizeof run.first_error, format, args);
    va_end(args);
}

static void seat_id(uint32_t seat, char *out, size_t size) {
    snprintf(out, size, "S-R%" PRIu32 "-%" PRIu32, seat / 1000, seat % 1000 + 1);
}

/* Seat index of "S-R<row>-<number>"; UINT32_MAX when it does not parse. */
static uint32_t seat_parse(const char *text, size_t length) {
    if (length < 6 || strncmp(text, "S-R", 3) != 0) return UINT32_MAX;
    uint64_t row = 0, number = 0;
    size_t i = 3;
    while (i < length && text[i] >= '0' && text[i] <= '9') row = row * 10 + (uint64_t)(text[i++] - '0');
    if (i >= length || text[i] != '-') return UINT32_MAX;
    i++;
    while (i < length && text[i] >= '0' && text[i] <= '9') number = number * 10 + (uint64_t)(text[i++] - '0');
    if (i != length || number < 1 || number > 1000) return UINT32_MAX;
    uint64_t seat = row * 1000 + number - 1;
    return seat < options.seats ? (uint32_t)seat : UINT32_MAX;
}

/* Copies the string value of "name" in a JSON body (ids never hold escapes); false if absent. */
static bool json_string(const char *body, size_t length, const char *name, char *out,
                        size_t size) {
    char needle[64];
    int needle_length = snprintf(needle, sizeof needle, "\"%s\":\"", name);
    const char *found = memmem(body, length, needle, (size_t)needle_length);
    if (!found) return false;
    const char *start = found + needle_length;
    const char *end = memchr(start, '"', length - (size_t)(start - body));
    if (!end || (size_t)(end - start) >= size) return false;
    memcpy(out, start, (size_t)(end - start));
    out[end - start] = '\0';
    return true;
}

/* ---- building requests ---- */

/* headers: NULL, or more header lines, each ending in CRLF. */
static void put_request(connection_t *connection, const char *method, const char *path,
                        const char *headers, const char *body, size_t body_length) {
    buffer_t *out = &connection->output[connection->filling];
    buffer_printf(out, "%s %s HTTP/1.1\r\nHost: %s:%d\r\n", method, path, options.host,
                  options.port);
    /* A buyer's token on everything but the event's creation, which is the platform's. */
    if (connection->token[0] && strcmp(path, "/v1/events") != 0)
        buffer_printf(out, "Authorization: Bearer %s\r\n", connection->token);
    else if (options.api_key)
        buffer_printf(out, "Authorization: Bearer %s\r\n", options.api_key);
    if (headers) buffer_printf(out, "%s", headers);
    if (body)
        buffer_printf(out, "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                      body_length);
    else
        buffer_append(out, "\r\n", 2);
    if (body) buffer_append(out, body, body_length);
}

static pending_t *push_inflight(connection_t *connection, kind_t kind) {
    pending_t *pending = &connection->inflight[(connection->head + connection->count) % PIPELINE_MAX];
    connection->count++;
    memset(pending, 0, offsetof(pending_t, id) + 1);
    pending->kind = (uint8_t)kind;
    pending->sent_ns = uv_hrtime();
    return pending;
}

static bool is_queue_workload(void) {
    return options.workload == W_QUEUE_JOIN || options.workload == W_QUEUE_POLL ||
           options.workload == W_QUEUE_ADMIT;
}

static bool is_fleet_workload(void) {
    return options.workload == W_DRIVER_UPDATE || options.workload == W_RIDE_REQUEST;
}

static bool is_calendar_workload(void) {
    return options.workload == W_CALENDAR_HOLD || options.workload == W_CALENDAR_FREE ||
           options.workload == W_CALENDAR_AVAILABILITY;
}

static void send_calendar_resources(connection_t *connection);

static void send_create_event(connection_t *connection) {
    if (is_calendar_workload()) {
        send_calendar_resources(connection);
        return;
    }
    buffer_t body = {0};
    buffer_printf(&body, "{\"id\":\"%s\",\"hold_ttl_s\":600,\"sections\":[{\"id\":\"S\",\"price\":100,\"rows\":[",
                  options.event);
    uint32_t rows = (options.seats + 999) / 1000;
    for (uint32_t r = 0; r < rows; r++) {
        uint32_t seats = r + 1 < rows ? 1000 : options.seats - r * 1000;
        buffer_printf(&body, "%s{\"id\":\"R%" PRIu32 "\",\"seats\":%" PRIu32 "}", r ? "," : "", r, seats);
    }
    buffer_printf(&body, "]}]");
    /* The queue workloads' room: a line that only the workload moves (abandonment a day
     * away), and no cap on admitted users. */
    if (is_queue_workload()) {
        buffer_printf(&body, ",\"waiting_room\":{\"enabled\":true,\"admit_per_s\":%g,"
                      "\"token_ttl_s\":86400,\"max_active\":0,\"abandon_after_s\":86400",
                      options.admit_per_s);
        /* A line longer than the server's default limit (2,000,000) says so: max_waiting is
         * the server's own room setting (docs/API.md), which the contract leaves open. */
        if (options.workload == W_QUEUE_POLL && options.line > LINE_DEFAULT_MAX)
            buffer_printf(&body, ",\"max_waiting\":%" PRIu32, options.line);
        if (options.opens_at_ms > 0) {
            time_t seconds = (time_t)(options.opens_at_ms / 1000);
            struct tm utc;
            char text[32];
            gmtime_r(&seconds, &utc);
            strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
            buffer_printf(&body, ",\"opens_at\":\"%s.%03dZ\"", text,
                          (int)((int64_t)options.opens_at_ms % 1000));
        }
        buffer_printf(&body, "}");
    }
    buffer_printf(&body, "}");
    put_request(connection, "POST", "/v1/events", NULL, body.data, body.length);
    push_inflight(connection, K_CREATE_EVENT);
    free(body.data);
}

static void send_hold(connection_t *connection, uint32_t user, const uint32_t *seats,
                      unsigned seat_count, char user_prefix) {
    char body[512], path[128];
    /* With a user token the hold is its user's: the same body, that user's id. */
    int length = connection->token[0]
                     ? snprintf(body, sizeof body, "{\"user_id\":\"c%d\",\"seats\":[",
                                connection->index)
                     : snprintf(body, sizeof body, "{\"user_id\":\"%c%" PRIu32 "\",\"seats\":[",
                                user_prefix, user);
    for (unsigned i = 0; i < seat_count; i++) {
        char id[32];
        seat_id(seats[i], id, sizeof id);
        length += snprintf(body + length, sizeof body - (size_t)length, "%s\"%s\"", i ? "," : "", id);
    }
    length += snprintf(body + length, sizeof body - (size_t)length, "],\"ttl_s\":%g}", options.ttl_s);
    snprintf(path, sizeof path, "/v1/events/%s/holds", options.event);
    put_request(connection, "POST", path, NULL, body, (size_t)length);
    pending_t *pending = push_inflight(connection, K_HOLD);
    pending->user = user;
    pending->seat_count = (uint8_t)seat_count;
    memcpy(pending->seats, seats, seat_count * sizeof seats[0]);
}

/* exchange: a hold of one seat for connection's user that replaces its current order. */
static void send_exchange_hold(connection_t *connection, uint32_t seat) {
    char body[512], path[128], id[32];
    seat_id(seat, id, sizeof id);
    int length = snprintf(body, sizeof body,
                          "{\"user_id\":\"u%d\",\"seats\":[\"%s\"],\"ttl_s\":%g,"
                          "\"exchange_for\":\"%s\"}",
                          connection->index, id, options.ttl_s, connection->order);
    snprintf(path, sizeof path, "/v1/events/%s/holds", options.event);
    put_request(connection, "POST", path, NULL, body, (size_t)length);
    pending_t *pending = push_inflight(connection, K_HOLD);
    pending->user = (uint32_t)connection->index;
    pending->seat_count = 1;
    pending->seats[0] = seat;
    pending->exchange = true;
}

/* SET seat:<seat> u<user> NX EX <ttl> as a RESP array of bulk strings. */
static void send_redis_set(connection_t *connection, uint32_t user, uint32_t seat) {
    char key[32], value[16], ttl[16];
    int key_length = snprintf(key, sizeof key, "seat:%" PRIu32, seat);
    int value_length = snprintf(value, sizeof value, "u%" PRIu32, user);
    int ttl_length = snprintf(ttl, sizeof ttl, "%" PRIu32, (uint32_t)options.ttl_s);
    buffer_printf(&connection->output[connection->filling],
                  "*6\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$2\r\nNX\r\n$2\r\nEX\r\n"
                  "$%d\r\n%s\r\n", key_length, key, value_length, value, ttl_length, ttl);
    push_inflight(connection, K_REDIS_SET)->user = user;
}

/* base64url without padding of size bytes into out (NUL-terminated); its length. */
static size_t base64url(const unsigned char *bytes, size_t size, char *out) {
    int length = EVP_EncodeBlock((unsigned char *)out, bytes, (int)size);
    while (length > 0 && out[length - 1] == '=') length--;
    for (int i = 0; i < length; i++) out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
    out[length] = '\0';
    return (size_t)length;
}

/* connection's user token for user cN, an hour long, signed HS256 with --user-token-secret
 * as a platform's backend would (API.md section 16). */
static void token_mint(connection_t *connection) {
    char payload[128], *out = connection->token;
    long long now = (long long)time(NULL);
    int payload_length = snprintf(payload, sizeof payload, "{\"sub\":\"c%d\",\"iat\":%lld,\"exp\":%lld}",
                                  connection->index, now, now + 3600);
    static const char header[] = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
    size_t used = base64url((const unsigned char *)header, sizeof header - 1, out);
    out[used++] = '.';
    used += base64url((const unsigned char *)payload, (size_t)payload_length, out + used);
    unsigned char digest[32];
    unsigned int digest_size = 0;
    if (!HMAC(EVP_sha256(), options.user_token_secret, (int)strlen(options.user_token_secret),
              (const unsigned char *)out, used, digest, &digest_size))
        die("HMAC-SHA256 failed");
    out[used++] = '.';
    base64url(digest, digest_size, out + used);
}

/* Lowercase hex of HMAC-SHA256(secret, text) into hex (65 bytes). */
static void sign(const char *text, size_t length, char *hex) {
    static const char digits[] = "0123456789abcdef";
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned mac_length = 0;
    if (!HMAC(EVP_sha256(), options.webhook_secret, (int)strlen(options.webhook_secret),
              (const unsigned char *)text, length, mac, &mac_length) || mac_length != 32)
        die("HMAC-SHA256 failed");
    for (unsigned i = 0; i < mac_length; i++) {
        hex[2 * i] = digits[mac[i] >> 4];
        hex[2 * i + 1] = digits[mac[i] & 15];
    }
    hex[2 * mac_length] = '\0';
}

/* The payment.succeeded delivery for a hold just won, paying its total, signed as API.md
 * section 7 says: Holdfast-Signature: t=<unix seconds>,v1=hex(HMAC(secret, t "." body)).
 * The intent id is new for every delivery (the server deduplicates on it), and carries the
 * run's nonce so that a second run against the same server never repeats one. */
static void send_webhook(connection_t *connection, const pending_t *followup) {
    char body[384], text[448], headers[160], hex[65];
    uint64_t number = run.webhooks_sent++;
    int length = snprintf(body, sizeof body,
                          "{\"id\":\"evt_%" PRIx64 "_%" PRIu64 "\",\"type\":\"payment.succeeded\","
                          "\"payment_intent_id\":\"pi_%" PRIx64 "_%" PRIu64 "\",\"reservation_id\":\"%s\","
                          "\"amount\":%" PRIu64 "}",
                          run.nonce, number, run.nonce, number, followup->id, followup->amount);
    long now = (long)time(NULL);
    int text_length = snprintf(text, sizeof text, "%ld.%s", now, body);
    if (length >= (int)sizeof body || text_length >= (int)sizeof text) die("webhook too long");
    sign(text, (size_t)text_length, hex);
    snprintf(headers, sizeof headers, "Holdfast-Signature: t=%ld,v1=%s\r\n", now, hex);
    put_request(connection, "POST", "/v1/webhooks/payments", headers, body, (size_t)length);
    pending_t *pending = push_inflight(connection, K_WEBHOOK);
    uint64_t sent = pending->sent_ns;
    *pending = *followup;
    pending->sent_ns = sent;
}

static void send_followup(connection_t *connection, const pending_t *followup) {
    char body[256], path[160];
    int length;
    if (followup->kind == K_WEBHOOK) {
        send_webhook(connection, followup);
        return;
    }
    char prefix = options.workload == W_FLASH_SALE ? 'b' : 'u';
    if (followup->kind == K_ACCEPT) {
        length = snprintf(body, sizeof body, "{\"driver_id\":\"d%" PRIu32 "\"}", followup->user);
        snprintf(path, sizeof path, "/v1/rides/%s/accept", followup->id);
    } else if (followup->kind == K_CANCEL) {
        length = snprintf(body, sizeof body, "{}");
        snprintf(path, sizeof path, "/v1/rides/%s/cancel", followup->id);
    } else if (followup->kind == K_COMMIT) {
        length = snprintf(body, sizeof body, "{\"user_id\":\"%c%" PRIu32 "\",\"payment_ref\":\"pi_%" PRIu32 "\"}",
                          prefix, followup->user, followup->user);
        snprintf(path, sizeof path, "/v1/holds/%s/commit", followup->id);
    } else {
        length = snprintf(body, sizeof body, "{\"user_id\":\"%c%" PRIu32 "\"}", prefix, followup->user);
        snprintf(path, sizeof path, "/v1/holds/%s/release", followup->id);
    }
    put_request(connection, "POST", path, NULL, body, (size_t)length);
    pending_t *pending = push_inflight(connection, (kind_t)followup->kind);
    uint64_t sent = pending->sent_ns;
    *pending = *followup;
    pending->sent_ns = sent;
}

/* Flash-sale: a new buyer picks 1-4 seats among those the client has not seen sold (what a
 * seat map would show, held seats included), so the sale converges to sold out while buyers
 * still collide on held seats. */
static bool send_buyer(connection_t *connection) {
    if (run.sold_out || run.view_count == 0 || run.buyers_started >= options.buyers) return false;
    uint32_t buyer = (uint32_t)run.buyers_started++;
    uint64_t rng = options.seed * 0x100000001b3ull + buyer;
    unsigned want = 1 + random_below(&rng, BUYER_SEATS_MAX);
    if (want > run.view_count) want = run.view_count;
    uint32_t seats[BUYER_SEATS_MAX];
    unsigned count = 0;
    while (count < want) {
        uint32_t seat = run.view[random_below(&connection->rng, run.view_count)];
        bool duplicate = false;
        for (unsigned i = 0; i < count; i++) duplicate |= seats[i] == seat;
        if (!duplicate) seats[count++] = seat;
    }
    send_hold(connection, buyer, seats, count, 'b');
    return true;
}

static void send_get(connection_t *connection, kind_t kind, const char *path, uint32_t user) {
    put_request(connection, "GET", path, NULL, NULL, 0);
    push_inflight(connection, kind)->user = user;
}

/* ---- the waiting room (API.md section 6) ---- */

/* A join: the fill's users are "line<N>" (the same in every run, so a line kept in --tickets
 * names them again), the run's are new users of this run. */
static void send_join(connection_t *connection, bool fill, uint32_t index) {
    char body[128], path[160];
    int length = fill
        ? snprintf(body, sizeof body, "{\"user_id\":\"line%" PRIu32 "\"}", index)
        : snprintf(body, sizeof body, "{\"user_id\":\"j%" PRIx64 "_%" PRIu64 "\"}", run.nonce,
                   run.joins_started++);
    snprintf(path, sizeof path, "/v1/events/%s/queue", options.event);
    put_request(connection, "POST", path, NULL, body, (size_t)length);
    pending_t *pending = push_inflight(connection, K_JOIN);
    pending->fill = fill;
    pending->user = index;
}

static void send_poll(connection_t *connection, uint32_t index) {
    char path[192];
    snprintf(path, sizeof path, "/v1/events/%s/queue/%s", options.event, run.tickets[index]);
    put_request(connection, "GET", path, NULL, NULL, 0);
    push_inflight(connection, K_POLL)->user = index;
}

/* Keeps a ticket a join answered: queue-poll's by its user, queue-admit's in answer order. */
static void ticket_store(uint32_t index, const char *ticket) {
    if (index >= run.ticket_capacity) {
        uint32_t capacity = run.ticket_capacity ? run.ticket_capacity * 2 : 4096;
        while (capacity <= index) capacity *= 2;
        run.tickets = realloc(run.tickets, capacity * sizeof run.tickets[0]);
        run.admitted = realloc(run.admitted, capacity * sizeof run.admitted[0]);
        run.last_waiting_ns = realloc(run.last_waiting_ns, capacity * sizeof run.last_waiting_ns[0]);
        if (!run.tickets || !run.admitted || !run.last_waiting_ns) die("out of memory");
        memset(run.admitted + run.ticket_capacity, 0, capacity - run.ticket_capacity);
        memset(run.last_waiting_ns + run.ticket_capacity, 0,
               (capacity - run.ticket_capacity) * sizeof run.last_waiting_ns[0]);
        run.ticket_capacity = capacity;
    }
    snprintf(run.tickets[index], TICKET_SIZE, "%s", ticket);
    if (index >= run.ticket_count) run.ticket_count = index + 1;
}

/* queue-admit: one of the first ADMIT_FRONT tickets not yet seen admitted, in turn, so each is
 * polled every few milliseconds and its admission is seen that soon; UINT32_MAX when none. */
static uint32_t admit_front_ticket(void) {
    while (run.admit_front < run.ticket_count && run.admitted[run.admit_front]) run.admit_front++;
    uint32_t waiting = run.ticket_count - run.admit_front;
    if (waiting == 0) return UINT32_MAX;
    uint32_t window = waiting < ADMIT_FRONT ? waiting : ADMIT_FRONT;
    for (uint32_t tries = 0; tries < window; tries++) {
        uint32_t index = run.admit_front + (uint32_t)(run.admit_cursor++ % window);
        if (!run.admitted[index]) return index;
    }
    return run.admit_front;
}

/* ---- dispatch (API.md section 8) ---- */

/* A uniform place in the square of CITY_HALF_SIDE_M around the centre (metres to degrees on
 * the sphere of 6,371 km). */
static void city_point(uint64_t *rng, double *lat, double *lng) {
    const double metres_per_degree = 6371000.0 * 3.14159265358979323846 / 180.0;
    double north_m = ((double)random_below(rng, 2000001) / 1000000.0 - 1.0) * CITY_HALF_SIDE_M;
    double east_m = ((double)random_below(rng, 2000001) / 1000000.0 - 1.0) * CITY_HALF_SIDE_M;
    *lat = CITY_LAT + north_m / metres_per_degree;
    *lng = CITY_LNG + east_m / (metres_per_degree * 0.75822); /* cos(40.75 degrees) */
}

/* Driver "d<N>" at a random place of the square, available; its rating (3.5 to 5.0) is the
 * same at every update. */
static void send_driver(connection_t *connection, bool fill, uint32_t driver) {
    char body[160], path[192];
    double lat, lng;
    city_point(&connection->rng, &lat, &lng);
    uint64_t state = driver;
    double rating = 3.5 + (double)random_below(&state, 16) / 10.0;
    int length = snprintf(body, sizeof body,
                          "{\"lat\":%.6f,\"lng\":%.6f,\"available\":true,\"rating\":%.1f}",
                          lat, lng, rating);
    snprintf(path, sizeof path, "/v1/fleets/%s/drivers/d%" PRIu32, options.event, driver);
    put_request(connection, "PUT", path, NULL, body, (size_t)length);
    pending_t *pending = push_inflight(connection, K_DRIVER);
    pending->fill = fill;
    pending->user = driver;
}

/* A new ride of this run at a random place of the square. */
static void send_ride(connection_t *connection) {
    char body[256], path[160], ride[SERVER_ID_SIZE];
    double lat, lng;
    city_point(&connection->rng, &lat, &lng);
    uint64_t number = run.rides_started++;
    snprintf(ride, sizeof ride, "r%" PRIx64 "_%" PRIu64, run.nonce, number);
    int length = snprintf(body, sizeof body,
                          "{\"ride_id\":\"%s\",\"rider_id\":\"u%" PRIu64 "\",\"lat\":%.6f,"
                          "\"lng\":%.6f,\"radius_m\":%" PRIu32 ",\"offer_ttl_s\":15}",
                          ride, number, lat, lng, options.radius_m);
    snprintf(path, sizeof path, "/v1/fleets/%s/rides", options.event);
    put_request(connection, "POST", path, NULL, body, (size_t)length);
    pending_t *pending = push_inflight(connection, K_RIDE);
    snprintf(pending->id, sizeof pending->id, "%s", ride);
}

/* ---- calendars (API.md section 12) ---- */

/* The date so many days after today (UTC), as YYYY-MM-DD. */
static void calendar_date(int64_t days_ahead, char out[16]) {
    time_t at = (time_t)((run.today_days + days_ahead) * 86400);
    struct tm tm;
    gmtime_r(&at, &tm);
    strftime(out, 16, "%Y-%m-%d", &tm);
}

/* Resource "r<N>": even numbers of capacity 1 (a room), odd of capacity 10 (a room type). */
static uint32_t calendar_capacity(uint32_t resource) { return resource % 2 ? 10 : 1; }

/* The setup: the calendar with the first CALENDAR_BATCH resources, then the others appended
 * CALENDAR_BATCH at a time (one body would be over the server's body limit). */
static void send_calendar_resources(connection_t *connection) {
    buffer_t body = {0};
    bool create = run.resources_sent == 0;
    char path[160];
    if (create)
        buffer_printf(&body, "{\"id\":\"%s\",\"unit\":\"night\",\"hold_ttl_s\":600,\"horizon_days\":%d,"
                      "\"currency\":\"EUR\",\"resources\":[", options.event, CALENDAR_HORIZON_DAYS);
    else
        buffer_printf(&body, "{\"resources\":[");
    uint32_t end = run.resources_sent + CALENDAR_BATCH;
    if (end > options.resources) end = options.resources;
    for (uint32_t r = run.resources_sent; r < end; r++)
        buffer_printf(&body, "%s{\"id\":\"r%05" PRIu32 "\",\"capacity\":%" PRIu32 ",\"price\":10000}",
                      r > run.resources_sent ? "," : "", r, calendar_capacity(r));
    buffer_printf(&body, "]}");
    run.resources_sent = end;
    if (create) snprintf(path, sizeof path, "/v1/calendars");
    else snprintf(path, sizeof path, "/v1/calendars/%s/resources", options.event);
    put_request(connection, "POST", path, NULL, body.data, body.length);
    push_inflight(connection, create ? K_CREATE_EVENT : K_ADD_RESOURCES);
    free(body.data);
}

/* calendar-hold: a random resource for 1 to CALENDAR_NIGHTS_MAX nights from 1 to span_days
 * days ahead, by a random user. */
static void send_calendar_hold(connection_t *connection) {
    char body[320], path[160], from[16], to[16];
    uint32_t resource = random_below(&connection->rng, options.resources);
    int64_t start = 1 + random_below(&connection->rng, options.span_days);
    calendar_date(start, from);
    calendar_date(start + 1 + random_below(&connection->rng, CALENDAR_NIGHTS_MAX), to);
    uint32_t user = random_below(&connection->rng, options.users);
    int length = snprintf(body, sizeof body,
                          "{\"user_id\":\"u%" PRIu32 "\",\"items\":[{\"resource\":\"r%05" PRIu32
                          "\",\"from\":\"%s\",\"to\":\"%s\"}],\"ttl_s\":%g}",
                          user, resource, from, to, options.ttl_s);
    snprintf(path, sizeof path, "/v1/calendars/%s/holds", options.event);
    put_request(connection, "POST", path, NULL, body, (size_t)length);
    push_inflight(connection, K_HOLD)->user = user;
}

/* The fill's booking number `index`: resource index / per, its uses (index % per) * 10 on,
 * back to back from tomorrow, CALENDAR_FILL_NIGHTS nights each. */
static void send_calendar_booking(connection_t *connection, uint32_t index) {
    uint32_t per = (options.fill_uses + CALENDAR_ITEMS_MAX - 1) / CALENDAR_ITEMS_MAX;
    uint32_t resource = index / per, first = index % per * CALENDAR_ITEMS_MAX;
    uint32_t last = first + CALENDAR_ITEMS_MAX < options.fill_uses ? first + CALENDAR_ITEMS_MAX
                                                                   : options.fill_uses;
    buffer_t body = {0};
    char path[160], from[16], to[16];
    buffer_printf(&body, "{\"user_id\":\"fill%" PRIu32 "\",\"payment_ref\":\"pi_fill_%" PRIu32 "\",\"items\":[",
                  index, index);
    for (uint32_t use = first; use < last; use++) {
        calendar_date(1 + (int64_t)use * CALENDAR_FILL_NIGHTS, from);
        calendar_date(1 + (int64_t)(use + 1) * CALENDAR_FILL_NIGHTS, to);
        buffer_printf(&body, "%s{\"resource\":\"r%05" PRIu32 "\",\"from\":\"%s\",\"to\":\"%s\"}",
                      use > first ? "," : "", resource, from, to);
    }
    buffer_printf(&body, "]}");
    snprintf(path, sizeof path, "/v1/calendars/%s/bookings", options.event);
    put_request(connection, "POST", path, NULL, body.data, body.length);
    pending_t *pending = push_inflight(connection, K_BOOKING);
    pending->fill = true;
    pending->user = index;
    free(body.data);
}

/* calendar-free: a random 3-night span over every resource; calendar-availability: a random
 * resource over the next 365 days. */
static void send_calendar_read(connection_t *connection) {
    char path[256], from[16], to[16];
    if (options.workload == W_CALENDAR_FREE) {
        int64_t start = 1 + random_below(&connection->rng, options.span_days);
        calendar_date(start, from);
        calendar_date(start + 3, to);
        snprintf(path, sizeof path, "/v1/calendars/%s/free?from=%s&to=%s&quantity=1", options.event, from, to);
    } else {
        calendar_date(0, from);
        calendar_date(CALENDAR_HORIZON_DAYS, to);
        snprintf(path, sizeof path, "/v1/calendars/%s/availability?resource=r%05" PRIu32 "&from=%s&to=%s",
                 options.event, random_below(&connection->rng, options.resources), from, to);
    }
    send_get(connection, K_GET_CALENDAR, path, 0);
}

/* The setup's answers: the calendar made (or there already: no resources added, no fill),
 * then each batch of resources appended; the last one starts the fill or the run. */
static void start_fill(void);
static void flush(connection_t *connection);
static bool calendar_setup_answered(kind_t kind, int status, const char *body, size_t length) {
    bool fresh = kind == K_CREATE_EVENT ? status == 201 : status == 200;
    if (kind == K_CREATE_EVENT && status == 409) {
        options.create_event = false;
        start_fill();
        return true;
    }
    if (!fresh) {
        record_error("calendar setup answered %d: %.*s", status, (int)(length < 300 ? length : 300), body);
        return false;
    }
    if (run.resources_sent < options.resources) {
        send_calendar_resources(&run.connections[0]);
        flush(&run.connections[0]);
    } else {
        start_fill();
    }
    return true;
}

/* The fill before the run: queue-poll's line, the fleet's drivers, the calendar's bookings;
 * false when all are sent. */
static bool fill_request(connection_t *connection) {
    if (run.fill_sent >= run.fill_target) return false;
    uint32_t index = (uint32_t)run.fill_sent++;
    if (options.workload == W_QUEUE_POLL) send_join(connection, true, index);
    else if (is_calendar_workload()) send_calendar_booking(connection, index);
    else send_driver(connection, true, index);
    return true;
}

/* The next request of the run phase for this workload; false when it has none. */
static bool run_request(connection_t *connection) {
    switch (options.workload) {
    case W_NOOP:
        send_get(connection, K_NOOP, "/healthz", 0);
        return true;
    case W_HOLD_RANDOM: {
        uint32_t seat =
            random_below(&connection->rng, options.seats / options.seat_step) * options.seat_step;
        uint32_t user = random_below(&connection->rng, options.users);
        send_hold(connection, user, &seat, 1, 'u');
        return true;
    }
    case W_HOLD_HOT: {
        uint32_t seat = random_below(&connection->rng, options.hot_seats);
        uint32_t user = random_below(&connection->rng, options.users);
        send_hold(connection, user, &seat, 1, 'u');
        return true;
    }
    case W_FLASH_SALE:
        return send_buyer(connection);
    case W_REDIS_SET: {
        uint32_t seat = random_below(&connection->rng, options.seats);
        uint32_t user = random_below(&connection->rng, options.users);
        send_redis_set(connection, user, seat);
        return true;
    }
    case W_WEBHOOK: {
        /* A seat this client has not seen sold: its own commits are all the sales. */
        if (run.view_count == 0) return false;
        uint32_t seat = run.view[random_below(&connection->rng, run.view_count)];
        uint32_t user = random_below(&connection->rng, options.users);
        send_hold(connection, user, &seat, 1, 'u');
        return true;
    }
    case W_QUEUE_JOIN:
        send_join(connection, false, 0);
        return true;
    case W_QUEUE_POLL:
        if (run.ticket_count == 0) return false;
        send_poll(connection, random_below(&connection->rng, run.ticket_count));
        return true;
    case W_QUEUE_ADMIT: {
        uint32_t index = admit_front_ticket();
        if (index == UINT32_MAX || random_below(&connection->rng, 100) < options.join_percent)
            send_join(connection, false, 0);
        else
            send_poll(connection, index);
        return true;
    }
    case W_DRIVER_UPDATE:
        send_driver(connection, false, random_below(&connection->rng, options.drivers));
        return true;
    case W_RIDE_REQUEST:
        if (connection->index < options.ride_connections) send_ride(connection);
        else send_driver(connection, false, random_below(&connection->rng, options.drivers));
        return true;
    case W_CALENDAR_HOLD:
        send_calendar_hold(connection);
        return true;
    case W_EXCHANGE: {
        uint32_t seat = random_below(&connection->rng, options.seats);
        if (connection->order[0]) send_exchange_hold(connection, seat);
        else send_hold(connection, (uint32_t)connection->index, &seat, 1, 'u');
        return true;
    }
    case W_CALENDAR_FREE:
    case W_CALENDAR_AVAILABILITY:
        send_calendar_read(connection);
        return true;
    }
    return false;
}

/* Next request of this connection for the current phase; false when it has none. */
static bool next_request(connection_t *connection) {
    if (connection->followup_count && (run.phase == P_RUN || run.phase == P_DRAIN)) {
        pending_t *followup = &connection->followups[connection->followup_head];
        connection->followup_head = (connection->followup_head + 1) % PIPELINE_MAX;
        connection->followup_count--;
        send_followup(connection, followup);
        return true;
    }
    switch (run.phase) {
    case P_FILL:
        return fill_request(connection);
    case P_RUN:
        return run_request(connection);
    case P_VERIFY_SEATS: {
        /* Pages are sequential (each names the next), so one connection walks them. */
        if (connection->index != 0 || connection->count || run.seats_last_page_done) return false;
        char path[256];
        if (run.seats_after[0])
            snprintf(path, sizeof path, "/v1/events/%s/seats?limit=10000&after=%s", options.event, run.seats_after);
        else
            snprintf(path, sizeof path, "/v1/events/%s/seats?limit=10000", options.event);
        send_get(connection, K_GET_SEATS, path, 0);
        return true;
    }
    case P_VERIFY_ORDERS: {
        if (run.orders_checked_next >= run.order_count) return false;
        uint32_t order = run.orders_checked_next++;
        char path[128];
        snprintf(path, sizeof path, "/v1/orders/%s", run.orders[order].id);
        send_get(connection, K_GET_ORDER, path, order);
        run.verify_outstanding++;
        return true;
    }
    default:
        return false;
    }
}

/* ---- writing ---- */

static void flush(connection_t *connection);

static void on_write(uv_write_t *request, int status) {
    connection_t *connection = request->data;
    connection->writing = false;
    connection->output[1 - connection->filling].length = 0;
    if (status < 0) {
        run.transport_errors++;
        record_error("write: %s", uv_strerror(status));
        return;
    }
    flush(connection);
}

static void flush(connection_t *connection) {
    if (connection->writing || !connection->open) return;
    buffer_t *out = &connection->output[connection->filling];
    if (out->length == 0) return;
    connection->filling = 1 - connection->filling;
    uv_buf_t buf = uv_buf_init(out->data, (unsigned)out->length);
    /* Tried at once first, as the server does: a uv_write costs an epoll_ctl when it
     * completes, and the load generator shares the machine's two cores with the server. */
    int sent = uv_try_write((uv_stream_t *)&connection->tcp, &buf, 1);
    if (sent == (int)buf.len) {
        out->length = 0;
        return;
    }
    if (sent < 0 && sent != UV_EAGAIN) {
        out->length = 0;
        run.transport_errors++;
        record_error("write: %s", uv_strerror(sent));
        return;
    }
    if (sent > 0) buf = uv_buf_init(buf.base + sent, buf.len - (unsigned)sent);
    connection->writing = true;
    connection->write_request.data = connection;
    int error = uv_write(&connection->write_request, (uv_stream_t *)&connection->tcp, &buf, 1, on_write);
    if (error) die("uv_write: %s", uv_strerror(error));
}

static void fill(connection_t *connection) {
    unsigned depth = (unsigned)(run.phase == P_FILL ? options.fill_pipeline : options.pipeline);
    while (connection->open && connection->count < depth && next_request(connection)) {
    }
    flush(connection);
}

/* ---- phases ---- */

static void close_all(void);
static void start_verification(void);

static bool all_idle(void) {
    for (int i = 0; i < options.connections; i++)
        if (run.connections[i].open && run.connections[i].count) return false;
    return true;
}

static void fill_all(void) {
    for (int i = 0; i < options.connections; i++) fill(&run.connections[i]);
}

static void enter_phase(phase_t phase) {
    run.phase = phase;
    switch (phase) {
    case P_RUN:
        run.start_ns = uv_hrtime();
        run.measure_start_ns = run.start_ns + (uint64_t)(options.warmup_s * 1e9);
        run.measure_end_ns = run.measure_start_ns + (uint64_t)(options.duration_s * 1e9);
        if (options.workload == W_FLASH_SALE) {
            run.measure_start_ns = run.start_ns;
            run.measure_end_ns = run.start_ns + (uint64_t)(options.max_s * 1e9);
            run.measuring = true;
        }
        fill_all();
        break;
    case P_DRAIN:
        if (all_idle()) {
            if (options.workload == W_FLASH_SALE) start_verification();
            else enter_phase(P_DONE);
        }
        break;
    case P_FILL:
    case P_VERIFY_SEATS:
    case P_VERIFY_ORDERS:
        fill_all();
        break;
    case P_DONE:
        close_all();
        break;
    default:
        break;
    }
}

/* The server's resident set in kB (VmRSS of /proc/PID/status, as bench/rss.sh reads it); 0
 * without --rss-pid. */
static long server_rss_kb(void) {
    if (options.rss_pid <= 0) return 0;
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", options.rss_pid);
    FILE *file = fopen(path, "r");
    if (!file) die("cannot read %s: %s", path, strerror(errno));
    long kb = 0;
    while (fgets(line, sizeof line, file))
        if (strncmp(line, "VmRSS:", 6) == 0) kb = strtol(line + 6, NULL, 10);
    fclose(file);
    return kb;
}

/* queue-poll: the line's tickets from --tickets, one a line, when it holds --line of them. */
static bool tickets_read(void) {
    FILE *file = options.tickets_path ? fopen(options.tickets_path, "r") : NULL;
    if (!file) return false;
    char line[TICKET_SIZE + 2];
    uint32_t count = 0;
    while (count < options.line && fgets(line, sizeof line, file)) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "q_", 2) != 0) break;
        ticket_store(count++, line);
    }
    fclose(file);
    if (count == options.line) return true;
    run.ticket_count = 0;
    return false;
}

static void tickets_write(void) {
    if (!options.tickets_path) return;
    FILE *file = fopen(options.tickets_path, "w");
    if (!file) die("cannot write %s: %s", options.tickets_path, strerror(errno));
    for (uint32_t i = 0; i < run.ticket_count; i++) fprintf(file, "%s\n", run.tickets[i]);
    fclose(file);
}

/* After the event exists (or at once when none is needed): the fill, or the run. */
static void start_fill(void) {
    if (options.workload == W_QUEUE_POLL && !tickets_read()) {
        run.fill_target = options.line;
        ticket_store(options.line - 1, "");
    } else if (is_fleet_workload() && options.create_event) {
        run.fill_target = options.drivers;
    } else if (is_calendar_workload() && options.create_event && options.fill_uses) {
        run.fill_target = (uint64_t)options.resources *
                          ((options.fill_uses + CALENDAR_ITEMS_MAX - 1) / CALENDAR_ITEMS_MAX);
    }
    if (run.fill_target == 0) {
        enter_phase(P_RUN);
        return;
    }
    run.filled = true;
    run.rss_before_kb = server_rss_kb();
    run.fill_start_ns = uv_hrtime();
    enter_phase(P_FILL);
}

/* Every answer of the fill: the last one starts the run. */
static void fill_answered(void) {
    if (++run.fill_answered < run.fill_target) return;
    run.fill_end_ns = uv_hrtime();
    run.rss_after_kb = server_rss_kb();
    if (options.workload == W_QUEUE_POLL) tickets_write();
    enter_phase(P_RUN);
}

static void start_verification(void) {
    run.measuring = false;
    run.seats_after[0] = '\0';
    enter_phase(P_VERIFY_SEATS);
}

static void on_timer(uv_timer_t *timer) {
    uint64_t now = uv_hrtime();
    if (run.phase == P_RUN) {
        if (!run.measuring && now >= run.measure_start_ns) run.measuring = true;
        if (now >= run.measure_end_ns) {
            if (options.workload == W_FLASH_SALE)
                record_error("not sold out after %.0f s (%" PRIu64 " seats sold)", options.max_s, run.sold_seats);
            run.measuring = false;
            enter_phase(P_DRAIN);
        }
    }
    /* A stuck drain (a server that stopped answering) ends the run after 10 s. */
    if (run.phase == P_DRAIN && now > run.measure_end_ns + 10000000000ull &&
        options.workload != W_FLASH_SALE) {
        record_error("requests still unanswered 10 s after the end");
        enter_phase(P_DONE);
    }
}

/* ---- answers ---- */

static void flash_remove_from_view(uint32_t seat) {
    uint32_t position = run.view_position[seat];
    if (position == UINT32_MAX) return;
    uint32_t last = run.view[--run.view_count];
    run.view[position] = last;
    run.view_position[last] = position;
    run.view_position[seat] = UINT32_MAX;
}

static void on_flash_answer(connection_t *connection, const pending_t *pending, int status,
                            const char *body, size_t length) {
    if (pending->kind == K_HOLD) {
        run.buyers_answered++;
        if (status == 201) {
            run.holds_won++;
            uint64_t rng = options.seed * 0x100000001b3ull + pending->user;
            random_below(&rng, BUYER_SEATS_MAX); /* the draw of the seat count */
            if (random_below(&rng, 100) < options.commit_percent) {
                pending_t *followup = &connection->followups[(connection->followup_head + connection->followup_count) % PIPELINE_MAX];
                *followup = *pending;
                followup->kind = K_COMMIT;
                if (!json_string(body, length, "reservation_id", followup->id, sizeof followup->id)) {
                    record_error("hold answer without reservation_id");
                    return;
                }
                connection->followup_count++;
            } else {
                run.abandoned++;
            }
        } else if (status == 409) {
            run.holds_lost++;
        } else {
            record_error("hold answered %d: %.*s", status, (int)(length < 300 ? length : 300), body);
        }
        return;
    }
    /* K_COMMIT */
    if (status != 200) {
        run.commit_failures++;
        record_error("commit answered %d: %.*s", status, (int)(length < 300 ? length : 300), body);
        return;
    }
    run.commits++;
    if (run.order_count == run.order_capacity) {
        run.order_capacity = run.order_capacity ? run.order_capacity * 2 : 4096;
        run.orders = realloc(run.orders, run.order_capacity * sizeof run.orders[0]);
        if (!run.orders) die("out of memory");
    }
    order_record_t *order = &run.orders[run.order_count++];
    if (!json_string(body, length, "order_id", order->id, sizeof order->id)) {
        record_error("commit answer without order_id");
        run.order_count--;
        return;
    }
    order->seat_count = pending->seat_count;
    memcpy(order->seats, pending->seats, sizeof order->seats);
    for (unsigned i = 0; i < pending->seat_count; i++) {
        uint32_t seat = pending->seats[i];
        if (run.sold_by[seat]) {
            run.double_sales++;
            run.violations = true;
            char id[32];
            seat_id(seat, id, sizeof id);
            record_error("seat %s acknowledged sold twice: %s and %s", id,
                         run.orders[run.sold_by[seat] - 1].id, order->id);
        } else {
            run.sold_by[seat] = run.order_count;
            run.sold_seats++;
        }
        flash_remove_from_view(seat);
    }
    if (run.sold_seats == options.seats && !run.sold_out) {
        run.sold_out = true;
        run.sold_out_ns = uv_hrtime();
        run.measuring = false;
        enter_phase(P_DRAIN);
    }
}

/* Walks {"seats":[{"id":"S-R0-1",...,"status":"sold",...},...],"next":...}. */
static void on_seats_page(int status, const char *body, size_t length) {
    if (status != 200) {
        run.violations = true;
        record_error("seat listing answered %d", status);
        run.seats_last_page_done = true;
        return;
    }
    run.seat_pages++;
    const char *cursor = body, *end = body + length;
    for (;;) {
        const char *found = memmem(cursor, (size_t)(end - cursor), "{\"id\":\"", 7);
        if (!found) break;
        const char *id = found + 7;
        const char *id_end = memchr(id, '"', (size_t)(end - id));
        const char *status_key = memmem(id, (size_t)(end - id), "\"status\":\"", 10);
        if (!id_end || !status_key) break;
        const char *value = status_key + 10;
        run.verified_seats++;
        if ((size_t)(end - value) >= 5 && memcmp(value, "sold\"", 5) == 0) {
            run.verified_sold++;
        } else {
            run.verified_not_sold++;
            run.violations = true;
            if (run.verified_not_sold == 1)
                record_error("seat %.*s is not sold after the sale", (int)(id_end - id), id);
        }
        uint32_t seat = seat_parse(id, (size_t)(id_end - id));
        if (seat == UINT32_MAX || !run.sold_by[seat]) {
            run.violations = true;
            record_error("seat %.*s is not in any acknowledged order", (int)(id_end - id), id);
        }
        cursor = value;
    }
    if (!json_string(body, length, "next", run.seats_after, sizeof run.seats_after))
        run.seats_last_page_done = true;
}

static void on_order(const pending_t *pending, int status, const char *body, size_t length) {
    run.verify_outstanding--;
    const order_record_t *order = &run.orders[pending->user];
    if (status != 200) {
        run.orders_lost++;
        run.violations = true;
        record_error("acknowledged order %s answers %d", order->id, status);
        return;
    }
    bool ok = memmem(body, length, "\"status\":\"confirmed\"", 20) != NULL;
    /* The order's seats are exactly the held ones: each is listed, and no other. */
    const char *list = memmem(body, length, "\"seats\":[", 9);
    unsigned listed = 0;
    if (list) {
        const char *list_end = memchr(list, ']', length - (size_t)(list - body));
        for (const char *c = list + 9; list_end && c < list_end; c++) listed += *c == '"';
        listed /= 2;
        for (unsigned i = 0; list_end && i < order->seat_count; i++) {
            char id[40];
            int id_length = snprintf(id, sizeof id, "\"");
            seat_id(order->seats[i], id + id_length, sizeof id - (size_t)id_length);
            strcat(id, "\"");
            const char *hit = memmem(list, (size_t)(list_end - list), id, strlen(id));
            ok &= hit != NULL;
        }
    }
    if (!ok || !list || listed != order->seat_count) {
        run.orders_mismatched++;
        run.violations = true;
        record_error("order %s does not match what was acknowledged: %.*s", order->id,
                     (int)(length < 300 ? length : 300), body);
        return;
    }
    run.orders_verified++;
}

/* The number value of "name" in a JSON body; false if absent. */
static bool json_number(const char *body, size_t length, const char *name, uint64_t *out) {
    char needle[64];
    int needle_length = snprintf(needle, sizeof needle, "\"%s\":", name);
    const char *found = memmem(body, length, needle, (size_t)needle_length);
    if (!found) return false;
    const char *digit = found + needle_length, *end = body + length;
    if (digit >= end || *digit < '0' || *digit > '9') return false;
    uint64_t value = 0;
    while (digit < end && *digit >= '0' && *digit <= '9') value = value * 10 + (uint64_t)(*digit++ - '0');
    *out = value;
    return true;
}

/* The follow-up a won hold asks for (hold-hot: its release; webhook: its payment), queued
 * behind the connection's other follow-ups; false when the answer names no hold. */
static bool queue_followup(connection_t *connection, const pending_t *hold, kind_t kind,
                           const char *body, size_t length) {
    pending_t *followup = &connection->followups[(connection->followup_head + connection->followup_count) % PIPELINE_MAX];
    *followup = *hold;
    followup->kind = (uint8_t)kind;
    if (!json_string(body, length, "reservation_id", followup->id, sizeof followup->id) ||
        (kind == K_WEBHOOK && !json_number(body, length, "total", &followup->amount))) {
        record_error("hold answer without reservation_id or total: %.*s",
                     (int)(length < 300 ? length : 300), body);
        return false;
    }
    connection->followup_count++;
    return true;
}

/* hold-random, hold-hot and webhook: 201 won, 409 lost (the seat is taken), else an error. */
static void on_hold_answer(connection_t *connection, const pending_t *pending, bool counted,
                           int status, const char *body, size_t length) {
    if (status == 201) {
        run.hot_wins += counted;
        /* hold-hot: the winner lets go at once, so the 10 seats keep changing hands. */
        if (options.workload == W_HOLD_HOT) queue_followup(connection, pending, K_RELEASE, body, length);
        if (options.workload == W_WEBHOOK) queue_followup(connection, pending, K_WEBHOOK, body, length);
        if (options.workload == W_EXCHANGE) queue_followup(connection, pending, K_COMMIT, body, length);
    } else if (status == 409) {
        run.hot_losses += counted;
    } else {
        record_error("hold answered %d: %.*s", status, (int)(length < 300 ? length : 300), body);
    }
}

/* exchange: a commit answers 200 with its order, which the connection's next exchange replaces;
 * anything else is an error (the hold cannot lapse between its answer and its commit). */
static void on_exchange_commit(connection_t *connection, const pending_t *pending, bool counted,
                               int status, const char *body, size_t length) {
    if (status != 200 || !json_string(body, length, "order_id", connection->order, sizeof connection->order)) {
        record_error("%s commit answered %d: %.*s", pending->exchange ? "exchange" : "purchase",
                     status, (int)(length < 300 ? length : 300), body);
        connection->order[0] = '\0';
        return;
    }
    if (pending->exchange) run.exchanges_committed += counted;
    else run.orders_bought += counted;
}

/* 200 {"result":"committed",...} is the measured outcome (late ones, re-taken after their hold
 * lapsed, counted among them and apart); another result is counted and shown, not an error;
 * any other status (401: a wrong signature) is an error. The seat leaves the picking view. */
static void on_webhook_answer(const pending_t *pending, bool counted, int status,
                              const char *body, size_t length) {
    if (status != 200) {
        record_error("webhook answered %d: %.*s", status, (int)(length < 300 ? length : 300), body);
        return;
    }
    char result[32];
    if (!json_string(body, length, "result", result, sizeof result)) {
        record_error("webhook answer without result: %.*s", (int)(length < 300 ? length : 300), body);
        return;
    }
    if (strcmp(result, "committed") == 0) {
        flash_remove_from_view(pending->seats[0]);
        run.webhooks_committed += counted;
        run.webhooks_late += counted && memmem(body, length, "\"late\":true", 11) != NULL;
        return;
    }
    run.webhooks_other += counted;
    if (!run.first_other_result[0])
        snprintf(run.first_other_result, sizeof run.first_other_result, "%.*s",
                 (int)(length < 100 ? length : 100), body);
}

/* A join: 201 a new ticket, 200 the user's ticket again (a repeat); the ticket is kept for the
 * polls (queue-poll's fill by its user, queue-admit's in answer order). */
static void on_join_answer(const pending_t *pending, bool counted, int status, const char *body,
                           size_t length) {
    char ticket[TICKET_SIZE];
    if ((status != 201 && status != 200) || !json_string(body, length, "ticket", ticket, sizeof ticket)) {
        record_error("join answered %d: %.*s", status, (int)(length < 300 ? length : 300), body);
    } else {
        run.joins_new += counted && status == 201;
        run.joins_repeat += counted && status == 200;
        if (pending->fill) ticket_store(pending->user, ticket);
        else if (options.workload == W_QUEUE_ADMIT) ticket_store(run.ticket_count, ticket);
    }
    if (pending->fill) fill_answered();
}

/* A poll must answer 200 for the very ticket asked, waiting (with its position) or admitted;
 * queue-admit notes when a ticket is first seen admitted, and how long before that it was last
 * seen waiting (the resolution of that moment). */
static void on_poll_answer(const pending_t *pending, bool counted, int status, const char *body,
                           size_t length) {
    char ticket[TICKET_SIZE], state[32];
    uint64_t position;
    if (status != 200 || !json_string(body, length, "ticket", ticket, sizeof ticket) ||
        !json_string(body, length, "status", state, sizeof state)) {
        record_error("poll answered %d: %.*s", status, (int)(length < 300 ? length : 300), body);
        return;
    }
    if (strcmp(ticket, run.tickets[pending->user]) != 0) {
        run.tickets_mismatched++;
        record_error("poll of %s answered for %s", run.tickets[pending->user], ticket);
        return;
    }
    uint64_t now = uv_hrtime();
    if (strcmp(state, "waiting") == 0 && json_number(body, length, "position", &position)) {
        run.polls_waiting += counted;
        run.last_waiting_ns[pending->user] = now;
    } else if (strcmp(state, "admitted") == 0) {
        run.polls_admitted += counted;
        if (options.workload != W_QUEUE_ADMIT || run.admitted[pending->user]) return;
        run.admitted[pending->user] = 1;
        if (!counted) return;
        if (run.admission_count == run.admission_capacity) {
            run.admission_capacity = run.admission_capacity ? 2 * run.admission_capacity : 4096;
            run.admission_ns = realloc(run.admission_ns, run.admission_capacity * sizeof run.admission_ns[0]);
            if (!run.admission_ns) die("out of memory");
        }
        run.admission_ns[run.admission_count++] = now;
        if (run.last_waiting_ns[pending->user])
            histogram_record(&run.admission_resolution, (now - run.last_waiting_ns[pending->user]) / 1000);
    } else {
        run.polls_other += counted;
        record_error("poll of %s answered %.*s", ticket, (int)(length < 300 ? length : 300), body);
    }
}

/* A ride answered with its offer is matched: its driver accepts (the realistic next step, and
 * it keeps that driver busy until an update makes it available again); a ride left searching
 * is cancelled, so searching rides do not pile up. The ride's latency is the POST's: the offer
 * is made in the same step as the ride, and the answer carries it. */
static void on_ride_answer(connection_t *connection, const pending_t *pending, bool counted,
                           int status, const char *body, size_t length) {
    char state[32], driver[SERVER_ID_SIZE];
    if (status != 201 || !json_string(body, length, "status", state, sizeof state)) {
        record_error("ride answered %d: %.*s", status, (int)(length < 300 ? length : 300), body);
        return;
    }
    pending_t *followup = &connection->followups[(connection->followup_head + connection->followup_count) % PIPELINE_MAX];
    *followup = *pending;
    if (strcmp(state, "offered") == 0) {
        char *end;
        if (!json_string(body, length, "driver_id", driver, sizeof driver) || driver[0] != 'd' ||
            (followup->user = (uint32_t)strtoul(driver + 1, &end, 10), *end)) {
            record_error("offered ride without a driver of ours: %.*s", (int)(length < 300 ? length : 300), body);
            return;
        }
        followup->kind = K_ACCEPT;
        run.rides_offered += counted;
        if (counted) histogram_record(&run.ride_latency, (uv_hrtime() - pending->sent_ns) / 1000);
    } else if (strcmp(state, "searching") == 0) {
        followup->kind = K_CANCEL;
        run.rides_searching += counted;
    } else {
        record_error("ride answered status %s", state);
        return;
    }
    connection->followup_count++;
}

/* Counts an answer, and its latency when it arrives in the measured window (true then). */
static bool count_answer(const pending_t *pending, int status) {
    uint64_t now = uv_hrtime();
    bool setup = pending->kind == K_CREATE_EVENT || pending->kind == K_ADD_RESOURCES;
    if (!setup && !pending->fill) run.answered++;
    bool counted = run.measuring && now >= run.measure_start_ns && now <= run.measure_end_ns &&
                   !setup && !pending->fill;
    if (!counted) return false;
    uint64_t latency_us = (now - pending->sent_ns) / 1000;
    histogram_record(&run.latency, latency_us);
    if (pending->kind == K_HOLD) histogram_record(&run.hold_latency, latency_us);
    if (pending->kind == K_COMMIT) histogram_record(&run.commit_latency, latency_us);
    if (pending->kind == K_WEBHOOK) histogram_record(&run.webhook_latency, latency_us);
    if (pending->kind == K_DRIVER) histogram_record(&run.update_latency, latency_us);
    if (pending->kind == K_ACCEPT) histogram_record(&run.accept_latency, latency_us);
    if (status >= 100 && status < 600) run.statuses[status]++;
    run.measured++;
    return true;
}

static void on_answer(connection_t *connection, int status, const char *body, size_t length) {
    if (connection->count == 0) {
        record_error("answer without a request");
        return;
    }
    pending_t pending = connection->inflight[connection->head];
    connection->head = (connection->head + 1) % PIPELINE_MAX;
    connection->count--;
    bool counted = count_answer(&pending, status);
    switch ((kind_t)pending.kind) {
    case K_ADD_RESOURCES:
        if (!calendar_setup_answered((kind_t)pending.kind, status, body, length)) {
            run.violations = true;
            enter_phase(P_DONE);
        }
        return;
    case K_CREATE_EVENT:
        if (is_calendar_workload()) {
            if (!calendar_setup_answered((kind_t)pending.kind, status, body, length)) {
                run.violations = true;
                enter_phase(P_DONE);
            }
        } else if (status == 201 || (status == 409 && options.workload != W_FLASH_SALE)) {
            start_fill();
        } else {
            record_error("creating event %s answered %d: %.*s", options.event, status,
                         (int)(length < 300 ? length : 300), body);
            run.violations = true;
            enter_phase(P_DONE);
        }
        return;
    case K_NOOP:
        if (status != 200) record_error("healthz answered %d", status);
        break;
    case K_HOLD:
    case K_COMMIT:
        if (options.workload == W_FLASH_SALE) on_flash_answer(connection, &pending, status, body, length);
        else if (options.workload == W_EXCHANGE && pending.kind == K_COMMIT)
            on_exchange_commit(connection, &pending, counted, status, body, length);
        else on_hold_answer(connection, &pending, counted, status, body, length);
        break;
    case K_WEBHOOK:
        on_webhook_answer(&pending, counted, status, body, length);
        break;
    case K_JOIN:
        on_join_answer(&pending, counted, status, body, length);
        break;
    case K_POLL:
        on_poll_answer(&pending, counted, status, body, length);
        break;
    case K_BOOKING:
        if (status != 201)
            record_error("booking answered %d: %.*s", status, (int)(length < 300 ? length : 300), body);
        fill_answered();
        break;
    case K_GET_CALENDAR:
        if (status != 200)
            record_error("calendar read answered %d: %.*s", status, (int)(length < 300 ? length : 300), body);
        break;
    case K_DRIVER:
        if (status == 200 || status == 201) run.updates += counted;
        else record_error("driver update answered %d: %.*s", status, (int)(length < 300 ? length : 300), body);
        if (pending.fill) fill_answered();
        break;
    case K_RIDE:
        on_ride_answer(connection, &pending, counted, status, body, length);
        break;
    case K_ACCEPT:
        if (status == 200) run.accepts += counted;
        else run.accepts_failed += counted;
        break;
    case K_CANCEL:
        if (status == 200) run.cancels += counted;
        else record_error("cancel answered %d: %.*s", status, (int)(length < 300 ? length : 300), body);
        break;
    case K_REDIS_SET:
        if (status == 201) run.hot_wins += counted;
        else if (status == 409) run.hot_losses += counted;
        else record_error("SET answered %.*s", (int)(length < 300 ? length : 300), body);
        break;
    case K_RELEASE:
        if (status == 200) run.releases += counted;
        else record_error("release answered %d: %.*s", status, (int)(length < 300 ? length : 300), body);
        break;
    case K_GET_SEATS:
        on_seats_page(status, body, length);
        break;
    case K_GET_ORDER:
        on_order(&pending, status, body, length);
        break;
    }
    /* Phase changes that wait for the connections to go quiet. */
    if (run.phase == P_DRAIN && all_idle()) {
        if (options.workload == W_FLASH_SALE) start_verification();
        else enter_phase(P_DONE);
    } else if (run.phase == P_VERIFY_SEATS && run.seats_last_page_done && all_idle()) {
        run.orders_checked_next = 0;
        enter_phase(P_VERIFY_ORDERS);
    } else if (run.phase == P_VERIFY_ORDERS && run.orders_checked_next >= run.order_count &&
               run.verify_outstanding == 0) {
        enter_phase(P_DONE);
    }
}

/* Drops the first count bytes of a connection's input: the answers parsed from them. */
static void input_drop(buffer_t *in, size_t count) {
    if (count == 0) return;
    memmove(in->data, in->data + count, in->length - count);
    in->length -= count;
}

/* A connection whose answers can no longer be framed is closed and counted. */
static void close_broken(connection_t *connection, const char *what) {
    run.transport_errors++;
    record_error("%s", what);
    uv_close((uv_handle_t *)&connection->tcp, NULL);
    connection->open = false;
    run.open_connections--;
    if (run.open_connections == 0) enter_phase(P_DONE);
}

/* Parses every complete RESP answer in the input buffer. SET NX answers +OK, or a nil bulk
 * string ($-1) when the key exists; an error (-ERR ...) is reported with its text. */
static void parse_redis_answers(connection_t *connection) {
    buffer_t *in = &connection->input;
    size_t offset = 0;
    while (connection->open) {
        const char *start = in->data + offset;
        size_t available = in->length - offset;
        const char *line_end = memmem(start, available, "\r\n", 2);
        if (!line_end) break;
        size_t line_length = (size_t)(line_end - start);
        int status;
        if (line_length == 3 && memcmp(start, "+OK", 3) == 0) status = 201;
        else if (line_length == 3 && memcmp(start, "$-1", 3) == 0) status = 409;
        else if (line_length > 0 && start[0] == '-') status = 500;
        else {
            close_broken(connection, "unexpected RESP answer");
            return;
        }
        on_answer(connection, status, start, line_length);
        offset += line_length + 2;
    }
    input_drop(in, offset);
}

/* Parses every complete answer in the input buffer. Answers carry Content-Length (Holdfast
 * never chunks), so framing is the head's end plus the length. */
static void parse_answers(connection_t *connection) {
    if (options.workload == W_REDIS_SET) {
        parse_redis_answers(connection);
        return;
    }
    buffer_t *in = &connection->input;
    size_t offset = 0;
    while (connection->open) {
        const char *start = in->data + offset;
        size_t available = in->length - offset;
        const char *head_end = memmem(start, available, "\r\n\r\n", 4);
        if (!head_end) break;
        size_t head_length = (size_t)(head_end - start) + 4;
        if (available < 12 || memcmp(start, "HTTP/1.", 7) != 0) {
            close_broken(connection, "malformed answer");
            return;
        }
        int status = (start[9] - '0') * 100 + (start[10] - '0') * 10 + (start[11] - '0');
        size_t content_length = 0;
        bool close = false;
        for (const char *line = memchr(start, '\n', head_length); line && line < head_end;
             line = memchr(line + 1, '\n', (size_t)(head_end - line))) {
            const char *name = line + 1;
            if (strncasecmp(name, "Content-Length:", 15) == 0)
                content_length = strtoul(name + 15, NULL, 10);
            else if (strncasecmp(name, "Connection: close", 17) == 0)
                close = true;
        }
        if (available < head_length + content_length) break;
        if (status == 100) { /* interim answer: not the one we wait for */
            offset += head_length;
            continue;
        }
        on_answer(connection, status, start + head_length, content_length);
        offset += head_length + content_length;
        if (close) {
            record_error("server closed the connection after a %d", status);
            uv_close((uv_handle_t *)&connection->tcp, NULL);
            connection->open = false;
            run.open_connections--;
            if (run.open_connections == 0) enter_phase(P_DONE);
            return;
        }
    }
    input_drop(in, offset);
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf) {
    connection_t *connection = handle->data;
    buffer_reserve(&connection->input, 65536);
    *buf = uv_buf_init(connection->input.data + connection->input.length,
                       (unsigned)(connection->input.capacity - connection->input.length));
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf) {
    connection_t *connection = stream->data;
    if (nread < 0) {
        if (run.phase != P_DONE) {
            run.transport_errors++;
            record_error("connection %d: %s", connection->index, uv_strerror((int)nread));
        }
        if (connection->open) {
            connection->open = false;
            run.open_connections--;
            uv_close((uv_handle_t *)stream, NULL);
        }
        if (run.open_connections == 0 && run.phase != P_DONE) enter_phase(P_DONE);
        return;
    }
    connection->input.length += (size_t)nread;
    if (connection->input.length > RESPONSE_SIZE_MAX) die("answer too large");
    parse_answers(connection);
    if (run.phase == P_RUN || run.phase == P_FILL || run.phase == P_VERIFY_ORDERS ||
        run.phase == P_DRAIN) {
        fill(connection);
        /* Follow-ups of other connections, and connections that ran dry, wait for nobody. */
    } else if (run.phase == P_VERIFY_SEATS) {
        fill(&run.connections[0]);
    }
}

static void on_connect(uv_connect_t *request, int status) {
    connection_t *connection = request->data;
    if (status < 0) die("connect to %s:%d: %s", options.host, options.port, uv_strerror(status));
    connection->open = true;
    run.open_connections++;
    uv_read_start((uv_stream_t *)&connection->tcp, on_alloc, on_read);
    if (++run.connected == options.connections) {
        if (options.create_event && options.workload != W_NOOP && options.workload != W_REDIS_SET &&
            !is_fleet_workload()) {
            run.phase = P_SETUP;
            send_create_event(&run.connections[0]);
            flush(&run.connections[0]);
        } else {
            start_fill();
        }
    }
}

static void close_all(void) {
    for (int i = 0; i < options.connections; i++) {
        connection_t *connection = &run.connections[i];
        if (connection->open) {
            connection->open = false;
            run.open_connections--;
            uv_close((uv_handle_t *)&connection->tcp, NULL);
        }
    }
    uv_timer_stop(&run.timer);
    uv_close((uv_handle_t *)&run.timer, NULL);
}

/* ---- report ---- */

/* What every workload reports: rate, latency and the count of each status. */
static void report_common(buffer_t *json, double seconds) {
    double throughput = seconds > 0 ? (double)run.measured / seconds : 0;
    buffer_printf(json, "{\"workload\":\"%s\",\"connections\":%d,\"pipeline\":%d,\"seed\":%" PRIu64
                  ",\"ttl_s\":%g,\"seconds\":%.3f,\"requests\":%" PRIu64 ",\"throughput\":%.1f,"
                  "\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"p999_ms\":%.3f,\"max_ms\":%.3f,\"mean_ms\":%.3f,"
                  "\"errors\":%" PRIu64 ",\"transport_errors\":%" PRIu64 ",\"answered\":%" PRIu64
                  ",\"statuses\":{",
                  workload_names[options.workload], options.connections, options.pipeline,
                  options.seed, options.ttl_s, seconds, run.measured, throughput,
                  histogram_percentile_ms(&run.latency, 50), histogram_percentile_ms(&run.latency, 99),
                  histogram_percentile_ms(&run.latency, 99.9), (double)run.latency.max_us / 1000.0,
                  run.latency.total ? (double)run.latency.sum_us / (double)run.latency.total / 1000.0 : 0.0,
                  run.errors, run.transport_errors, run.answered);
    printf("%s: %d connections, pipeline %d, seed %" PRIu64 ", %.2f s\n",
           workload_names[options.workload], options.connections, options.pipeline, options.seed,
           seconds);
    if (options.workload == W_EXCHANGE)
        printf("  %.0f exchanges committed/s (%.0f requests/s, holds included)\n",
               seconds > 0 ? (double)run.exchanges_committed / seconds : 0, throughput);
    else if (options.workload == W_WEBHOOK) /* bench/run.sh logs this second line */
        printf("  %.0f committed webhooks/s (%.0f requests/s, holds included)\n",
               seconds > 0 ? (double)run.webhooks_committed / seconds : 0, throughput);
    else if (options.workload == W_RIDE_REQUEST)
        printf("  %.0f rides offered/s, %.0f driver updates/s (%.0f requests/s, accepts included)\n",
               seconds > 0 ? (double)run.rides_offered / seconds : 0,
               seconds > 0 ? (double)run.updates / seconds : 0, throughput);
    else if (options.workload == W_QUEUE_ADMIT)
        printf("  %.1f admissions/s seen (%.0f requests/s, joins and polls)\n",
               seconds > 0 ? (double)run.admission_count / seconds : 0, throughput);
    else
        printf("  %.0f requests/s (%" PRIu64 " answers)\n", throughput, run.measured);
    printf("  latency ms: p50 %.3f  p99 %.3f  p99.9 %.3f  max %.3f\n",
           histogram_percentile_ms(&run.latency, 50), histogram_percentile_ms(&run.latency, 99),
           histogram_percentile_ms(&run.latency, 99.9), (double)run.latency.max_us / 1000.0);
    printf("  statuses:");
    bool first = true;
    for (int s = 0; s < 600; s++) {
        if (!run.statuses[s]) continue;
        printf(" %d: %" PRIu64, s, run.statuses[s]);
        buffer_printf(json, "%s\"%d\":%" PRIu64, first ? "" : ",", s, run.statuses[s]);
        first = false;
    }
    printf("\n");
    buffer_printf(json, "}");
    if (options.workload == W_HOLD_RANDOM || options.workload == W_HOLD_HOT ||
        options.workload == W_REDIS_SET || options.workload == W_WEBHOOK ||
        options.workload == W_CALENDAR_HOLD) {
        printf("  holds won %" PRIu64 ", lost %" PRIu64 ", released %" PRIu64 "\n", run.hot_wins,
               run.hot_losses, run.releases);
        buffer_printf(json, ",\"holds_won\":%" PRIu64 ",\"holds_lost\":%" PRIu64 ",\"releases\":%" PRIu64,
                      run.hot_wins, run.hot_losses, run.releases);
    }
}

static void report_flash(buffer_t *json, double seconds) {
    double buyers_per_s = seconds > 0 ? (double)run.buyers_answered / seconds : 0;
    printf("  sold out: %s in %.3f s; %" PRIu64 " buyers served (%.0f/s); holds won %" PRIu64
           ", lost %" PRIu64 "; commits %" PRIu64 ", abandoned %" PRIu64 "\n",
           run.sold_out ? "yes" : "NO", seconds, run.buyers_answered, buyers_per_s,
           run.holds_won, run.holds_lost, run.commits, run.abandoned);
    printf("  hold latency ms: p50 %.3f p99 %.3f; commit latency ms: p50 %.3f p99 %.3f\n",
           histogram_percentile_ms(&run.hold_latency, 50), histogram_percentile_ms(&run.hold_latency, 99),
           histogram_percentile_ms(&run.commit_latency, 50), histogram_percentile_ms(&run.commit_latency, 99));
    printf("  verified: %" PRIu64 " seats in %" PRIu64 " pages (%" PRIu64 " sold, %" PRIu64
           " not sold); %" PRIu32 " of %" PRIu32 " orders found and matching (%" PRIu32
           " lost, %" PRIu32 " mismatched); %" PRIu64 " double sales\n",
           run.verified_seats, run.seat_pages, run.verified_sold, run.verified_not_sold,
           run.orders_verified, run.order_count, run.orders_lost, run.orders_mismatched,
           run.double_sales);
    buffer_printf(json, ",\"sold_out\":%s,\"sell_out_s\":%.3f,\"buyers_served\":%" PRIu64
                  ",\"buyers_per_s\":%.1f,\"holds_won\":%" PRIu64 ",\"holds_lost\":%" PRIu64
                  ",\"commits\":%" PRIu64 ",\"abandoned\":%" PRIu64 ",\"seats\":%" PRIu32
                  ",\"verified_seats\":%" PRIu64 ",\"verified_sold\":%" PRIu64
                  ",\"orders\":%" PRIu32 ",\"orders_verified\":%" PRIu32
                  ",\"lost_orders\":%" PRIu32 ",\"mismatched_orders\":%" PRIu32
                  ",\"double_sales\":%" PRIu64 ",\"hold_p50_ms\":%.3f,\"hold_p99_ms\":%.3f"
                  ",\"commit_p50_ms\":%.3f,\"commit_p99_ms\":%.3f",
                  run.sold_out ? "true" : "false", seconds, run.buyers_answered, buyers_per_s,
                  run.holds_won, run.holds_lost, run.commits, run.abandoned, options.seats,
                  run.verified_seats, run.verified_sold, run.order_count, run.orders_verified,
                  run.orders_lost, run.orders_mismatched, run.double_sales,
                  histogram_percentile_ms(&run.hold_latency, 50), histogram_percentile_ms(&run.hold_latency, 99),
                  histogram_percentile_ms(&run.commit_latency, 50), histogram_percentile_ms(&run.commit_latency, 99));
}

/* exchanges_per_s counts the exchange commits answered 200 in the measured window (each also
 * cost its hold); the latencies are of the commits and of the holds, exchange or first. */
static void report_exchange(buffer_t *json, double seconds) {
    double per_s = seconds > 0 ? (double)run.exchanges_committed / seconds : 0;
    printf("  exchanges committed %" PRIu64 " (%.0f/s), first purchases %" PRIu64 "\n",
           run.exchanges_committed, per_s, run.orders_bought);
    printf("  commit latency ms: p50 %.3f p99 %.3f; hold latency ms: p50 %.3f p99 %.3f\n",
           histogram_percentile_ms(&run.commit_latency, 50), histogram_percentile_ms(&run.commit_latency, 99),
           histogram_percentile_ms(&run.hold_latency, 50), histogram_percentile_ms(&run.hold_latency, 99));
    buffer_printf(json, ",\"exchanges_committed\":%" PRIu64 ",\"exchanges_per_s\":%.1f"
                  ",\"orders_bought\":%" PRIu64 ",\"commit_p50_ms\":%.3f,\"commit_p99_ms\":%.3f"
                  ",\"hold_p50_ms\":%.3f,\"hold_p99_ms\":%.3f",
                  run.exchanges_committed, per_s, run.orders_bought,
                  histogram_percentile_ms(&run.commit_latency, 50), histogram_percentile_ms(&run.commit_latency, 99),
                  histogram_percentile_ms(&run.hold_latency, 50), histogram_percentile_ms(&run.hold_latency, 99));
}

/* webhooks_per_s counts only the deliveries answered "committed" (late ones included); the
 * holds they paid for are among the requests, and in holds_won. */
static void report_webhook(buffer_t *json, double seconds) {
    double per_s = seconds > 0 ? (double)run.webhooks_committed / seconds : 0;
    printf("  webhooks committed %" PRIu64 " (%.0f/s, %" PRIu64 " of them late), other results %"
           PRIu64 "%s%s\n", run.webhooks_committed, per_s, run.webhooks_late, run.webhooks_other,
           run.first_other_result[0] ? "; first: " : "", run.first_other_result);
    printf("  webhook latency ms: p50 %.3f p99 %.3f; hold latency ms: p50 %.3f p99 %.3f\n",
           histogram_percentile_ms(&run.webhook_latency, 50), histogram_percentile_ms(&run.webhook_latency, 99),
           histogram_percentile_ms(&run.hold_latency, 50), histogram_percentile_ms(&run.hold_latency, 99));
    buffer_printf(json, ",\"webhooks_committed\":%" PRIu64 ",\"webhooks_per_s\":%.1f"
                  ",\"webhooks_late\":%" PRIu64 ",\"webhooks_other\":%" PRIu64
                  ",\"webhook_p50_ms\":%.3f,\"webhook_p99_ms\":%.3f"
                  ",\"hold_p50_ms\":%.3f,\"hold_p99_ms\":%.3f",
                  run.webhooks_committed, per_s, run.webhooks_late, run.webhooks_other,
                  histogram_percentile_ms(&run.webhook_latency, 50), histogram_percentile_ms(&run.webhook_latency, 99),
                  histogram_percentile_ms(&run.hold_latency, 50), histogram_percentile_ms(&run.hold_latency, 99));
}

/* The fill before the run (queue-poll's line, the fleet's drivers), when this run made one. */
static void report_fill(buffer_t *json) {
    if (!run.filled) return;
    double fill_s = (double)(run.fill_end_ns - run.fill_start_ns) / 1e9;
    printf("  filled %" PRIu64 " %s in %.2f s (%.0f/s)", run.fill_answered,
           options.workload == W_QUEUE_POLL ? "waiting users"
           : is_calendar_workload() ? "bookings" : "drivers", fill_s,
           fill_s > 0 ? (double)run.fill_answered / fill_s : 0);
    if (options.rss_pid > 0)
        printf("; server RSS %ld kB before, %ld kB after (+%ld kB, %.0f bytes each)", run.rss_before_kb,
               run.rss_after_kb, run.rss_after_kb - run.rss_before_kb,
               run.fill_answered ? (double)(run.rss_after_kb - run.rss_before_kb) * 1024.0 / (double)run.fill_answered : 0);
    printf("\n");
    buffer_printf(json, ",\"filled\":%" PRIu64 ",\"fill_s\":%.3f,\"fill_per_s\":%.1f", run.fill_answered,
                  fill_s, fill_s > 0 ? (double)run.fill_answered / fill_s : 0);
    if (options.rss_pid > 0)
        buffer_printf(json, ",\"rss_before_kb\":%ld,\"rss_after_kb\":%ld,\"rss_end_kb\":%ld",
                      run.rss_before_kb, run.rss_after_kb, run.rss_end_kb);
}

static int compare_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* queue-admit: the admissions seen in the measured window, counted per ADMIT_WINDOW_MS window
 * (a window holds the admissions whose first admitted poll was answered in it). */
static void report_admissions(buffer_t *json, double seconds) {
    uint32_t windows = (uint32_t)(seconds * 1000.0 / ADMIT_WINDOW_MS);
    uint32_t *counts = calloc(windows ? windows : 1, sizeof counts[0]);
    if (!counts) die("out of memory");
    for (uint64_t i = 0; i < run.admission_count; i++) {
        uint64_t window = (run.admission_ns[i] - run.measure_start_ns) / (ADMIT_WINDOW_MS * 1000000ull);
        if (window < windows) counts[window]++;
    }
    qsort(counts, windows, sizeof counts[0], compare_u32);
    /* The window on the wall clock, which the server's tickets carry (admitted_at): for
     * bench/admissions.py, which counts the admissions the server recorded in it. */
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    int64_t wall_ms = (int64_t)wall.tv_sec * 1000 + wall.tv_nsec / 1000000;
    int64_t start_unix_ms = wall_ms - (int64_t)((uv_hrtime() - run.measure_start_ns) / 1000000u);
    uint32_t median = windows ? counts[windows / 2] : 0, low = windows ? counts[0] : 0;
    uint32_t high = windows ? counts[windows - 1] : 0;
    double per_s = seconds > 0 ? (double)run.admission_count / seconds : 0;
    printf("  admissions: %" PRIu64 " (%.1f/s at admit_per_s %g); per %d ms window: median %" PRIu32
           ", min %" PRIu32 ", max %" PRIu32 " over %" PRIu32 " windows; seen within ms: p50 %.3f p99 %.3f\n",
           run.admission_count, per_s, options.admit_per_s, ADMIT_WINDOW_MS, median, low, high, windows,
           histogram_percentile_ms(&run.admission_resolution, 50),
           histogram_percentile_ms(&run.admission_resolution, 99));
    buffer_printf(json, ",\"admit_per_s\":%g,\"admissions\":%" PRIu64 ",\"admissions_per_s\":%.2f,"
                  "\"window_ms\":%d,\"windows\":%" PRIu32 ",\"window_median\":%" PRIu32
                  ",\"window_min\":%" PRIu32 ",\"window_max\":%" PRIu32
                  ",\"seen_p50_ms\":%.3f,\"seen_p99_ms\":%.3f,\"measure_start_unix_ms\":%" PRId64
                  ",\"measure_end_unix_ms\":%" PRId64,
                  options.admit_per_s, run.admission_count, per_s, ADMIT_WINDOW_MS, windows, median, low,
                  high, histogram_percentile_ms(&run.admission_resolution, 50),
                  histogram_percentile_ms(&run.admission_resolution, 99), start_unix_ms,
                  start_unix_ms + (int64_t)(seconds * 1000));
    free(counts);
}

static void report_queue(buffer_t *json, double seconds) {
    report_fill(json);
    printf("  joins: %" PRIu64 " new, %" PRIu64 " repeated; polls: %" PRIu64 " waiting, %" PRIu64
           " admitted, %" PRIu64 " other, %" PRIu64 " for another ticket\n", run.joins_new,
           run.joins_repeat, run.polls_waiting, run.polls_admitted, run.polls_other, run.tickets_mismatched);
    buffer_printf(json, ",\"line\":%" PRIu32 ",\"joins_new\":%" PRIu64 ",\"joins_repeat\":%" PRIu64
                  ",\"polls_waiting\":%" PRIu64 ",\"polls_admitted\":%" PRIu64 ",\"polls_other\":%" PRIu64
                  ",\"tickets_mismatched\":%" PRIu64, run.ticket_count, run.joins_new, run.joins_repeat,
                  run.polls_waiting, run.polls_admitted, run.polls_other, run.tickets_mismatched);
    if (options.workload == W_QUEUE_ADMIT) report_admissions(json, seconds);
}

static void report_dispatch(buffer_t *json, double seconds) {
    report_fill(json);
    double per_s = seconds > 0 ? 1.0 / seconds : 0;
    printf("  driver updates %" PRIu64 " (%.0f/s), latency ms: p50 %.3f p99 %.3f\n", run.updates,
           (double)run.updates * per_s, histogram_percentile_ms(&run.update_latency, 50),
           histogram_percentile_ms(&run.update_latency, 99));
    buffer_printf(json, ",\"drivers\":%" PRIu32 ",\"updates\":%" PRIu64 ",\"updates_per_s\":%.1f"
                  ",\"update_p50_ms\":%.3f,\"update_p99_ms\":%.3f", options.drivers, run.updates,
                  (double)run.updates * per_s, histogram_percentile_ms(&run.update_latency, 50),
                  histogram_percentile_ms(&run.update_latency, 99));
    if (options.workload != W_RIDE_REQUEST) return;
    printf("  rides: %" PRIu64 " offered (%.0f/s), %" PRIu64 " searching (cancelled: %" PRIu64
           "); created to offer made, ms: p50 %.3f p99 %.3f; accepts %" PRIu64 " (%" PRIu64
           " refused), ms: p50 %.3f p99 %.3f\n", run.rides_offered, (double)run.rides_offered * per_s,
           run.rides_searching, run.cancels, histogram_percentile_ms(&run.ride_latency, 50),
           histogram_percentile_ms(&run.ride_latency, 99), run.accepts, run.accepts_failed,
           histogram_percentile_ms(&run.accept_latency, 50), histogram_percentile_ms(&run.accept_latency, 99));
    buffer_printf(json, ",\"ride_connections\":%d,\"rides_offered\":%" PRIu64 ",\"rides_per_s\":%.1f"
                  ",\"rides_searching\":%" PRIu64 ",\"cancels\":%" PRIu64 ",\"ride_p50_ms\":%.3f"
                  ",\"ride_p99_ms\":%.3f,\"accepts\":%" PRIu64 ",\"accepts_refused\":%" PRIu64
                  ",\"accept_p50_ms\":%.3f,\"accept_p99_ms\":%.3f", options.ride_connections,
                  run.rides_offered, (double)run.rides_offered * per_s, run.rides_searching, run.cancels,
                  histogram_percentile_ms(&run.ride_latency, 50), histogram_percentile_ms(&run.ride_latency, 99),
                  run.accepts, run.accepts_failed, histogram_percentile_ms(&run.accept_latency, 50),
                  histogram_percentile_ms(&run.accept_latency, 99));
}

static void report(void) {
    double seconds = options.workload == W_FLASH_SALE
        ? (double)((run.sold_out ? run.sold_out_ns : uv_hrtime()) - run.start_ns) / 1e9
        : options.duration_s;
    buffer_t json = {0};
    report_common(&json, seconds);
    if (options.workload == W_FLASH_SALE) report_flash(&json, seconds);
    if (options.workload == W_WEBHOOK) report_webhook(&json, seconds);
    if (options.workload == W_EXCHANGE) report_exchange(&json, seconds);
    if (is_queue_workload()) report_queue(&json, seconds);
    if (is_fleet_workload()) report_dispatch(&json, seconds);
    if (is_calendar_workload()) {
        report_fill(&json);
        buffer_printf(&json, ",\"resources\":%" PRIu32 ",\"span_days\":%" PRIu32 ",\"fill_uses\":%" PRIu32,
                      options.resources, options.span_days, options.fill_uses);
    }
    bool ok = run.errors == 0 && !run.violations &&
              (options.workload != W_FLASH_SALE ||
               (run.sold_out && run.verified_seats == options.seats &&
                run.verified_sold == options.seats && run.orders_verified == run.order_count)) &&
              (options.workload != W_WEBHOOK || run.webhooks_committed > 0) &&
              (options.workload != W_EXCHANGE || run.exchanges_committed > 0) &&
              /* The rooms' workloads fail when they measured nothing (an empty line, no fleet),
               * except a run of the fill alone (-d 0). */
              ((!is_queue_workload() && !is_fleet_workload() && !is_calendar_workload()) ||
               run.measured > 0 ||
               options.duration_s == 0) &&
              (options.workload != W_RIDE_REQUEST || run.rides_offered > 0 || options.duration_s == 0);
    buffer_printf(&json, ",\"ok\":%s", ok ? "true" : "false");
    if (run.first_error[0]) {
        printf("  errors: %" PRIu64 "; first: %s\n", run.errors, run.first_error);
        buffer_printf(&json, ",\"first_error\":\"");
        for (const char *c = run.first_error; *c; c++)
            if (*c == '"' || *c == '\\') buffer_printf(&json, "\\%c", *c);
            else if ((unsigned char)*c >= 0x20) buffer_append(&json, c, 1);
        buffer_printf(&json, "\"");
    }
    buffer_printf(&json, "}\n");
    printf("  %s\n", ok ? "OK" : "FAILED");
    if (options.json_path) {
        FILE *file = fopen(options.json_path, "w");
        if (!file) die("cannot write %s: %s", options.json_path, strerror(errno));
        fwrite(json.data, 1, json.length, file);
        fclose(file);
    }
    free(json.data);
    fflush(stdout);
    exit(ok ? 0 : 1);
}

int main(int argc, char **argv) {
    parse_options(argc, argv);
    run.loop = uv_default_loop();
    run.phase = P_CONNECT;
    run.nonce = uv_hrtime();
    run.today_days = (int64_t)(time(NULL) / 86400);
    if (options.workload == W_FLASH_SALE || options.workload == W_WEBHOOK) {
        run.view = malloc(options.seats * sizeof run.view[0]);
        run.view_position = malloc(options.seats * sizeof run.view_position[0]);
        run.sold_by = calloc(options.seats, sizeof run.sold_by[0]);
        if (!run.view || !run.view_position || !run.sold_by) die("out of memory");
        for (uint32_t s = 0; s < options.seats; s++) run.view[s] = run.view_position[s] = s;
        run.view_count = options.seats;
    }
    struct sockaddr_in address;
    if (uv_ip4_addr(options.host, options.port, &address)) die("bad address %s", options.host);
    run.connections = calloc((size_t)options.connections, sizeof run.connections[0]);
    if (!run.connections) die("out of memory");
    for (int i = 0; i < options.connections; i++) {
        connection_t *connection = &run.connections[i];
        connection->index = i;
        if (options.user_token_secret) token_mint(connection);
        uint64_t state = options.seed ^ (0xd1b54a32d192ed03ull * (uint64_t)(i + 1));
        connection->rng = splitmix64(&state);
        uv_tcp_init(run.loop, &connection->tcp);
        uv_tcp_nodelay(&connection->tcp, 1);
        connection->tcp.data = connection;
        connection->connect_request.data = connection;
        int error = uv_tcp_connect(&connection->connect_request, &connection->tcp,
                                   (const struct sockaddr *)&address, on_connect);
        if (error) die("connect: %s", uv_strerror(error));
    }
    uv_timer_init(run.loop, &run.timer);
    uv_timer_start(&run.timer, on_timer, 10, 10);
    uv_run(run.loop, UV_RUN_DEFAULT);
    run.rss_end_kb = server_rss_kb();
    report();
    return 0;
}
