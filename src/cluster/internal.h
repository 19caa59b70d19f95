/* What the files of the cluster share (cluster.c: units, leases, the renewal, takeovers,
 * rebuilds; routing.c: a request's unit, forwarding, parking and its continuations): the
 * cluster's state. Private to cluster/. */
#ifndef HF_CLUSTER_INTERNAL_H
#define HF_CLUSTER_INTERNAL_H

#include "cluster/cluster.h"
#include "cluster/exchange.h"
#include "cluster/jobs.h"
#include "cluster/offers.h"
#include "core/jobs.h"
#include "lib/map.h"
#include "net/flat_json.h"

/* The lease's length as the store keeps it (store/postgres/lease.c): a node whose renewals
 * failed this long ago may have lost every unit. */
#define LEASE_MS 5000
/* A node stops answering from memory this much before its lease could lapse, for the clocks'
 * drift between it and the database. */
#define LEASE_MARGIN_MS 1000
/* An owner whose heartbeat is older than this has missed two renewals (paused, cut off, or
 * dead): requests are not forwarded to it, to wait up to HF_FORWARD_TIMEOUT_MS, but answered
 * 503 at once until its lease lapses and the unit is taken over. */
#define HEARTBEAT_STALE_MS 2500
/* Ids whose unit was looked up (a hold's, an order's...) kept before the cache starts over. */
#define ID_CACHE_MAX 65536
/* Lapsed units taken over per renewal: the rest at the next one, so a node taking over a
 * dead peer's thousands of units still answers in between. */
#define TAKEOVERS_PER_TICK 64
/* Jobs the renewal's takeovers may have at once: the rest are left to requests. */
#define TAKEOVER_JOBS_MAX (HF_CLUSTER_JOBS_MAX / 2)

typedef enum pending_kind { PENDING_READ, PENDING_COMMIT, PENDING_EVENT } pending_kind_t;

/* A request parked on its internal call (exchange_new.c), and what the call answered. */
typedef struct exchange_pending {
    bool used;
    pending_kind_t kind;
    hf_cluster_t *cluster;
    hf_http_deferred_t deferred;
    hf_cluster_parked_t *parked;
    char unit[HF_CLUSTER_UNIT_SIZE_MAX + 1];
    char hold_id[HF_SERVER_ID_SIZE + 1], order_id[HF_ID_SIZE_MAX + 1];
    /* The old order as its owner answered: found (a read), locked for this hold (a commit). */
    bool granted;
    char user_id[HF_USER_ID_SIZE_MAX + 1], payment_ref[HF_PAYMENT_REF_SIZE_MAX + 1];
    bool paid, confirmed;
    int64_t total;
    /* A webhook's lock (hf_cluster_exchange_lock_park): a refusal is served too (its handler
     * decides the refund), and refused says the owner refused. */
    bool serve_refusal, refused;
    /* The rebuilds when it was parked; a commit decided: the batch its answer waits for and
     * the new order; lost, that batch lost with a rebuild (the unit lost meanwhile). */
    bool deciding, finishing, lost;
    uint64_t sequence, rebuilds;
    char new_order[HF_SERVER_ID_SIZE + 1];
    /* A cancel's rebook_to as its owner described it (PENDING_EVENT, offers.h): described
     * once it answered 200. */
    char event_id[HF_ID_SIZE_MAX + 1], currency[HF_CURRENCY_SIZE_MAX + 1];
    bool described, event_cancelled;
} exchange_pending_t;

/* A cancel job's batch in flight to its rebook_to's owner (offers.c). */
typedef struct rebook_batch {
    bool used;
    struct hf_cluster *cluster;
    char job_id[HF_SERVER_ID_SIZE + 1];
    uint32_t sent;     /* orders in it */
    uint64_t rebuilds; /* when it left: an answer after a rebuild is dropped */
} rebook_batch_t;

/* An open offer asked about, or an ended one told (offers.c). */
typedef struct rebook_message {
    bool used;
    struct hf_cluster *cluster;
    char order_id[HF_ID_SIZE_MAX + 1], hold_id[HF_SERVER_ID_SIZE + 1];
} rebook_message_t;

/* A stale lock whose decision is being asked (exchange_old.c). */
typedef struct exchange_asking {
    bool used;
    struct hf_cluster *cluster;
    char order_id[HF_SERVER_ID_SIZE + 1], hold_id[HF_SERVER_ID_SIZE + 1];
} exchange_asking_t;

