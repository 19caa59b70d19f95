/* holdfast check --data DIR (commands.h): every invariant of the stored state, offline. First
 * the store's own (SQLite's integrity check, the schema version, and what the tables must
 * agree on: each seat sold once, every order's items and hold there, statuses known, refunds
 * pointing at holds and cancelled orders, a calendar's resources and uses matching their
 * holds and orders), each a query that names its first offending row;
 * then the state is loaded into a core as a start would (engine/restore.h), which checks every
 * rule of the core (hf_core_check): a hold's seats exist in its event, no seat is held and sold at once, the
 * counts agree. The first broken invariant is named and the exit code is 1.
 *
 * Offline: check takes the data directory's lock, so it refuses while a server runs there
 * (check a copy made by `holdfast backup` instead), and no server starts during a check. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "engine/context.h"
#include "engine/idempotency.h"
#include "engine/restore.h"
#include "lib/progress.h"
#include "store/backend.h"

/* SQLite's virtual machine instructions between two looks at the progress line. */
#define CHECK_PROGRESS_INSTRUCTIONS 100000
/* The store's schema version this build knows (store/backend.h). */
#define CHECK_SCHEMA_VERSION HF_STORE_SQLITE_SCHEMA_VERSION

static const char USAGE[] =
    "usage: holdfast check --data DIR\n"
    "       holdfast check --store sqlite:PATH   (a copy made by holdfast backup)\n"
    "Checks every invariant of the stored state, offline: SQLite's integrity check, the schema\n"
    "version, each seat sold at most once, every order's items and hold present, known\n"
    "statuses, refunds and deliveries pointing at their rows, calendars' resources and uses\n"
    "matching their holds and orders, allocations' seats in one allocation and sold only to\n"
    "its orders, then the whole state loaded as a start would load it.\n"
    "Refuses while a server holds DIR's lock: check a backup instead.\n"
    "Progress is shown on a terminal.\n"
    "  --data DIR           the server's data directory\n"
    "  --store sqlite:PATH  the store's file instead [HOLDFAST_STORE]\n"
    "Exit codes: 0 every invariant holds, 1 one is broken (the first is named on standard\n"
    "error) or the store cannot be read, 2 usage.\n";

/* One invariant of the tables: a query whose first row, if any, says what breaks it. */
typedef struct invariant {
    const char *name;
    const char *query;
} invariant_t;

