/* Regression test for a defect in src/engine/idempotency.c (reported to the lead, issue 4):
 * forget_expired() rebuilds the key table by walking the hash map's slots, so the surviving
 * entries come back in hash order, not in time order. The function relies on "entries arrive
 * in time order, so the expired ones are a prefix": after a rebuild an expired key can sit
 * behind a live one and is then kept until that live one expires too, so keys live up to
 * about 48 hours instead of 24 and the table is larger than "the keys of the last 24 hours".
 *
 * Checks that after a rebuild the entries are still in created_at order, and that a key older
 * than 24 hours is forgotten at the next rebuild. Prints `N passed, N failed`; exit 1 on failure.
 * Build and run: make idempotency-order-test (mk/reliability.mk). */
#include <stdio.h>
#include <string.h>

#include "engine/idempotency.h"

#define MINUTE_MS (60LL * 1000)

static int passed, failed;

static void check(int condition, const char *what) {
    if (condition) {
        passed++;
        printf("ok %s\n", what);
    } else {
        failed++;
        printf("FAIL %s\n", what);
    }
}

static void put(hf_idempotency_t *table, int number, int64_t at_ms) {
    char scope[64];
    uint8_t hash[32] = {0};
    int length = snprintf(scope, sizeof scope, "POST /v1/events\nkey-%d", number);
    hf_idempotency_put(table, scope, (size_t)length, hash, 201, "{}", 2, at_ms);
}

int main(void) {
    hf_idempotency_t table;
    hf_idempotency_init(&table);
    /* 600 keys, one a minute for 10 hours. */
    for (int i = 0; i < 600; i++) put(&table, i, i * MINUTE_MS);
    /* 24 h + 7 h later: keys 0..419 have expired (more than half): the table is rebuilt. */
    int64_t later = HF_IDEMPOTENCY_KEEP_MS + 420 * MINUTE_MS;
    put(&table, 10000, later);
    check(table.count < 600, "a rebuild dropped the expired keys");
    int ordered = 1;
    for (uint32_t i = 1; i < table.count; i++)
        if (table.entries[i].created_at_ms < table.entries[i - 1].created_at_ms) ordered = 0;
    check(ordered, "entries stay in created_at order after a rebuild (expired keys are a prefix)");
    /* Keys 420..599 expire over the next hours while new keys arrive: the table must never
     * hold more expired keys than live ones (the design's bound: a rebuild once half expire). */
    int64_t at = later;
    uint32_t worst_expired = 0, worst_count = 0;
    for (int i = 0; i < 400; i++) {
        at += MINUTE_MS;
        put(&table, 20000 + i, at);
        uint32_t expired = 0;
        for (uint32_t j = 0; j < table.count; j++)
            if (table.entries[j].created_at_ms < at - HF_IDEMPOTENCY_KEEP_MS) expired++;
        if (expired * 2 > table.count && expired > worst_expired) {
            worst_expired = expired;
            worst_count = table.count;
        }
    }
    char what[160];
    snprintf(what, sizeof what, "expired keys never outnumber live ones (worst: %u of %u)",
             worst_expired, worst_count);
    check(worst_expired == 0, what);
    hf_idempotency_free(&table);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