typedef struct unit_entry {
    char id[HF_CLUSTER_UNIT_SIZE_MAX + 1];
    bool owned;             /* this node holds the lease */
    bool loaded;            /* the core holds the unit's state */
    int64_t acquired_at_ms; /* when this node last acquired it (loop's clock) */
} unit_entry_t;

struct hf_cluster {
    uv_loop_t *loop;
    hf_context_t *context;
    hf_http_server_t *http;
    hf_forward_t *forward;
    hf_cluster_config_t config;
    char node_id[HF_CLUSTER_NODE_ID_SIZE_MAX + 1];
    char address[HF_CLUSTER_ADDRESS_SIZE_MAX + 1];
    bool leased;
    uint64_t refused; /* requests about a unit answered 503 here */
    unit_entry_t *units;
    size_t unit_count, unit_capacity;
    hf_map_t unit_index; /* unit id -> index in units */
    hf_map_t id_units;   /* hold, order... id -> index in units */
    size_t owned_count;
    bool rebuild_pending;
    /* The renewal: its timer, its work on the thread pool and what it found. */
    uv_timer_t timer;
    uv_check_t check;
    uv_work_t work;
    bool working, stopped;
    int64_t work_started_ms;
    bool renew_ok;
    char renew_error[256];
    int64_t renewed_at_ms; /* the last successful renewal began then */
    hf_cluster_view_t next, view;
    hf_cluster_jobs_t *jobs; /* takeovers, lookups and lists on the thread pool */
    /* What id_unit found no answer to here: the lookup the request is parked on (kind NULL:
     * none), or one that failed (503). routing.c's, for one request at a time. */
    const char *lookup_kind;
    char lookup_id[HF_CLUSTER_UNIT_SIZE_MAX + 1];
    bool lookup_failed;
    bool resolving;               /* the exchange's resolution timer runs (exchange_old.c) */
    bool offering, offers_driven; /* the offers' state is made; their timer runs (offers.h) */
    /* The flat reading of a body member that names a unit (routing.c), one request at a
     * time. */
    hf_flat_json_t flat;
    /* The exchange across two owners (exchange.h): the resolution's timer and the decisions
     * it is asking. */
    uv_timer_t resolve_timer;
    exchange_asking_t asking[HF_EXCHANGE_RESOLVING_MAX];
    /* Requests parked on their calls (exchange_new.c), the one whose handler runs now, the
     * check that finishes decided commits, and the rebuilds so far (a decision's batch lost
     * with one is answered 503). */
    exchange_pending_t pending[HF_EXCHANGE_PENDING_MAX];
    const exchange_pending_t *exchange_current;
    uv_check_t exchange_watch;
    uint64_t rebuilds;
    /* The fault point o_lock_durable's batch (exchange.h): killed once it is durable. */
    uint64_t fault_sequence;
    /* A cancel job's offers on another unit (offers.h): the driver's timer and ticks, the
     * batches in flight (all wait until retry_at after a failed one), the offers asked about
     * and told, and the scratch of one order, one body and one batch's answers. */
    uv_timer_t offers_timer;
    uint64_t offers_ticks;
    int64_t offers_retry_at_ms;
    rebook_batch_t batches[HF_REBOOK_JOBS_MAX];
    rebook_message_t offer_asking[HF_REBOOK_ASKING_MAX], offer_telling[HF_REBOOK_TELLING_MAX];
    hf_offer_scratch_t *offer_scratch;
    hf_offer_answer_t *offer_answers;
    hf_buffer_t offer_body;
};

/* The unit's entry, made when create and there is room (NULL otherwise). */
unit_entry_t *hf_cluster_unit_get(hf_cluster_t *cluster, const char *unit, bool create);

/* A text member of the request's body, or false after answering 400 about it (exchange_old.c;
 * the internal routes' bodies). */
bool hf_cluster_body_text(hf_request_t *request, const char *name, const char **text);

/* A free slot of slots (count of them), or NULL (offers_job.c). */
rebook_message_t *hf_cluster_message_take(rebook_message_t *slots, size_t count);
/* The ended offers of the core's queue told to their jobs' units, as slots allow
 * (offers_target.c; the driver's timer calls it). */
void hf_cluster_offers_tell(hf_cluster_t *cluster);

/* The exchange's check handle (exchange_new.c), started and closed with the resolution. */
void hf_cluster_exchange_watch(hf_cluster_t *cluster);
void hf_cluster_exchange_unwatch(hf_cluster_t *cluster);

/* The live owner's address (another node's), from the view (the renewal's, or a job's if
 * fresher), or NULL: none, or this node (routing.c). */
const char *hf_cluster_owner_address(hf_cluster_t *cluster, const char *unit);

#endif