static const invariant_t INVARIANTS[] = {
    {"known_statuses",
     "SELECT 'hold ' || id || ' has status ' || quote(status) FROM holds"
     "  WHERE status NOT IN ('held', 'confirmed', 'released', 'expired')"
     " UNION ALL SELECT 'order ' || id || ' has status ' || quote(status) FROM orders"
     "  WHERE status NOT IN ('confirmed', 'cancelled', 'exchanged')"
     " UNION ALL SELECT 'refund ' || id || ' has status ' || quote(status) FROM refunds"
     "  WHERE status NOT IN ('pending', 'completed') LIMIT 1"},
    /* A hold's or order's event_id names its event, or its calendar (API.md section 12). */
    {"holds_have_events",
     "SELECT 'hold ' || id || ' is of the unknown event or calendar ' || event_id FROM holds"
     "  WHERE event_id NOT IN (SELECT id FROM events UNION ALL SELECT id FROM calendars)"
     "  LIMIT 1"},
    {"orders_have_events",
     "SELECT 'order ' || id || ' is of the unknown event or calendar ' || event_id FROM orders"
     "  WHERE event_id NOT IN (SELECT id FROM events UNION ALL SELECT id FROM calendars)"
     "  LIMIT 1"},
    {"calendar_resources_have_calendars",
     "SELECT 'resource ' || id || ' is of the unknown calendar ' || calendar_id"
     "  FROM calendar_resources WHERE calendar_id NOT IN (SELECT id FROM calendars) LIMIT 1"},
    {"calendar_uses_have_owners",
     "SELECT 'a use of calendar ' || calendar_id || ' belongs to the missing hold or order ' ||"
     "  owner_id FROM calendar_uses WHERE owner_id NOT IN (SELECT id FROM holds UNION ALL"
     "  SELECT id FROM orders) LIMIT 1"},
    /* The typed rows of a calendar hold's or order's uses are its items' ({"uses": [...]}). */
    {"calendar_uses_match_items",
     "SELECT kind || ' ' || id || ' lists ' || listed || ' uses and has ' || typed ||"
     "  ' use rows' FROM (SELECT 'hold' AS kind, id, json_array_length(items, '$.uses') AS"
     "  listed, (SELECT count(*) FROM calendar_uses u WHERE u.owner_id = h.id) AS typed"
     "  FROM holds h WHERE event_id IN (SELECT id FROM calendars) UNION ALL SELECT 'order',"
     "  id, json_array_length(items, '$.uses'), (SELECT count(*) FROM calendar_uses u"
     "  WHERE u.owner_id = o.id) FROM orders o WHERE event_id IN (SELECT id FROM calendars))"
     "  WHERE listed IS NOT typed LIMIT 1"},
    {"seat_sold_once",
     "SELECT 'seat ' || seat_id || ' of event ' || event_id || ' is sold to ' || count(*) ||"
     "  ' orders (' || group_concat(order_id, ', ') || ')' FROM order_items"
     "  WHERE active = 1 AND seat_id IS NOT NULL GROUP BY event_id, seat_id"
     "  HAVING count(*) > 1 LIMIT 1"},
    {"order_items_have_orders",
     "SELECT 'an item of ' || order_id || ' belongs to no order' FROM order_items"
     "  WHERE order_id NOT IN (SELECT id FROM orders) LIMIT 1"},
    {"order_items_match_orders",
     "SELECT 'an item of order ' || o.id || ' is ' || CASE WHEN i.event_id != o.event_id"
     "  THEN 'of another event' ELSE 'active while the order is ' || o.status END"
     "  FROM order_items i JOIN orders o ON o.id = i.order_id"
     "  WHERE i.event_id != o.event_id OR i.active != (o.status = 'confirmed') LIMIT 1"},
    {"order_seats_match_items",
     "SELECT 'order ' || o.id || ' lists ' || json_array_length(o.items, '$.seats') ||"
     "  ' seats and has ' || (SELECT count(*) FROM order_items i WHERE i.order_id = o.id"
     "  AND i.seat_id IS NOT NULL) || ' seat items' FROM orders o"
     "  WHERE ifnull(json_array_length(o.items, '$.seats'), 0) != (SELECT count(*)"
     "  FROM order_items i WHERE i.order_id = o.id AND i.seat_id IS NOT NULL) LIMIT 1"},
    {"orders_have_holds",
     "SELECT 'order ' || o.id || ' comes from hold ' || o.reservation_id || CASE WHEN h.id IS"
     "  NULL THEN ', which is missing' ELSE ', which is ' || h.status || ' with order ' ||"
     "  ifnull(h.order_id, 'none') END FROM orders o LEFT JOIN holds h ON h.id ="
     "  o.reservation_id WHERE o.reservation_id IS NOT NULL AND (h.id IS NULL OR h.status !="
     "  'confirmed' OR h.order_id IS NOT o.id) LIMIT 1"},
    {"confirmed_holds_have_orders",
     "SELECT 'hold ' || id || ' is confirmed without its order ' || ifnull(order_id, '(none)')"
     "  FROM holds WHERE status = 'confirmed' AND (order_id IS NULL OR order_id NOT IN"
     "  (SELECT id FROM orders)) LIMIT 1"},
    /* A booking's refund names no hold (NULL), which NOT IN would match when no hold exists
     * at all (a NOT IN over no row is true even for NULL). */
    {"refunds_have_holds",
     "SELECT 'refund ' || id || ' (' || reason || ') points at the missing hold ' ||"
     "  reservation_id FROM refunds WHERE reason != 'hold_not_found' AND reservation_id"
     "  IS NOT NULL AND reservation_id NOT IN (SELECT id FROM holds) LIMIT 1"},
    {"refunds_have_orders",
     "SELECT 'refund ' || r.id || ' refunds the order ' || r.order_id || CASE WHEN o.id IS"
     "  NULL THEN ', which is missing' ELSE ', which is ' || o.status END FROM refunds r"
     "  LEFT JOIN orders o ON o.id = r.order_id WHERE r.order_id IS NOT NULL AND (o.id IS NULL"
     "  OR o.status != 'cancelled') LIMIT 1"},
    /* Exchanges (API.md section 13): an exchanged order names its replacement, which names
     * it back; an order that replaces another names an exchanged one. */
    {"exchanges_name_each_other",
     "SELECT 'order ' || o.id || CASE WHEN o.status = 'exchanged' THEN ' is exchanged for '"
     "  || ifnull(o.replaced_by, '(none)') || ', which does not replace it' ELSE"
     "  ' replaces ' || o.replaces || ', which is not exchanged for it' END FROM orders o"
     "  WHERE (o.status = 'exchanged' AND (o.replaced_by IS NULL OR NOT EXISTS (SELECT 1 FROM"
     "  orders n WHERE n.id = o.replaced_by AND n.replaces = o.id))) OR (o.replaces IS NOT"
     "  NULL AND NOT EXISTS (SELECT 1 FROM orders p WHERE p.id = o.replaces AND p.status ="
     "  'exchanged' AND p.replaced_by = o.id)"
     /* An exchange across owners decided and not yet finished (core/locks.h): the old order
      * confirmed, locked by the new order's hold, which is committed. That state only. */
     "  AND NOT EXISTS (SELECT 1 FROM orders p JOIN order_locks l ON l.order_id = p.id JOIN"
     "  holds h ON h.id = l.hold_id WHERE p.id = o.replaces AND p.status = 'confirmed' AND"
     "  p.replaced_by IS NULL AND h.id = o.reservation_id AND h.status = 'confirmed'"
     "  AND h.order_id = o.id)) LIMIT 1"},
    /* Allocations (API.md section 14): a seat in one allocation at most, sold only to an
     * order of the allocation that lists it, and every allocation a hold or order names
     * there on its event. */
    {"allocations_have_events",
     "SELECT 'allocation ' || id || ' is of the unknown event ' || event_id FROM allocations"
     "  WHERE event_id NOT IN (SELECT id FROM events) LIMIT 1"},
    {"seats_in_one_allocation",
     "SELECT 'seat ' || s.value || ' of event ' || a.event_id || ' is in ' || count(*) ||"
     "  ' allocations' FROM allocations a, json_each(a.items, '$.seats') s"
     "  GROUP BY a.event_id, s.value HAVING count(*) > 1 LIMIT 1"},
    {"allocated_seats_not_public",
     "SELECT 'seat ' || s.value || ' of event ' || a.event_id || ' is in allocation ' || a.id"
     "  || ' and sold to order ' || o.id || ', which is ' || CASE WHEN json_extract(o.items,"
     "  '$.allocation') IS NULL THEN 'the public''s' ELSE 'of allocation ' ||"
     "  json_extract(o.items, '$.allocation') END FROM allocations a,"
     "  json_each(a.items, '$.seats') s JOIN order_items i ON i.event_id = a.event_id AND"
     "  i.seat_id = s.value AND i.active = 1 JOIN orders o ON o.id = i.order_id"
     "  WHERE ifnull(json_extract(o.items, '$.allocation'), '') != a.id LIMIT 1"},
    {"allocations_named_exist",
     "SELECT n.kind || ' ' || n.id || ' names the missing allocation ' || n.name FROM (SELECT"
     "  'hold' AS kind, id, event_id, json_extract(items, '$.allocation') AS name FROM holds"
     "  UNION ALL SELECT 'order', id, event_id, json_extract(items, '$.allocation') FROM orders)"
     "  n WHERE n.name IS NOT NULL AND NOT EXISTS (SELECT 1 FROM allocations a WHERE"
     "  a.event_id = n.event_id AND a.id = n.name) LIMIT 1"},
    {"deliveries_point_at_rows",
     "SELECT 'the delivery ' || payment_intent_id || ' (' || type || ') names the missing ' ||"
     "  CASE WHEN order_id IS NOT NULL AND order_id NOT IN (SELECT id FROM orders)"
     "  THEN 'order ' || order_id ELSE 'refund ' || refund_id END FROM deliveries"
     "  WHERE (order_id IS NOT NULL AND order_id NOT IN (SELECT id FROM orders))"
     "  OR (refund_id IS NOT NULL AND refund_id NOT IN (SELECT id FROM refunds)) LIMIT 1"},
};

