/* Unit tests of a stream's ids and replay window (src/engine/replay.h): ids parsed strictly,
 * new epochs always after the old ones and never past int64, a counter that starts a new
 * epoch rather than wrap; the window against a plain list of every change appended: what it
 * covers and what it gives back after it wrapped many times, old ids ignored, a new epoch
 * emptying it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "engine/replay.h"

#define COUNTER (UINT64_C(1) << HF_STREAM_ID_COUNTER_BITS)
/* 2026-11-26 in ms: a realistic time for an epoch. */
#define NOW_MS INT64_C(1795651200000)

static bool parse(const char *text, uint64_t *id) {
    return hf_replay_id_parse(text, strlen(text), id);
}

static void test_id_parse(void **state) {
    (void)state;
    uint64_t id = 7;
    assert_true(parse("0", &id));
    assert_int_equal(id, 0);
    assert_true(parse("1882835035079475201", &id));
    assert_int_equal(id, UINT64_C(1882835035079475201));
    assert_true(parse("9223372036854775807", &id));
    assert_int_equal(id, (uint64_t)INT64_MAX);
    const char *refused[] = {"",
                             "-1",
                             "+1",
                             " 1",
                             "1 ",
                             "1.0",
                             "1e3",
                             "0x10",
                             "abc",
                             "12a",
                             "9223372036854775808",
                             "18446744073709551615",
                             "18446744073709551616",
                             "99999999999999999999999"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        id = 7;
        assert_false(parse(refused[i], &id));
        assert_int_equal(id, 7); /* untouched */
    }
    /* The length given is what counts, not a terminator. */
    assert_true(hf_replay_id_parse("123456", 3, &id));
    assert_int_equal(id, 123);
}

static void test_id_epochs(void **state) {
    (void)state;
    /* The first epoch is the time of the moment, its position has no changes counted. */
    uint64_t first = hf_replay_id_rebase(0, NOW_MS);
    assert_int_equal(first, (uint64_t)NOW_MS << HF_STREAM_ID_COUNTER_BITS);
    assert_true(first < (uint64_t)INT64_MAX);
    /* A later time starts there; the same or an earlier time (a clock stepped back) starts
     * just after the last epoch, so ids never go back. */
    assert_int_equal(hf_replay_id_rebase(first + 5, NOW_MS + 10), (uint64_t)(NOW_MS + 10)
                                                                      << HF_STREAM_ID_COUNTER_BITS);
    assert_int_equal(hf_replay_id_rebase(first + 5, NOW_MS), (uint64_t)(NOW_MS + 1)
                                                                 << HF_STREAM_ID_COUNTER_BITS);
    assert_int_equal(hf_replay_id_rebase(first + 5, NOW_MS - 1000),
                     (uint64_t)(NOW_MS + 1) << HF_STREAM_ID_COUNTER_BITS);
    /* The next id counts; at the counter's last value a new epoch starts instead. */
    assert_int_equal(hf_replay_id_next(first, NOW_MS), first + 1);
    uint64_t full = first + COUNTER - 1;
    uint64_t after = hf_replay_id_next(full, NOW_MS);
    assert_true(after > full);
    assert_int_equal(after, ((uint64_t)(NOW_MS + 1) << HF_STREAM_ID_COUNTER_BITS) + 1);
    assert_int_equal(hf_replay_id_next(full, NOW_MS + 60000),
                     ((uint64_t)(NOW_MS + 60000) << HF_STREAM_ID_COUNTER_BITS) + 1);
    /* Three million changes in one ms: ids keep growing, one by one within an epoch, and an
     * epoch numbers 2^20 - 1 changes (its position 0 is its start). */
    uint64_t id = first;
    for (uint32_t i = 0; i < 3 * COUNTER; i++) {
        uint64_t next = hf_replay_id_next(id, NOW_MS);
        assert_true(next > id);
        assert_true(next == id + 1 || (next & (COUNTER - 1)) == 1);
        id = next;
    }
    assert_int_equal(id >> HF_STREAM_ID_COUNTER_BITS, NOW_MS + 3);
    assert_int_equal(id & (COUNTER - 1), 3);
}

static hf_replay_change_t change_of(uint64_t id) {
    return (hf_replay_change_t){(uint32_t)(id % 4000000), (uint32_t)(id * 7), (uint32_t)(id % 3),
                                (int32_t)(id % 5) - 2};
}

