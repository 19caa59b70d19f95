/* The SQLite store's schema (internal.h): its tables, created when missing, the version it
 * writes, and the migration of an older version's database when it is opened. */
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "store/backend.h"
#include "store/sqlite/internal.h"

/* Version 3 added events.sales_open, version 4 the tables of payments (deliveries and
 * refunds), version 5 the table history, version 6 the waiting rooms' tickets, version 7 the
 * tables of dispatch (drivers, rides), version 8 refunds.order_id (a paid order's cancel owes
 * a refund) with refunds.reservation_id nullable (a booking has no hold), version 9 the tables
 * of calendars, version 10 the links of exchanges (holds.exchange_for, orders.replaces and
 * orders.replaced_by), version 11 the tables of cancel jobs (jobs, job_offers), version 12
 * the table of allocations, version 13 both (they were built side by side: a version 12
 * database may lack the jobs' tables, which are made when missing); a version 2 to 12
 * database is migrated at open (schema_migrate). */
#define SCHEMA_VERSION HF_STORE_SQLITE_SCHEMA_VERSION

/* An event's audit history (store/history.h): one row per entry, numbered per event. Without a
 * rowid the primary key is the table itself, so appending an entry writes one b-tree, not a
 * table and an index, and a page of an event's history is one range scan of it. */
#define HISTORY_TABLE \
    "CREATE TABLE IF NOT EXISTS history(" \
    "  event_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL," \
    "  at INTEGER NOT NULL, data TEXT NOT NULL," \
    "  PRIMARY KEY(event_id, seq)) WITHOUT ROWID;"

/* Dispatch (API.md section 8): a driver's row is its soft state, written at most once a
 * second (core/dispatch/dispatch.h); a ride's row is the ride whole, its live offer included,
 * upserted at every change. declined and lapsed list the drivers never offered the ride again,
 * their ids separated by single spaces (ids have no spaces). */
#define DISPATCH_TABLES \
    "CREATE TABLE IF NOT EXISTS drivers(" \
    "  fleet_id TEXT NOT NULL, driver_id TEXT NOT NULL, lat REAL NOT NULL, lng REAL NOT NULL," \
    "  rating REAL NOT NULL, available INTEGER NOT NULL, updated_at INTEGER NOT NULL," \
    "  PRIMARY KEY(fleet_id, driver_id)) WITHOUT ROWID;" \
    "CREATE TABLE IF NOT EXISTS rides(" \
    "  seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, fleet_id TEXT NOT NULL," \
    "  rider_id TEXT NOT NULL, lat REAL NOT NULL, lng REAL NOT NULL," \
    "  radius_m INTEGER NOT NULL, offer_ttl_ms INTEGER NOT NULL, status TEXT NOT NULL," \
    "  created_at INTEGER NOT NULL, offer_driver_id TEXT, offer_distance_m INTEGER," \
    "  offer_expires_at INTEGER, driver_id TEXT, declined TEXT NOT NULL," \
    "  lapsed TEXT NOT NULL, updated_at INTEGER NOT NULL);"

/* Calendars (API.md section 12, version 9): a calendar's settings as JSON (store/rows.h), its
 * resources one row each in their order (appending resources writes only theirs), and the
 * uses of calendar holds and orders typed, one row per item, for an operator's queries (the
 * holds' and orders' own rows keep them as their items, {"uses": …}, which a load reads).
 * A use's from_step and to_step are days (night calendars) or minutes since the epoch. */
#define CALENDAR_TABLES \
    "CREATE TABLE IF NOT EXISTS calendars(" \
    "  seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, definition TEXT NOT NULL," \
    "  created_at INTEGER NOT NULL, sales_open INTEGER NOT NULL DEFAULT 1);" \
    "CREATE TABLE IF NOT EXISTS calendar_resources(" \
    "  calendar_id TEXT NOT NULL, idx INTEGER NOT NULL, id TEXT NOT NULL," \
    "  definition TEXT NOT NULL, PRIMARY KEY(calendar_id, idx)) WITHOUT ROWID;" \
    "CREATE TABLE IF NOT EXISTS calendar_uses(" \
    "  owner_id TEXT NOT NULL, calendar_id TEXT NOT NULL, resource TEXT NOT NULL," \
    "  from_step INTEGER NOT NULL, to_step INTEGER NOT NULL, quantity INTEGER NOT NULL);" \
    "CREATE INDEX IF NOT EXISTS calendar_uses_owner ON calendar_uses(owner_id);" \
    "CREATE INDEX IF NOT EXISTS calendar_uses_span ON calendar_uses(calendar_id, resource," \
    "  from_step);"