static int broken(const char *name, const char *detail) {
    fprintf(stderr, "holdfast: check: broken invariant %s: %s\n", name, detail);
    return HF_EXIT_FAILURE;
}

static int on_progress(void *context) {
    hf_progress_add(context, 1 << 10);
    return 0;
}

/* The first row's first column of query, copied into out ("" when no row). */
static int first_text(sqlite3 *database, const char *query, char *out, size_t size) {
    sqlite3_stmt *statement = NULL;
    out[0] = '\0';
    int rc = sqlite3_prepare_v2(database, query, -1, &statement, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(statement)) == SQLITE_ROW) {
        const unsigned char *text = sqlite3_column_text(statement, 0);
        snprintf(out, size, "%s", text ? (const char *)text : "NULL");
        rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
        rc = SQLITE_OK;
    }
    sqlite3_finalize(statement);
    return rc;
}

/* The rows counted by tables_check, which core_check compares with what it loaded. */
typedef struct counts {
    uint64_t holds, orders, refunds;
} counts_t;

/* "HOLDS ORDERS REFUNDS", as the count query writes them. */
static void counts_parse(const char *text, counts_t *counts) {
    uint64_t *fields[] = {&counts->holds, &counts->orders, &counts->refunds};
    char *end = (char *)text;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        *fields[i] = strtoull(end, &end, 10);
}

