/* Unit tests of the core (src/core/core.h), restore.c and the forgetting of finished holds (hf_core_evict): holds forgotten and
 * taken back, a core restored from the records of another. Each asserts the resulting values and the
 * mutation records emitted (an error emits none); the fixture is core_cases.h. */
#include "core_cases.h"

/* ---- forgetting finished holds (hf_core_evict) and taking them back ---- */

/* Holds res_e1..res_eN of one seat each (S-A-1...) on "open", each released at once; returns
 * the change count after each release in changes[]. */
static void release_in_turn(fixture_t *f, uint32_t count, uint64_t *changes, uint32_t *indexes) {
    for (uint32_t i = 0; i < count; i++) {
        char hold_id[16], seat_id[16];
        snprintf(hold_id, sizeof hold_id, "res_e%u", i + 1);
        snprintf(seat_id, sizeof seat_id, "S-A-%u", i + 1);
        const char *seats[] = {seat_id};
        assert_int_equal(hold_on(f, "open", "u1", hold_id, seats, 1, NULL, 0, -1, false, T0 + i,
                                 &indexes[i], NULL),
                         HF_OK);
        assert_int_equal(hf_core_release(f->core, hold_id, "u1", T0 + i), HF_OK);
        changes[i] = hf_core_change_count(f->core);
    }
}

/* The same with no finished hold kept: each is forgotten once all is durable. */
static void forget_in_turn(fixture_t *f, uint32_t count, uint32_t *indexes) {
    uint64_t changes[8];
    assert_true(count <= 8);
    hf_core_set_finished_max(f->core, 0);
    release_in_turn(f, count, changes, indexes);
    assert_int_equal(hf_core_evict(f->core, UINT64_MAX), count);
}

static void test_evict_oldest_beyond_max(void **state) {
    fixture_t *f = *state;
    uint64_t changes[4];
    uint32_t indexes[4];
    hf_core_set_finished_max(f->core, 2);
    release_in_turn(f, 4, changes, indexes);
    assert_int_equal(hf_core_holds_finished(f->core), 4);
    /* Nothing is durable yet: nothing may be forgotten. */
    assert_int_equal(hf_core_evict(f->core, 0), 0);
    /* Only the first release is durable: only it may go, although two are too many. */
    assert_int_equal(hf_core_evict(f->core, changes[0]), 1);
    assert_null(hf_core_hold_find(f->core, "res_e1", NULL));
    assert_null(hf_core_hold_at(f->core, indexes[0]));
    assert_non_null(hf_core_hold_find(f->core, "res_e2", NULL));
    /* Everything durable: the oldest beyond two go, the two newest stay. */
    assert_int_equal(hf_core_evict(f->core, UINT64_MAX), 1);
    assert_null(hf_core_hold_find(f->core, "res_e2", NULL));
    assert_int_equal(hold_by_id(f, "res_e3")->status, HF_HOLD_RELEASED);
    assert_int_equal(hold_by_id(f, "res_e4")->status, HF_HOLD_RELEASED);
    assert_int_equal(hf_core_holds_finished(f->core), 2);
    assert_int_equal(hf_core_evict(f->core, UINT64_MAX), 0);
    /* Forgetting changes no seat: versions stay as the hold and release left them. */
    assert_int_equal(seat_on(f, "open", "S-A-1")->version, 3);
    assert_int_equal(seat_on(f, "open", "S-A-1")->status, HF_SEAT_AVAILABLE);
    assert_consistent(f, T0 + 10);
}