/* Allocations (API.md section 14, version 12): one row per allocation as it stands, upserted
 * at each change (its creation, a release, a released item come free), its seats and pools
 * as JSON (store/rows.h: an operator reads them with json_each). Few rows, each rewritten
 * rarely: one document is cheaper than a row per seat, which a partner's block of thousands
 * would make a write per seat. */
#define ALLOCATION_TABLES \
    "CREATE TABLE IF NOT EXISTS allocations(" \
    "  seq INTEGER PRIMARY KEY, event_id TEXT NOT NULL, id TEXT NOT NULL," \
    "  items TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL," \
    "  UNIQUE(event_id, id));"
/* Cancel jobs (API.md section 13, version 11): a job whole, its event cancelled by it (one
 * job per event), updated at each step; and what it did with each order, once per job and
 * order (the UNIQUE makes a step run twice fail rather than repeat an order). */
#define JOB_TABLES \
    "CREATE TABLE IF NOT EXISTS jobs(" \
    "  seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, event_id TEXT UNIQUE NOT NULL," \
    "  rebook_to TEXT, offer_ttl_ms INTEGER NOT NULL, orders INTEGER NOT NULL," \
    "  cursor INTEGER NOT NULL, offered INTEGER NOT NULL, accepted INTEGER NOT NULL," \
    "  refunded INTEGER NOT NULL, status TEXT NOT NULL, created_at INTEGER NOT NULL);" \
    "CREATE TABLE IF NOT EXISTS job_offers(" \
    "  seq INTEGER PRIMARY KEY, job_id TEXT NOT NULL, order_id TEXT NOT NULL," \
    "  user_id TEXT NOT NULL, reservation_id TEXT, status TEXT NOT NULL, expires_at INTEGER," \
    "  UNIQUE(job_id, order_id));"

/* Refunds: a webhook's (reservation_id as the delivery named it, order_id NULL) or a paid
 * order's cancel (order_id, and reservation_id its hold's, NULL for a booking). */
#define REFUNDS_TABLE(name) \
    "CREATE TABLE IF NOT EXISTS " name "(" \
    "  seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, payment_intent_id TEXT NOT NULL," \
    "  reservation_id TEXT, order_id TEXT, amount INTEGER NOT NULL, reason TEXT NOT NULL," \
    "  status TEXT NOT NULL, created_at INTEGER NOT NULL);"

/* 7 to 8: SQLite cannot drop a NOT NULL, so the refunds move to a table of the new shape
 * (few rows: each is money to send back), keeping their seq, hence their order. */
static const char REFUNDS_MIGRATION[] =
    REFUNDS_TABLE("refunds_8") "INSERT INTO refunds_8(seq, id, payment_intent_id, reservation_id, "
                               "amount, reason, status,"
                               "  created_at) SELECT seq, id, payment_intent_id, reservation_id, "
                               "amount, reason, status,"
                               "  created_at FROM refunds;"
                               "DROP TABLE refunds;"
                               "ALTER TABLE refunds_8 RENAME TO refunds;";