/* The store's own invariants, through a read-only connection. */
static int tables_check(const char *path, counts_t *counts) {
    sqlite3 *database = NULL;
    char text[1024];
    int code = HF_EXIT_OK;
    if (sqlite3_open_v2(path, &database, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        code = hf_command_fail(HF_EXIT_FAILURE, "check", "cannot open %s: %s", path,
                               database ? sqlite3_errmsg(database) : "out of memory");
        sqlite3_close(database);
        return code;
    }
    hf_progress_t progress;
    hf_progress_begin(&progress, "check: integrity", isatty(STDERR_FILENO) == 1);
    sqlite3_progress_handler(database, CHECK_PROGRESS_INSTRUCTIONS, on_progress, &progress);
    if (first_text(database, "PRAGMA integrity_check", text, sizeof text) != SQLITE_OK)
        code = broken("integrity", sqlite3_errmsg(database));
    else if (strcmp(text, "ok") != 0) code = broken("integrity", text);
    else if (first_text(database, "SELECT value FROM meta WHERE key = 'schema_version'", text,
                        sizeof text) != SQLITE_OK)
        code = broken("schema_version", sqlite3_errmsg(database));
    else if (strcmp(text, CHECK_SCHEMA_VERSION) != 0)
        code = broken("schema_version", text[0] ? "a version this build does not check (start "
                                                  "the server once to migrate an older store)"
                                                : "none is recorded");
    progress.what = "check: tables";
    for (size_t i = 0; code == HF_EXIT_OK && i < sizeof INVARIANTS / sizeof INVARIANTS[0]; i++) {
        if (first_text(database, INVARIANTS[i].query, text, sizeof text) != SQLITE_OK)
            code = broken(INVARIANTS[i].name, sqlite3_errmsg(database));
        else if (text[0]) code = broken(INVARIANTS[i].name, text);
    }
    if (code == HF_EXIT_OK &&
        first_text(database,
                   "SELECT (SELECT count(*) FROM holds) || ' ' || (SELECT count(*)"
                   " FROM orders) || ' ' || (SELECT count(*) FROM refunds)",
                   text, sizeof text) == SQLITE_OK)
        counts_parse(text, counts);
    hf_progress_end(&progress);
    sqlite3_close(database);
    return code;
}

/* The state loaded into a core as at a start; hf_restore_load runs hf_core_check on it. */
static int core_check(const char *path, const counts_t *counts) {
    char url[4300], error[512];
    snprintf(url, sizeof url, "sqlite:%s", path);
    hf_context_t *context = calloc(1, sizeof *context);
    hf_idempotency_t *keys = calloc(1, sizeof *keys);
    if (!context || !keys) abort();
    hf_idempotency_init(keys);
    context->idempotency = keys;
    context->core = hf_core_create((hf_mutation_sink_t){NULL, NULL});
    hf_progress_t progress;
    hf_progress_begin(&progress, "check: loading", isatty(STDERR_FILENO) == 1);
    hf_progress_total(&progress, counts->holds + counts->orders + counts->refunds);
    int code = HF_EXIT_OK;
    if (hf_store_open(&context->store, url, error, sizeof error) != 0)
        code = hf_command_fail(HF_EXIT_FAILURE, "check", "%s", error);
    else if (hf_restore_load_progress(context, context->store, UINT64_MAX, &progress, error,
                                      sizeof error) != 0)
        code = broken("core", error);
    hf_progress_end(&progress);
    uint32_t events;
    hf_core_events_listed(context->core, &events);
    if (code == HF_EXIT_OK)
        printf("check: %s: every invariant holds (%u events, %" PRIu64 " holds, %" PRIu64
               " orders, %" PRIu64 " refunds)\n",
               path, events, counts->holds, counts->orders, counts->refunds);
    if (context->store) hf_store_close(context->store);
    hf_core_destroy(context->core);
    hf_idempotency_free(keys);
    free(keys);
    free(context);
    return code;
}

/* The data directory's lock, taken for the check (-1: none to take); -2 after saying that a
 * server holds it. */
static int lock_take(const char *data) {
    char path[4200];
    snprintf(path, sizeof path, "%s/holdfast.lock", data);
    /* Read-only is enough for flock, and works for an operator who may read the directory
     * but not write the server's files. */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        hf_command_fail(HF_EXIT_FAILURE, "check",
                        "a server is running on %s (it holds %s): "
                        "stop it, or check a copy (holdfast backup --data %s COPY.db, then "
                        "holdfast check --store sqlite:COPY.db)",
                        data, path, data);
        return -2;
    }
    return fd;
}