static void check_change(const hf_replay_ring_t *ring, uint64_t id) {
    hf_replay_change_t want = change_of(id);
    const hf_replay_change_t *got = hf_replay_ring_at(ring, id);
    assert_int_equal(got->target, want.target);
    assert_int_equal(got->value, want.value);
    assert_int_equal(got->other, want.other);
    assert_int_equal(got->delta, want.delta);
}

static void test_window_fills_and_wraps(void **state) {
    (void)state;
    uint64_t start = hf_replay_id_rebase(0, NOW_MS);
    hf_replay_ring_t ring;
    hf_replay_ring_init(&ring, start);
    assert_int_equal(hf_replay_ring_last(&ring), start);
    assert_true(hf_replay_ring_covers(&ring, start));
    assert_false(hf_replay_ring_covers(&ring, start - 1));
    assert_false(hf_replay_ring_covers(&ring, start + 1));
    uint64_t id = start;
    for (uint32_t round = 0; round < 3 * HF_STREAM_REPLAY_CHANGES_MAX + 17; round++) {
        id++;
        hf_replay_change_t change = change_of(id);
        hf_replay_ring_append(&ring, id, &change);
        uint64_t kept = id - start < HF_STREAM_REPLAY_CHANGES_MAX ? id - start
                                                                  : HF_STREAM_REPLAY_CHANGES_MAX;
        uint64_t oldest_position = id - kept;
        assert_int_equal(hf_replay_ring_last(&ring), id);
        assert_true(hf_replay_ring_covers(&ring, oldest_position));
        assert_true(hf_replay_ring_covers(&ring, id));
        assert_false(hf_replay_ring_covers(&ring, id + 1));
        if (oldest_position > start)
            assert_false(hf_replay_ring_covers(&ring, oldest_position - 1));
        if (round % 4999 == 0 || round > 3 * HF_STREAM_REPLAY_CHANGES_MAX)
            for (uint64_t at = oldest_position + 1; at <= id; at++) check_change(&ring, at);
    }
    /* An id already kept, or older, changes nothing. */
    hf_replay_change_t stale = {1, 2, 3, 4};
    hf_replay_ring_append(&ring, id, &stale);
    hf_replay_ring_append(&ring, id - 20000, &stale);
    assert_int_equal(hf_replay_ring_last(&ring), id);
    check_change(&ring, id);
    check_change(&ring, id - HF_STREAM_REPLAY_CHANGES_MAX + 1);
    hf_replay_ring_free(&ring);
}

static void test_window_new_epoch(void **state) {
    (void)state;
    uint64_t start = hf_replay_id_rebase(0, NOW_MS);
    hf_replay_ring_t ring;
    hf_replay_ring_init(&ring, start);
    uint64_t id = start;
    for (int i = 0; i < 50; i++) {
        id++;
        hf_replay_change_t change = change_of(id);
        hf_replay_ring_append(&ring, id, &change);
    }
    /* A change of a new epoch: nothing before it can be resumed from any more, except the
     * epoch's own start. */
    uint64_t next = hf_replay_id_rebase(id, NOW_MS + 3) + 1;
    hf_replay_change_t change = change_of(next);
    hf_replay_ring_append(&ring, next, &change);
    assert_int_equal(hf_replay_ring_last(&ring), next);
    assert_true(hf_replay_ring_covers(&ring, next - 1));
    assert_false(hf_replay_ring_covers(&ring, id));
    assert_false(hf_replay_ring_covers(&ring, start + 10));
    check_change(&ring, next);
    /* A window made anew starts where it is told and ignores what came before. */
    hf_replay_ring_reset(&ring, next + 100);
    hf_replay_ring_append(&ring, next + 1, &change);
    assert_int_equal(hf_replay_ring_last(&ring), next + 100);
    assert_true(hf_replay_ring_covers(&ring, next + 100));
    assert_false(hf_replay_ring_covers(&ring, next + 99));
    hf_replay_ring_free(&ring);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_id_parse),
        cmocka_unit_test(test_id_epochs),
        cmocka_unit_test(test_window_fills_and_wraps),
        cmocka_unit_test(test_window_new_epoch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
