/* The simulation's allocations (after sim_exchange.h, in test_simulation.c; API.md section 14):
 * seats set aside from free ones, holds of an allocation's own seats, and releases of one
 * seat or of all of it, each decided by the model first. The model keeps each seat's
 * allocation (model_event_t.seat_allocation) and its seat_change gives a seat coming free back
 * to its allocation or, released meanwhile, to the public; the ordinary operations (release,
 * expiry, commit, cancel, late payments, exchanges) then run over allocated seats as they
 * are, and compare_state checks every seat's status and allocation against the core's. Pools
 * stay out of the allocations here (the unit tests keep them). */
#ifndef HF_TESTS_SIM_ALLOCATIONS_H
#define HF_TESTS_SIM_ALLOCATIONS_H

/* Up to count seats of the event: mostly free ones, sometimes any. */
static uint32_t allocation_draw(const model_event_t *event, uint32_t *seats, uint32_t count) {
    uint32_t drawn = 0;
    for (uint32_t tries = 0; tries < 16 && drawn < count; tries++) {
        uint32_t seat = rng_below(event->seat_count);
        if (event->seats[seat].status != HF_SEAT_AVAILABLE && rng_chance(80)) continue;
        bool again = false;
        for (uint32_t i = 0; i < drawn; i++) again |= seats[i] == seat;
        if (!again) seats[drawn++] = seat;
    }
    return drawn;
}

/* Each operation expires first, as the core was advanced to now before it (even one that then
 * finds nothing to do). */
static void op_allocate(void) {
    model_expire(model.now);
    uint32_t e = rng_below(EVENTS);
    model_event_t *event = &model.events[e];
    if (event->seat_count == 0 || model.allocation_count >= ALLOCATIONS_MAX) return;
    uint32_t seats[4];
    uint32_t count = allocation_draw(event, seats, 1 + rng_below(4));
    const char *ids[4];
    for (uint32_t i = 0; i < count; i++) ids[i] = event->seats[seats[i]].id;
    char id[16];
    /* Now and then an id taken on this event. */
    int32_t taken = -1;
    for (uint32_t a = 0; a < model.allocation_count && rng_chance(10); a++)
        if (model.allocations[a].event == e) taken = (int32_t)a;
    if (taken >= 0) snprintf(id, sizeof id, "%s", model.allocations[taken].id);
    else snprintf(id, sizeof id, "al_%u", model.allocation_count);
    snprintf(description, sizeof description, "allocate %s on %s, %u seats", id, event->id, count);
    model_expire(model.now);
    stats[S_ALLOCATE]++;
    hf_error_t want = HF_OK;
    if (count == 0) want = HF_ERROR_INVALID_REQUEST;
    else if (taken >= 0) want = HF_ERROR_ALLOCATION_EXISTS;
    for (uint32_t i = 0; i < count && want == HF_OK; i++)
        if (event->seats[seats[i]].status != HF_SEAT_AVAILABLE) want = HF_ERROR_SEATS_UNAVAILABLE;
    hf_allocation_request_t request = {.event_id = event->id,
                                       .allocation_id = id,
                                       .seat_ids = ids,
                                       .seat_count = count};
    hf_error_detail_t detail;
    memset(&detail, 0, sizeof detail);
    uint32_t index;
    hf_error_t got = hf_core_allocation_create(core, &request, model.now, &index, &detail);
    if (got != want)
        mismatch("allocate: core answered %s, model %s", got ? fx_error_code(got) : "ok",
                 want ? fx_error_code(want) : "ok");
    if (got != HF_OK) return;
    if (index != model.allocation_count)
        mismatch("allocate: index %u, model %u", index, model.allocation_count);
    stats[S_ALLOCATE_OK]++;
    model_allocation_t *allocation = &model.allocations[model.allocation_count++];
    snprintf(allocation->id, sizeof allocation->id, "%s", id);
    allocation->event = e;
    model.expected[HF_MUTATION_ALLOCATION]++;
    for (uint32_t i = 0; i < count; i++) {
        event->seat_allocation[seats[i]] = index + 1;
        seat_change(e, seats[i], HF_SEAT_ALLOCATED, 0);
    }
}

/* An allocation of the model, or -1 when there is none. */
static int32_t allocation_pick(void) {
    return model.allocation_count ? (int32_t)rng_below(model.allocation_count) : -1;
}

/* Named seats of an allocation: mostly its own, sometimes another seat of its event. */
static uint32_t allocation_seats_of(uint32_t a, uint32_t *seats, uint32_t count) {
    const model_event_t *event = &model.events[model.allocations[a].event];
    uint32_t own[SEATS_MAX], own_count = 0, drawn = 0;
    for (uint32_t s = 0; s < event->seat_count; s++)
        if ((event->seat_allocation[s] & ~MODEL_RELEASED) == a + 1) own[own_count++] = s;
    for (uint32_t tries = 0; tries < 8 && drawn < count; tries++) {
        uint32_t seat = own_count && rng_chance(85) ? own[rng_below(own_count)]
                                                    : rng_below(event->seat_count);
        bool again = false;
        for (uint32_t i = 0; i < drawn; i++) again |= seats[i] == seat;
        if (!again) seats[drawn++] = seat;
    }
    return drawn;
}