static const char SCHEMA[] =
    "BEGIN;"
    "CREATE TABLE IF NOT EXISTS meta("
    "  key TEXT PRIMARY KEY, value TEXT);"
    "CREATE TABLE IF NOT EXISTS events("
    "  seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL,"
    "  config TEXT NOT NULL, created_at INTEGER NOT NULL,"
    "  sales_open INTEGER NOT NULL DEFAULT 1);"
    "CREATE TABLE IF NOT EXISTS holds("
    "  seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, event_id TEXT NOT NULL,"
    "  user_id TEXT NOT NULL, status TEXT NOT NULL, items TEXT NOT NULL,"
    "  total INTEGER NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,"
    "  order_id TEXT, exchange_for TEXT);"
    /* The staff's listing of an event's holds is a range scan of this index, in creation
     * order (seq), from the hold it resumes after (load.c, hf_sqlite_holds_list). */
    "CREATE INDEX IF NOT EXISTS holds_event ON holds(event_id, seq);"
    "CREATE TABLE IF NOT EXISTS orders("
    "  seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, event_id TEXT NOT NULL,"
    "  user_id TEXT NOT NULL, reservation_id TEXT UNIQUE, status TEXT NOT NULL,"
    "  items TEXT NOT NULL, total INTEGER NOT NULL, currency TEXT, payment_ref TEXT,"
    "  created_at INTEGER NOT NULL, replaces TEXT, replaced_by TEXT);"
    "CREATE TABLE IF NOT EXISTS order_items("
    "  order_id TEXT NOT NULL, event_id TEXT NOT NULL, seat_id TEXT, pool_id TEXT,"
    "  quantity INTEGER NOT NULL, active INTEGER NOT NULL DEFAULT 1);"
    "CREATE INDEX IF NOT EXISTS order_items_order ON order_items(order_id);"
    "CREATE UNIQUE INDEX IF NOT EXISTS order_items_one_sale ON order_items(event_id, seat_id)"
    "  WHERE active = 1 AND seat_id IS NOT NULL;"
    "CREATE TABLE IF NOT EXISTS idempotency("
    "  key TEXT PRIMARY KEY, hash BLOB NOT NULL, status INTEGER NOT NULL, body TEXT NOT NULL,"
    "  created_at INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS idempotency_created_at ON idempotency(created_at);"
    /* Payment webhooks' deliveries, one per (payment_intent_id, type): the key of their
     * deduplication, kept 7 days (HF_WEBHOOK_DEDUP_KEEP_MS), then deleted by age. */
    "CREATE TABLE IF NOT EXISTS deliveries("
    "  seq INTEGER PRIMARY KEY, payment_intent_id TEXT NOT NULL, type TEXT NOT NULL,"
    "  event_id TEXT, reservation_id TEXT, amount INTEGER NOT NULL, result TEXT NOT NULL,"
    "  reason TEXT, late INTEGER NOT NULL, order_id TEXT, refund_id TEXT,"
    "  received_at INTEGER NOT NULL, UNIQUE(payment_intent_id, type));"
    "CREATE INDEX IF NOT EXISTS deliveries_received_at ON deliveries(received_at);" REFUNDS_TABLE(
        "refunds") HISTORY_TABLE
    /* The waiting rooms' tickets (API.md section 6), in join order (seq); line_seq is the
     * join number within the event's line. A poll writes nothing: only joins and changes of
     * status (admitted, completed, expired, abandoned) are rows' changes. */
    "CREATE TABLE IF NOT EXISTS tickets("
    "  seq INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, event_id TEXT NOT NULL,"
    "  user_id TEXT NOT NULL, line_seq INTEGER NOT NULL, status TEXT NOT NULL,"
    "  created_at INTEGER NOT NULL, admitted_at INTEGER, updated_at INTEGER NOT "
    "NULL);" DISPATCH_TABLES CALENDAR_TABLES JOB_TABLES ALLOCATION_TABLES
    /* Waitlist entries (API.md section 14), one row per entry as it stands; sequence is its
     * join number within the event, so positions load back the same. Made at every open when
     * missing: a database of an earlier version has no entry to migrate. */
    "CREATE TABLE IF NOT EXISTS waitlist("
    "  id TEXT PRIMARY KEY, event_id TEXT NOT NULL, user_id TEXT NOT NULL, section TEXT,"
    "  pool TEXT, quantity INTEGER NOT NULL, sequence INTEGER NOT NULL, status TEXT NOT NULL,"
    "  hold_id TEXT, joined_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,"
    "  UNIQUE(event_id, sequence));"
    /* Orders locked by exchange holds of other units (core/locks.h), one row per lock while
     * it lasts. Made at every open when missing: no lock existed before it. */
    "CREATE TABLE IF NOT EXISTS order_locks("
    "  order_id TEXT PRIMARY KEY, event_id TEXT NOT NULL, hold_id TEXT NOT NULL,"
    "  hold_unit TEXT NOT NULL, locked_at INTEGER NOT NULL);"
    /* A fleet's rides listed in creation order (dispatch.c, hf_sqlite_rides_list): a range
     * scan. Made at every open when missing, so it needs no version of its own. */
    "CREATE INDEX IF NOT EXISTS rides_fleet ON rides(fleet_id, seq);"
    /* Seat state is derived, not stored: writing a row per seat change cost a random page per
     * change. Seats that are neither sold nor held are available. An exchange hold's seats
     * that its old order keeps stay sold to that order while it is open (API.md section 13),
     * so they are not listed held too. Made again at every open, so a database of an earlier
     * version gets this view's latest form without a version of its own. */
    "DROP VIEW IF EXISTS seat_state;"
    "CREATE VIEW seat_state AS"
    "  SELECT event_id, seat_id, 'sold' AS status, order_id AS owner FROM order_items"
    "    WHERE active = 1 AND seat_id IS NOT NULL"
    "  UNION ALL"
    "  SELECT holds.event_id, seat.value, 'held', holds.id"
    "    FROM holds, json_each(holds.items, '$.seats') AS seat WHERE holds.status = 'held'"
    "    AND NOT EXISTS (SELECT 1 FROM order_items AS kept WHERE kept.order_id ="
    "      holds.exchange_for AND kept.event_id = holds.event_id AND kept.seat_id = seat.value"
    "      AND kept.active = 1);"
    "INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', '" SCHEMA_VERSION "');"
    "COMMIT;";