int hf_command_check(int argc, char **argv) {
    hf_argument_t options[] = {{"--data", NULL, false, NULL},
                               {"--store", "HOLDFAST_STORE", false, NULL}};
    switch (hf_arguments_read("check", argc, argv, 1, options, 2, NULL, 0, NULL)) {
    case HF_ARGUMENTS_HELP: return hf_command_usage(USAGE);
    case HF_ARGUMENTS_REFUSED: return HF_EXIT_USAGE;
    case HF_ARGUMENTS_OK: break;
    }
    char path[4200];
    int code = hf_command_store_path("check", options[0].value, options[1].value, path,
                                     sizeof path);
    if (code != HF_EXIT_OK) return code;
    int lock = options[0].value ? lock_take(options[0].value) : -1;
    if (lock == -2) return HF_EXIT_FAILURE;
    struct stat seen;
    counts_t counts = {0, 0, 0};
    if (stat(path, &seen) != 0)
        code = hf_command_fail(HF_EXIT_FAILURE, "check", "no store at %s: %s", path,
                               strerror(errno));
    else if ((code = tables_check(path, &counts)) == HF_EXIT_OK) code = core_check(path, &counts);
    if (lock >= 0) close(lock);
    if (code == HF_EXIT_OK && (fflush(stdout) != 0 || ferror(stdout))) code = HF_EXIT_FAILURE;
    return code;
}