static void test_evict_keeps_held_and_confirmed(void **state) {
    fixture_t *f = *state;
    uint32_t held_index, confirmed_index, expired_index;
    hf_core_set_finished_max(f->core, 0);
    assert_int_equal(hold_on(f, "open", "u1", "res_held", SEATS("S-A-1"), NULL, 0, -1, false, T0,
                             &held_index, NULL),
                     HF_OK);
    assert_int_equal(hold_on(f, "open", "u2", "res_sold", SEATS("S-A-2"), NULL, 0, -1, false, T0,
                             &confirmed_index, NULL),
                     HF_OK);
    uint32_t order = commit(f, "res_sold", "u2", "ord_1", T0 + 1);
    assert_int_equal(hold_on(f, "open", "u3", "res_lapse", SEATS("S-A-3"), NULL, 0, 1000, false, T0,
                             &expired_index, NULL),
                     HF_OK);
    /* Expired by the clock: it joins the finished holds like a release. */
    assert_int_equal(hf_core_advance(f->core, T0 + 1000), 1);
    assert_int_equal(hf_core_holds_finished(f->core), 1);
    assert_int_equal(hf_core_evict(f->core, UINT64_MAX), 1);
    assert_null(hf_core_hold_find(f->core, "res_lapse", NULL));
    assert_int_equal(hold_by_id(f, "res_held")->status, HF_HOLD_HELD);
    assert_int_equal(hold_by_id(f, "res_sold")->status, HF_HOLD_CONFIRMED);
    const hf_order_t *o = hf_core_order_at(f->core, order);
    assert_int_equal(o->hold, confirmed_index + 1);
    /* A repeated commit still answers its order. */
    uint32_t again = UINT32_MAX;
    assert_int_equal(hf_core_commit(f->core, "res_sold", "u2", "ord_2", "pi_1", T0 + 1000, &again),
                     HF_OK);
    assert_int_equal(again, order);
    assert_consistent(f, T0 + 1000);
}

static void test_evict_slot_reuse(void **state) {
    fixture_t *f = *state;
    uint32_t indexes[2];
    forget_in_turn(f, 2, indexes);
    /* A one-seat hold fits in a forgotten one-seat slot: the newest forgotten slot first. */
    uint32_t index;
    assert_int_equal(hold_on(f, "open", "u2", "res_new", SEATS("S-B-1"), NULL, 0, -1, false,
                             T0 + 10, &index, NULL),
                     HF_OK);
    assert_int_equal(index, indexes[1]);
    assert_null(hf_core_hold_find(f->core, "res_e2", NULL));
    const hf_hold_t *h = hold_by_id(f, "res_new");
    assert_int_equal(h->seat_count, 1);
    assert_int_equal(hf_core_items(f->core, h->item_offset)[0].index,
                     seat_on(f, "open", "S-B-1") - event_of(f, "open")->seats);
    /* Three seats and a pool line do not fit in the other one-seat slot: it gets new items. */
    assert_int_equal(hold_on(f, "open", "u2", "res_big", SEATS("S-B-2", "S-B-3", "S-B-4"),
                             POOLS({"P", 2}), -1, false, T0 + 11, &index, NULL),
                     HF_OK);
    assert_int_equal(index, indexes[0]);
    h = hold_by_id(f, "res_big");
    assert_int_equal(h->seat_count, 3);
    assert_int_equal(h->pool_count, 1);
    const hf_item_t *items = hf_core_items(f->core, h->item_offset);
    assert_int_equal(items[3].quantity, 2);
    assert_int_equal(h->total, 3 * 100 + 2 * 10);
    /* The first hold's items were not overwritten by the second's. */
    const hf_hold_t *small = hold_by_id(f, "res_new");
    assert_int_equal(hf_core_items(f->core, small->item_offset)[0].index,
                     seat_on(f, "open", "S-B-1") - event_of(f, "open")->seats);
    assert_consistent(f, T0 + 11);
}

/* An extension leaves a stale entry in the expiry heap; the hold is then released, forgotten
 * and its slot reused by a hold that expires later. The stale entry must not expire it. */