/* Version 2 to 3: events gain sales_open (every event open, as version 2 knew no closing).
 * 3 to 4: the tables of payments, which SCHEMA's CREATE TABLE IF NOT EXISTS has just made
 * (empty: no delivery came before them). 4 to 5: the table history, empty: the history of an
 * existing event starts with its first change after the migration. 5 to 6: the table
 * tickets, empty (SCHEMA made it: no event had a room before). In one transaction with
 * the new version, so a crash leaves either version whole. What is made is made only when
 * missing: the SCHEMA above already made it for a new database (and the tables for an old
 * one). */
/* Adds a nullable text column to a table of an older version when it has none. */
static int column_add(sqlite3 *database, const char *table, const char *column) {
    char query[160], word[32];
    snprintf(query, sizeof query, "SELECT count(*) FROM pragma_table_info('%s') WHERE name = '%s'",
             table, column);
    int rc = hf_sqlite_word_query(database, query, word, sizeof word);
    if (rc != SQLITE_OK || strcmp(word, "0") != 0) return rc;
    snprintf(query, sizeof query, "ALTER TABLE %s ADD COLUMN %s TEXT", table, column);
    return sqlite3_exec(database, query, NULL, NULL, NULL);
}

static int schema_migrate(sqlite3 *database, const char *version) {
    char word[32] = "1";
    int rc = sqlite3_exec(database, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc == SQLITE_OK && strcmp(version, "2") == 0)
        rc = hf_sqlite_word_query(database,
                                  "SELECT count(*) FROM pragma_table_info('events')"
                                  " WHERE name = 'sales_open'",
                                  word, sizeof word);
    if (rc == SQLITE_OK && strcmp(word, "0") == 0)
        rc = sqlite3_exec(database,
                          "ALTER TABLE events ADD COLUMN sales_open INTEGER NOT NULL DEFAULT 1",
                          NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(database, HISTORY_TABLE, NULL, NULL, NULL);
    /* 5 or 6 to 7: the tables of dispatch, empty. */
    if (rc == SQLITE_OK) rc = sqlite3_exec(database, DISPATCH_TABLES, NULL, NULL, NULL);
    /* 8 to 9: the tables of calendars, empty. */
    if (rc == SQLITE_OK) rc = sqlite3_exec(database, CALENDAR_TABLES, NULL, NULL, NULL);
    /* 7 to 8 (a version 3 database has just had its refunds made by SCHEMA, in the new shape). */
    snprintf(word, sizeof word, "1");
    if (rc == SQLITE_OK)
        rc = hf_sqlite_word_query(database,
                                  "SELECT count(*) FROM pragma_table_info('refunds')"
                                  " WHERE name = 'order_id'",
                                  word, sizeof word);
    if (rc == SQLITE_OK && strcmp(word, "0") == 0)
        rc = sqlite3_exec(database, REFUNDS_MIGRATION, NULL, NULL, NULL);
    /* 9 to 10: the links of exchanges, NULL in every row made before (no exchange was). */
    if (rc == SQLITE_OK) rc = column_add(database, "holds", "exchange_for");
    if (rc == SQLITE_OK) rc = column_add(database, "orders", "replaces");
    if (rc == SQLITE_OK) rc = column_add(database, "orders", "replaced_by");
    /* 10 to 11: the tables of cancel jobs, empty (no event was cancelled before). */
    if (rc == SQLITE_OK) rc = sqlite3_exec(database, JOB_TABLES, NULL, NULL, NULL);
    /* 11 to 12: the table of allocations, empty (SCHEMA made it when missing). 12 to 13 made
     * nothing new: the two were built side by side, and 13 is a database with both. */
    if (rc == SQLITE_OK) rc = sqlite3_exec(database, ALLOCATION_TABLES, NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(database,
                          "UPDATE meta SET value = '" SCHEMA_VERSION "'"
                          " WHERE key = 'schema_version'",
                          NULL, NULL, NULL);
    if (rc == SQLITE_OK) return sqlite3_exec(database, "COMMIT", NULL, NULL, NULL);
    if (!sqlite3_get_autocommit(database)) sqlite3_exec(database, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* The notifications' delivery state (engine/outbox.h): columns of the history, since the
 * history is the outbox, and a partial index of the pending entries the notifier reads. Added
 * at every open when missing, in one transaction, so it needs no version of its own; entries
 * made before are pending: the platform has not heard of them either. */
static const char OUTBOX_COLUMNS[] =
    "BEGIN IMMEDIATE;"
    "ALTER TABLE history ADD COLUMN notify_status INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE history ADD COLUMN notify_attempts INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE history ADD COLUMN notify_last_status INTEGER;"
    "ALTER TABLE history ADD COLUMN notify_last_error TEXT;"
    "ALTER TABLE history ADD COLUMN notify_next_at INTEGER NOT NULL DEFAULT 0;"
    "CREATE INDEX history_pending ON history(event_id, seq) WHERE notify_status = 0;"
    "COMMIT;";

static int outbox_columns_add(sqlite3 *database) {
    char word[32];
    int rc = hf_sqlite_word_query(database,
                                  "SELECT count(*) FROM pragma_table_info('history')"
                                  " WHERE name = 'notify_status'",
                                  word, sizeof word);
    if (rc != SQLITE_OK || strcmp(word, "0") != 0) return rc;
    rc = sqlite3_exec(database, OUTBOX_COLUMNS, NULL, NULL, NULL);
    if (rc != SQLITE_OK && !sqlite3_get_autocommit(database))
        sqlite3_exec(database, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int hf_sqlite_schema_open(sqlite3 *database, const char *path, char *error, size_t error_size) {
    char word[32];
    if (sqlite3_exec(database, SCHEMA, NULL, NULL, NULL) != SQLITE_OK) goto fail;
    if (hf_sqlite_word_query(database, "SELECT value FROM meta WHERE key = 'schema_version'", word,
                             sizeof word) != SQLITE_OK)
        goto fail;
    if (strcmp(word, "2") == 0 || strcmp(word, "3") == 0 || strcmp(word, "4") == 0 ||
        strcmp(word, "5") == 0 || strcmp(word, "6") == 0 || strcmp(word, "7") == 0 ||
        strcmp(word, "8") == 0 || strcmp(word, "9") == 0 || strcmp(word, "10") == 0 ||
        strcmp(word, "11") == 0 || strcmp(word, "12") == 0) {
        if (schema_migrate(database, word) != SQLITE_OK) goto fail;
        snprintf(word, sizeof word, "%s", SCHEMA_VERSION);
    }
    if (strcmp(word, SCHEMA_VERSION) == 0 && outbox_columns_add(database) != SQLITE_OK) goto fail;
    if (strcmp(word, SCHEMA_VERSION) != 0) {
        hf_store_error_write(
            error, error_size,
            "store: %s has schema version \"%s\", this server knows version " SCHEMA_VERSION, path,
            word);
        return -1;
    }
    return 0;
fail:
    hf_store_error_write(error, error_size, "store: cannot set up %s: %s", path,
                         sqlite3_errmsg(database));
    return -1;
}