static void op_allocation_hold(void) {
    model_expire(model.now);
    int32_t a = allocation_pick();
    if (a < 0) return;
    uint32_t e = model.allocations[a].event;
    model_event_t *event = &model.events[e];
    uint32_t seats[3], u = rng_below(USERS);
    uint32_t count = allocation_seats_of((uint32_t)a, seats, 1 + rng_below(3));
    const char *ids[3];
    for (uint32_t i = 0; i < count; i++) ids[i] = event->seats[seats[i]].id;
    char hold_id[24];
    snprintf(hold_id, sizeof hold_id, "res_%u", model.hold_count);
    bool unknown = rng_chance(5);
    const char *allocation_id = unknown ? "nope" : model.allocations[a].id;
    snprintf(description, sizeof description, "hold %s of allocation %s by %s, %u seats", hold_id,
             allocation_id, user_ids[u], count);
    model_expire(model.now);
    stats[S_ALLOCATION_HOLD]++;
    uint32_t set = 0;
    bool not_found = unknown;
    for (uint32_t i = 0; i < count; i++) {
        bool own = event->seats[seats[i]].status == HF_SEAT_ALLOCATED &&
                   event->seat_allocation[seats[i]] == (uint32_t)a + 1;
        if (!own) set |= 1u << HF_ERROR_SEATS_UNAVAILABLE;
    }
    if (count > event->per_hold) set |= 1u << HF_ERROR_INVALID_REQUEST;
    if (event->per_user > 0 && user_units(e, u, true, true) + count > event->per_user)
        set |= 1u << HF_ERROR_USER_LIMIT_EXCEEDED;
    if (count == 0) set = 1u << HF_ERROR_INVALID_REQUEST;
    hf_hold_request_t request = {.event_id = event->id,
                                 .user_id = user_ids[u],
                                 .hold_id = hold_id,
                                 .seat_ids = ids,
                                 .seat_count = count,
                                 .ttl_ms = -1,
                                 .allocation_id = allocation_id};
    hf_error_detail_t detail;
    memset(&detail, 0, sizeof detail);
    uint32_t core_index = UINT32_MAX;
    hf_error_t got = hf_core_hold(core, &request, model.now, &core_index, &detail);
    /* An unknown allocation is found after the request's own shape and seats. */
    if (not_found && (got == HF_ERROR_ALLOCATION_NOT_FOUND || got == HF_ERROR_INVALID_REQUEST))
        return;
    if (not_found) mismatch("hold of an unknown allocation answered %d", (int)got);
    expect_result(got, set);
    if (got != HF_OK) return;
    stats[S_ALLOCATION_HOLD_OK]++;
    GROW(model.holds, model.hold_count, model.hold_capacity);
    uint32_t index = model.hold_count++;
    model_hold_t *h = &model.holds[index];
    memset(h, 0, sizeof *h);
    snprintf(h->id, sizeof h->id, "%s", hold_id);
    h->event = e;
    h->user = u;
    h->status = HF_HOLD_HELD;
    h->created = model.now;
    h->expires = model.now + event->ttl_ms;
    h->order = -1;
    h->core_index = core_index;
    h->allocation = (uint32_t)a + 1;
    h->items.seat_count = count;
    for (uint32_t i = 0; i < count; i++) {
        h->items.seats[i] = seats[i];
        h->total += event->seats[seats[i]].price;
        seat_change(e, seats[i], HF_SEAT_HELD, index + 1);
    }
    GROW(model.active, model.active_count, model.active_capacity);
    model.active[model.active_count++] = index;
    model.expected[HF_MUTATION_HOLD_CREATE]++;
    touch_hold(index);
}

static void op_allocation_release(void) {
    model_expire(model.now);
    int32_t a = allocation_pick();
    if (a < 0) return;
    uint32_t e = model.allocations[a].event;
    model_event_t *event = &model.events[e];
    bool all = rng_chance(40);
    uint32_t seat = 0;
    if (!all && allocation_seats_of((uint32_t)a, &seat, 1) == 0) return;
    const char *ids[1] = {event->seats[seat].id};
    snprintf(description, sizeof description, "release %s of allocation %s", all ? "all" : ids[0],
             model.allocations[a].id);
    model_expire(model.now);
    stats[S_ALLOCATION_RELEASE]++;
    hf_error_t want = HF_OK;
    if (!all && event->seat_allocation[seat] != (uint32_t)a + 1) want = HF_ERROR_INVALID_REQUEST;
    hf_allocation_request_t request = {.event_id = event->id,
                                       .allocation_id = model.allocations[a].id,
                                       .seat_ids = all ? NULL : ids,
                                       .seat_count = all ? 0 : 1};
    hf_error_detail_t detail;
    memset(&detail, 0, sizeof detail);
    uint32_t index;
    hf_error_t got = hf_core_allocation_release(core, &request, model.now, &index, &detail);
    if (got != want)
        mismatch("release allocation: core answered %s, model %s", got ? fx_error_code(got) : "ok",
                 want ? fx_error_code(want) : "ok");
    if (got != HF_OK) return;
    stats[S_ALLOCATION_RELEASE_OK]++;
    bool changed = false; /* a release of nothing left to release records nothing */
    model_items_t freed = {.seat_count = 0};
    for (uint32_t s = 0; s < event->seat_count; s++) {
        if (event->seat_allocation[s] != (uint32_t)a + 1 || (!all && s != seat)) continue;
        if (!changed) model.expected[HF_MUTATION_ALLOCATION]++;
        changed = true;
        if (event->seats[s].status == HF_SEAT_ALLOCATED) {
            event->seat_allocation[s] = 0;
            assert_true(freed.seat_count < ITEM_SEATS_MAX);
            freed.seats[freed.seat_count++] = s;
        } else {
            event->seat_allocation[s] |= MODEL_RELEASED;
        }
    }
    /* The seats released free go to the waitlist first (API.md section 14). */
    model_came_free(e, &freed);
    for (uint32_t i = 0; i < freed.seat_count; i++)
        seat_change(e, freed.seats[i], HF_SEAT_AVAILABLE, 0);
}

#endif