static void test_evict_stale_expiry_entry(void **state) {
    fixture_t *f = *state;
    uint32_t first, second;
    hf_core_set_finished_max(f->core, 0);
    assert_int_equal(
        hold_on(f, "open", "u1", "res_a", SEATS("S-A-1"), NULL, 0, 1000, false, T0, &first, NULL),
        HF_OK);
    bool capped;
    assert_int_equal(hf_core_extend(f->core, "res_a", "u1", 5000, T0, &capped), HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_a", "u1", T0 + 1), HF_OK);
    assert_int_equal(hf_core_evict(f->core, UINT64_MAX), 1);
    assert_int_equal(hold_on(f, "open", "u2", "res_b", SEATS("S-A-2"), NULL, 0, 9000, false, T0 + 2,
                             &second, NULL),
                     HF_OK);
    assert_int_equal(second, first);
    assert_int_equal(hf_core_advance(f->core, T0 + 5000), 0);
    assert_int_equal(hold_by_id(f, "res_b")->status, HF_HOLD_HELD);
    assert_int_equal(hf_core_next_expiry(f->core), T0 + 9002);
    assert_int_equal(hf_core_advance(f->core, T0 + 9002), 1);
    assert_int_equal(hold_by_id(f, "res_b")->status, HF_HOLD_EXPIRED);
    assert_consistent(f, T0 + 9002);
}

static void test_revive(void **state) {
    fixture_t *f = *state;
    uint32_t indexes[1];
    forget_in_turn(f, 1, indexes);
    hf_counts_t counts = event_of(f, "open")->counts;
    uint32_t version = seat_on(f, "open", "S-A-1")->version;
    fx_sink_reset(&f->sink);
    const char *seats[] = {"S-A-1"};
    hf_stored_hold_t stored = {.request = {.event_id = "open",
                                           .user_id = "u1",
                                           .hold_id = "res_e1",
                                           .seat_ids = seats,
                                           .seat_count = 1},
                               .status = HF_HOLD_RELEASED,
                               .created_at_ms = T0,
                               .expires_at_ms = T0 + TTL,
                               .total = 100};
    /* Only a finished hold can come back, and only one the core does not know. */
    uint32_t index = UINT32_MAX;
    stored.status = HF_HOLD_HELD;
    assert_int_equal(hf_core_revive_hold(f->core, &stored, &index), HF_ERROR_INVALID_REQUEST);
    stored.status = HF_HOLD_CONFIRMED;
    assert_int_equal(hf_core_revive_hold(f->core, &stored, &index), HF_ERROR_INVALID_REQUEST);
    stored.status = HF_HOLD_RELEASED;
    assert_int_equal(hf_core_revive_hold(f->core, &stored, &index), HF_OK);
    assert_int_equal(hf_core_revive_hold(f->core, &stored, &index), HF_ERROR_INVALID_REQUEST);
    const hf_hold_t *h = hold_by_id(f, "res_e1");
    assert_int_equal(h->status, HF_HOLD_RELEASED);
    assert_int_equal(h->created_at_ms, T0);
    assert_int_equal(h->expires_at_ms, T0 + TTL);
    assert_int_equal(h->total, 100);
    assert_string_equal(hf_core_user_id(f->core, h->user), "u1");
    /* Nothing else moved, and nothing was emitted. */
    assert_no_mutation(f);
    assert_int_equal(seat_on(f, "open", "S-A-1")->version, version);
    assert_memory_equal(&event_of(f, "open")->counts, &counts, sizeof counts);
    /* A release answers as before; it is kept as the newest finished hold, then forgotten
     * again like any other. */
    assert_int_equal(hf_core_release(f->core, "res_e1", "u1", T0 + 5), HF_OK);
    assert_no_mutation(f);
    assert_int_equal(hf_core_holds_finished(f->core), 1);
    assert_int_equal(hf_core_evict(f->core, 0), 1);
    assert_null(hf_core_hold_find(f->core, "res_e1", NULL));
    assert_consistent(f, T0 + 5);
}

/* A finished hold the restore does not keep: only its seats' versions count. */
static void test_restore_forgotten_hold(void **state) {
    fixture_t *f = *state;
    const char *seats[] = {"S-A-1", "S-A-2"};
    hf_stored_hold_t stored = {.request = {.event_id = "open",
                                           .user_id = "u1",
                                           .hold_id = "res_old",
                                           .seat_ids = seats,
                                           .seat_count = 2},
                               .status = HF_HOLD_HELD,
                               .created_at_ms = T0,
                               .expires_at_ms = T0 + TTL,
                               .total = 200};
    assert_int_equal(hf_core_restore_forgotten_hold(f->core, &stored), HF_ERROR_INVALID_REQUEST);
    stored.status = HF_HOLD_CONFIRMED;
    assert_int_equal(hf_core_restore_forgotten_hold(f->core, &stored), HF_ERROR_INVALID_REQUEST);
    stored.status = HF_HOLD_EXPIRED;
    assert_int_equal(hf_core_restore_forgotten_hold(f->core, &stored), HF_OK);
    stored.status = HF_HOLD_RELEASED;
    stored.request.hold_id = "res_older";
    assert_int_equal(hf_core_restore_forgotten_hold(f->core, &stored), HF_OK);
    assert_int_equal(seat_on(f, "open", "S-A-1")->version, 5);
    assert_int_equal(seat_on(f, "open", "S-A-2")->version, 5);
    assert_int_equal(seat_on(f, "open", "S-A-3")->version, 1);
    assert_int_equal(seat_on(f, "open", "S-A-1")->status, HF_SEAT_AVAILABLE);
    assert_null(hf_core_hold_find(f->core, "res_old", NULL));
    assert_int_equal(hf_core_holds_finished(f->core), 0);
    assert_counts(event_of(f, "open")->counts, 40, 0, 0);
    /* Unknown seats are a corrupt store, as for a kept hold. */
    const char *unknown[] = {"S-Z-1"};
    stored.request.seat_ids = unknown;
    stored.request.seat_count = 1;
    assert_int_equal(hf_core_restore_forgotten_hold(f->core, &stored), HF_ERROR_SEAT_NOT_FOUND);
    assert_no_mutation(f);
    assert_consistent(f, T0);
}

/* ---- restore ---- */

typedef struct snapshot_hold {
    char id[HF_SERVER_ID_SIZE + 1];
    char event[HF_ID_SIZE_MAX + 1];
    char user[HF_USER_ID_SIZE_MAX + 1];
    char seat_ids[16][HF_SEAT_ID_SIZE_MAX + 1];
    const char *seat_pointers[16];
    char pool_ids[4][HF_ID_SIZE_MAX + 1];
    hf_pool_request_t pools[4];
    uint32_t seat_count, pool_count;
    uint8_t status;
    hf_time_ms_t created, expires;
    int64_t total;
} snapshot_hold_t;

/* Copies a hold's or order's items out of a core, as the store would have kept them. */
static void snapshot_items(const hf_core_t *core, const hf_event_t *event, uint32_t offset,
                           uint32_t seat_count, uint32_t pool_count, snapshot_hold_t *out) {
    const hf_item_t *items = hf_core_items(core, offset);
    assert_true(seat_count <= 16 && pool_count <= 4);
    out->seat_count = seat_count;
    out->pool_count = pool_count;
    for (uint32_t i = 0; i < seat_count; i++) {
        assert_int_equal(items[i].quantity, 0);
        hf_core_seat_id(event, items[i].index, out->seat_ids[i]);
        out->seat_pointers[i] = out->seat_ids[i];
    }
    for (uint32_t i = 0; i < pool_count; i++) {
        const hf_item_t *item = &items[seat_count + i];
        snprintf(out->pool_ids[i], sizeof out->pool_ids[i], "%s", event->pools[item->index].id);
        out->pools[i].pool_id = out->pool_ids[i];
        out->pools[i].quantity = item->quantity;
    }
}

static void build_restore_source(fixture_t *f, hf_time_ms_t *end) {
    hf_error_detail_t detail;
    bool capped;
    /* held, released, expired, confirmed, confirmed then cancelled, replaced, extended. */
    assert_int_equal(hold(f, "u1", "res_held", SEATS("FLOOR-A-1", "FLOOR-A-2"), POOLS({"GA", 2}),
                          -1, false, T0, NULL, &detail),
                     HF_OK);
    assert_int_equal(hold(f, "u2", "res_rel", SEATS("FLOOR-A-3"), POOLS({"VIP", 1}), -1, false, T0,
                          NULL, &detail),
                     HF_OK);
    assert_int_equal(hf_core_release(f->core, "res_rel", "u2", T0 + 1), HF_OK);
    assert_int_equal(
        hold(f, "u3", "res_exp", SEATS("FLOOR-A-4"), NO_POOLS, 1000, false, T0, NULL, &detail),
        HF_OK);
    assert_int_equal(hold(f, "u4", "res_sold", SEATS("BALC-A-1", "BALC-A-2"), POOLS({"GA", 1}), -1,
                          false, T0 + 2, NULL, &detail),
                     HF_OK);
    commit(f, "res_sold", "u4", "ord_sold", T0 + 3);
    assert_int_equal(hold(f, "u5", "res_canc", SEATS("BALC-A-3"), POOLS({"VIP", 1}), -1, false,
                          T0 + 4, NULL, &detail),
                     HF_OK);
    commit(f, "res_canc", "u5", "ord_canc", T0 + 5);
    assert_int_equal(hf_core_cancel(f->core, "ord_canc", "u5", "ref_2328", T0 + 6), HF_OK);
    assert_int_equal(
        hold(f, "u6", "res_old", SEATS("FLOOR-B-1"), NO_POOLS, -1, false, T0 + 7, NULL, &detail),
        HF_OK);
    assert_int_equal(hold(f, "u6", "res_new", SEATS("FLOOR-B-1", "FLOOR-B-2"), NO_POOLS, -1, true,
                          T0 + 8, NULL, &detail),
                     HF_OK);
    assert_int_equal(hf_core_extend(f->core, "res_new", "u6", 900000, T0 + 9, &capped), HF_OK);
    assert_int_equal(hold_on(f, "open", "u1", "res_open", SEATS("S-B-20"), POOLS({"P", 5}), -1,
                             false, T0 + 10, NULL, &detail),
                     HF_OK);
    commit(f, "res_open", "u1", "ord_open", T0 + 11);
    assert_int_equal(hf_core_advance(f->core, T0 + 2000), 1); /* res_exp */
    *end = T0 + 2000;
}

static void compare_cores(const hf_core_t *a, const hf_core_t *b, hf_time_ms_t now,
                          uint32_t hold_count, uint32_t order_count) {
    assert_int_equal(hf_core_event_count(a), hf_core_event_count(b));
    for (uint32_t e = 0; e < hf_core_event_count(a); e++) {
        const hf_event_t *x = hf_core_event_at(a, e), *y = hf_core_event_at(b, e);
        assert_string_equal(x->id, y->id);
        assert_int_equal(x->created_at_ms, y->created_at_ms);
        assert_int_equal(x->seat_count, y->seat_count);
        assert_counts(y->counts, x->counts.available, x->counts.held, x->counts.sold);
        for (uint32_t s = 0; s < x->section_count; s++)
            assert_counts(y->sections[s].counts, x->sections[s].counts.available,
                          x->sections[s].counts.held, x->sections[s].counts.sold);
        for (uint32_t s = 0; s < x->seat_count; s++) {
            if (x->seats[s].status != y->seats[s].status ||
                x->seats[s].version != y->seats[s].version) {
                char id[HF_SEAT_ID_SIZE_MAX + 1];
                hf_core_seat_id(x, s, id);
                fail_msg("seat %s/%s: status %d version %u, restored %d version %u", x->id, id,
                         x->seats[s].status, x->seats[s].version, y->seats[s].status,
                         y->seats[s].version);
            }
        }
        for (uint32_t p = 0; p < x->pool_count; p++) {
            assert_int_equal(x->pools[p].held, y->pools[p].held);
            assert_int_equal(x->pools[p].sold, y->pools[p].sold);
        }
    }
    assert_int_equal(hf_core_holds_active(a), hf_core_holds_active(b));
    assert_int_equal(hf_core_next_expiry(a), hf_core_next_expiry(b));
    for (uint32_t i = 0; i < hold_count; i++) {
        const hf_hold_t *x = hf_core_hold_at(a, i);
        assert_non_null(x);
        const hf_hold_t *y = hf_core_hold_find(b, x->id, NULL);
        if (y == NULL) fail_msg("hold %s not restored", x->id);
        assert_int_equal(x->status, y->status);
        assert_int_equal(x->created_at_ms, y->created_at_ms);
        assert_int_equal(x->expires_at_ms, y->expires_at_ms);
        assert_int_equal(x->total, y->total);
        assert_int_equal(x->seat_count, y->seat_count);
        assert_int_equal(x->pool_count, y->pool_count);
        assert_string_equal(hf_core_user_id(a, x->user), hf_core_user_id(b, y->user));
        assert_int_equal(x->order != 0, y->order != 0);
        if (x->order) {
            assert_string_equal(hf_core_order_at(a, x->order - 1)->id,
                                hf_core_order_at(b, y->order - 1)->id);
        }
    }
    for (uint32_t i = 0; i < order_count; i++) {
        const hf_order_t *x = hf_core_order_at(a, i);
        assert_non_null(x);
        const hf_order_t *y = hf_core_order_find(b, x->id, NULL);
        if (y == NULL) fail_msg("order %s not restored", x->id);
        assert_int_equal(x->status, y->status);
        assert_int_equal(x->created_at_ms, y->created_at_ms);
        assert_int_equal(x->total, y->total);
        assert_string_equal(hf_core_string(a, x->payment_ref), hf_core_string(b, y->payment_ref));
        assert_string_equal(hf_core_user_id(a, x->user), hf_core_user_id(b, y->user));
        assert_int_equal(x->hold != 0, y->hold != 0);
        if (x->hold)
            assert_string_equal(hf_core_hold_at(a, x->hold - 1)->id,
                                hf_core_hold_at(b, y->hold - 1)->id);
    }
    const char *fault = hf_core_check(b, now);
    if (fault != NULL) fail_msg("restored core: %s", fault);
}

static void test_restore_round_trip(void **state) {
    fixture_t *f = *state;
    hf_time_ms_t end;
    build_restore_source(f, &end);
    assert_consistent(f, end);

    fx_sink_t sink;
    fx_sink_init(&sink, 64);
    hf_core_t *copy = hf_core_create(fx_sink_of(&sink));
    assert_int_equal(hf_core_restore_event(copy, &f->show.definition, T0), HF_OK);
    assert_int_equal(hf_core_restore_event(copy, &f->open.definition, T0), HF_OK);
    /* Holds in creation order, then orders, then seat versions. */
    for (uint32_t i = 0; i < 8; i++) { /* the holds of build_restore_source */
        const hf_hold_t *h = hf_core_hold_at(f->core, i);
        assert_non_null(h);
        const hf_event_t *event = hf_core_event_at(f->core, h->event);
        snapshot_hold_t snap;
        memset(&snap, 0, sizeof snap);
        snapshot_items(f->core, event, h->item_offset, h->seat_count, h->pool_count, &snap);
        hf_stored_hold_t stored = {
            .request = {.event_id = event->id,
                        .user_id = hf_core_user_id(f->core, h->user),
                        .hold_id = h->id,
                        .seat_ids = snap.seat_pointers,
                        .seat_count = snap.seat_count,
                        .pools = snap.pools,
                        .pool_count = snap.pool_count,
                        .ttl_ms = -1},
            .status = h->status,
            .created_at_ms = h->created_at_ms,
            .expires_at_ms = h->expires_at_ms,
            .total = h->total,
        };
        assert_int_equal(hf_core_restore_hold(copy, &stored), HF_OK);
    }
    for (uint32_t i = 0; i < 3; i++) { /* its orders */
        const hf_order_t *o = hf_core_order_at(f->core, i);
        assert_non_null(o);
        const hf_event_t *event = hf_core_event_at(f->core, o->event);
        snapshot_hold_t snap;
        memset(&snap, 0, sizeof snap);
        snapshot_items(f->core, event, o->item_offset, o->seat_count, o->pool_count, &snap);
        hf_stored_order_t stored = {
            .order_id = o->id,
            .hold_id = o->hold ? hf_core_hold_at(f->core, o->hold - 1)->id : NULL,
            .items = {.event_id = event->id,
                      .user_id = hf_core_user_id(f->core, o->user),
                      .seat_ids = snap.seat_pointers,
                      .seat_count = snap.seat_count,
                      .pools = snap.pools,
                      .pool_count = snap.pool_count,
                      .ttl_ms = -1},
            .status = o->status,
            .created_at_ms = o->created_at_ms,
            .total = o->total,
            .payment_ref = hf_core_string(f->core, o->payment_ref),
        };
        assert_int_equal(hf_core_restore_order(copy, &stored), HF_OK);
    }
    for (uint32_t e = 0; e < hf_core_event_count(f->core); e++) {
        const hf_event_t *event = hf_core_event_at(f->core, e);
        for (uint32_t s = 0; s < event->seat_count; s++) {
            if (event->seats[s].version == 1) continue;
            char id[HF_SEAT_ID_SIZE_MAX + 1];
            hf_core_seat_id(event, s, id);
            assert_int_equal(hf_core_restore_seat(copy, event->id, id, event->seats[s].version),
                             HF_OK);
        }
    }
    if (sink.total != 0) fail_msg("restore emitted %zu mutations", sink.total);
    compare_cores(f->core, copy, end, 8, 3);

    /* The restored core works on: the same commands give the same answers. */
    hf_error_detail_t detail;
    bool capped;
    assert_int_equal(hf_core_commit(copy, "res_held", "u1", "ord_x", "pi", end + 1, &(uint32_t){0}),
                     HF_OK);
    assert_int_equal(
        hf_core_commit(f->core, "res_held", "u1", "ord_x", "pi", end + 1, &(uint32_t){0}), HF_OK);
    assert_int_equal(hf_core_extend(copy, "res_new", "u6", 1000000, end + 2, &capped), HF_OK);
    assert_int_equal(hf_core_extend(f->core, "res_new", "u6", 1000000, end + 2, &capped), HF_OK);
    assert_int_equal(hf_core_release(copy, "res_rel", "u2", end + 3), HF_OK);
    assert_int_equal(hf_core_release(copy, "res_sold", "u4", end + 3), HF_ERROR_ALREADY_CONFIRMED);
    assert_int_equal(hf_core_cancel(copy, "ord_sold", "u4", "ref_2484", end + 4), HF_OK);
    assert_int_equal(hf_core_cancel(f->core, "ord_sold", "u4", "ref_2485", end + 4), HF_OK);
    hf_hold_request_t request = {.event_id = "show",
                                 .user_id = "u9",
                                 .hold_id = "res_z",
                                 .seat_ids = (const char *const[]){"FLOOR-A-3", "FLOOR-A-4"},
                                 .seat_count = 2,
                                 .ttl_ms = -1};
    assert_int_equal(hf_core_hold(copy, &request, end + 5, &(uint32_t){0}, &detail), HF_OK);
    assert_int_equal(hf_core_hold(f->core, &request, end + 5, &(uint32_t){0}, &detail), HF_OK);
    request.hold_id = "res_y";
    request.seat_ids = (const char *const[]){"FLOOR-B-2"};
    request.seat_count = 1;
    assert_int_equal(hf_core_hold(copy, &request, end + 5, &(uint32_t){0}, &detail),
                     HF_ERROR_SEATS_UNAVAILABLE);
    /* The user limit counts restored holds and orders: u1 holds nothing on "show" any more but
     * bought FLOOR-A-1, FLOOR-A-2 and 2 GA (res_held, committed above): 4 + 5 > 8. */
    request.user_id = "u1";
    request.hold_id = "res_w";
    request.seat_ids = (const char *const[]){"BALC-A-20", "BALC-A-21", "BALC-A-22", "BALC-A-23",
                                             "BALC-A-24"};
    request.seat_count = 5;
    assert_int_equal(hf_core_hold(copy, &request, end + 6, &(uint32_t){0}, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    assert_int_equal(hf_core_hold(f->core, &request, end + 6, &(uint32_t){0}, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    request.seat_count = 4;
    assert_int_equal(hf_core_hold(copy, &request, end + 6, &(uint32_t){0}, &detail), HF_OK);
    assert_int_equal(hf_core_hold(f->core, &request, end + 6, &(uint32_t){0}, &detail), HF_OK);
    /* u6 holds res_new (2 seats, restored held): 2 + 7 > 8 unless replaced. */
    request.user_id = "u6";
    request.hold_id = "res_v";
    request.seat_ids = (const char *const[]){"BALC-A-30", "BALC-A-31", "BALC-A-32", "BALC-A-33",
                                             "BALC-A-34", "BALC-A-35", "BALC-A-36"};
    request.seat_count = 7;
    assert_int_equal(hf_core_hold(copy, &request, end + 7, &(uint32_t){0}, &detail),
                     HF_ERROR_USER_LIMIT_EXCEEDED);
    request.replace_existing = true;
    assert_int_equal(hf_core_hold(copy, &request, end + 7, &(uint32_t){0}, &detail), HF_OK);
    assert_int_equal(hf_core_hold(f->core, &request, end + 7, &(uint32_t){0}, &detail), HF_OK);
    assert_int_equal(hf_core_hold_find(copy, "res_new", NULL)->status, HF_HOLD_RELEASED);
    compare_cores(f->core, copy, end + 7, 11, 4);
    hf_core_destroy(copy);
    fx_sink_free(&sink);
}

static void test_restore_lapsed_hold(void **state) {
    (void)state;
    fx_sink_t sink;
    fx_sink_init(&sink, 64);
    hf_core_t *core = hf_core_create(fx_sink_of(&sink));
    fx_event_t def;
    fx_event_init(&def, "ev", TTL, MAX_HOLD, 0, 10);
    fx_event_section(&def, "S", 10, 1, 4);
    fx_event_pool(&def, "P", 5, 3);
    assert_int_equal(hf_core_restore_event(core, &def.definition, T0), HF_OK);
    hf_stored_hold_t stored = {
        .request = {.event_id = "ev",
                    .user_id = "u1",
                    .hold_id = "res_1",
                    .seat_ids = (const char *const[]){"S-A-2"},
                    .seat_count = 1,
                    .pools = (const hf_pool_request_t[]){{"P", 2}},
                    .pool_count = 1,
                    .ttl_ms = -1},
        .status = HF_HOLD_HELD,
        .created_at_ms = T0,
        .expires_at_ms = T0 + 1000,
        .total = 16,
    };
    assert_int_equal(hf_core_restore_hold(core, &stored), HF_OK);
    assert_int_equal(hf_core_restore_seat(core, "ev", "S-A-2", 6), HF_OK);
    assert_int_equal(sink.total, 0);
    const hf_event_t *event = hf_core_event(core, "ev", NULL);
    assert_int_equal(event->seats[1].status, HF_SEAT_HELD);
    assert_int_equal(event->seats[1].version, 6);
    assert_int_equal(event->pools[0].held, 2);
    assert_counts(event->counts, 3, 1, 0);
    assert_int_equal(hf_core_holds_active(core), 1);
    assert_int_equal(hf_core_next_expiry(core), T0 + 1000);
    assert_int_equal(hf_core_hold_find(core, "res_1", NULL)->status, HF_HOLD_HELD);
    /* Lapsed long ago: the first advance expires it durably. */
    assert_int_equal(hf_core_advance(core, T0 + 50000), 1);
    assert_int_equal(hf_core_hold_find(core, "res_1", NULL)->status, HF_HOLD_EXPIRED);
    event = hf_core_event(core, "ev", NULL);
    assert_int_equal(event->seats[1].status, HF_SEAT_AVAILABLE);
    assert_int_equal(event->seats[1].version, 7);
    assert_int_equal(event->pools[0].held, 0);
    assert_int_equal(sink.by_type[HF_MUTATION_HOLD_UPDATE], 1);
    assert_int_equal(sink.by_type[HF_MUTATION_SEAT], 1);
    const fx_record_t *record = fx_sink_seat(&sink, "S-A-2");
    assert_non_null(record);
    assert_int_equal(record->version, 7);
    assert_null(hf_core_check(core, T0 + 50000));
    /* Restored events and a held hold emit nothing, a bad restore is refused. */
    hf_stored_hold_t bad = stored;
    bad.request.hold_id = "res_2";
    bad.request.event_id = "nope";
    assert_int_not_equal(hf_core_restore_hold(core, &bad), HF_OK);
    assert_int_not_equal(hf_core_restore_seat(core, "ev", "S-A-9", 2), HF_OK);
    hf_core_destroy(core);
    fx_sink_free(&sink);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_restore_round_trip, setup, teardown),
        cmocka_unit_test(test_restore_lapsed_hold),
        cmocka_unit_test_setup_teardown(test_evict_oldest_beyond_max, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evict_keeps_held_and_confirmed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evict_slot_reuse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evict_stale_expiry_entry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_revive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restore_forgotten_hold, setup, teardown),
    };
    return cmocka_run_group_tests_name("core_restore", tests, NULL, NULL);
}
