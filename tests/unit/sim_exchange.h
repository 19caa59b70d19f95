/* The simulation's exchanges (after sim_holds.h, in test_simulation.c; API.md section 13): an
 * exchange hold of a confirmed order, committed in the same operation, against the model's
 * swap, which moves the two orders' items at once: the old order exchanged, the seats it kept
 * passed straight to the new order, the others given back, the new order confirmed, and the
 * refund of a negative difference. The core's hold and commit run as two commands at one time;
 * the model decides first whether the hold is allowed (the seats must be free or the old
 * order's, the user's limit counts the old order's units as given back). Pools stay out of
 * the exchanges here (the unit tests keep them). */
#ifndef HF_TESTS_SIM_EXCHANGE_H
#define HF_TESTS_SIM_EXCHANGE_H

/* The new items of an exchange of order o: some of its seats kept, up to two free ones. */
static void exchange_items(const model_order_t *o, model_items_t *items) {
    const model_event_t *event = &model.events[o->event];
    memset(items, 0, sizeof *items);
    for (uint32_t i = 0; i < o->items.seat_count; i++)
        if (rng_chance(60)) items->seats[items->seat_count++] = o->items.seats[i];
    uint32_t wanted = event->seat_count ? rng_below(3) : 0; /* an event of pools only */
    for (uint32_t tries = 0; tries < 8 && wanted > 0; tries++) {
        uint32_t seat = rng_below(event->seat_count);
        bool named = event->seats[seat].status != HF_SEAT_AVAILABLE;
        for (uint32_t i = 0; i < items->seat_count && !named; i++) named = items->seats[i] == seat;
        if (named || items->seat_count >= ITEM_SEATS_MAX) continue;
        items->seats[items->seat_count++] = seat;
        wanted--;
    }
}

static bool exchange_kept(const model_order_t *o, uint32_t seat) {
    for (uint32_t i = 0; i < o->items.seat_count; i++)
        if (o->items.seats[i] == seat) return true;
    return false;
}

/* The model's new hold, held: its seats not kept are held (a record each); the kept ones stay
 * the old order's. */
static uint32_t model_exchange_hold(const model_order_t *o, const model_items_t *items,
                                    const char *hold_id, uint32_t core_index) {
    const model_event_t *event = &model.events[o->event];
    GROW(model.holds, model.hold_count, model.hold_capacity);
    uint32_t index = model.hold_count++;
    model_hold_t *h = &model.holds[index];
    memset(h, 0, sizeof *h);
    snprintf(h->id, sizeof h->id, "%s", hold_id);
    h->event = o->event;
    h->user = o->user;
    h->status = HF_HOLD_HELD;
    h->created = model.now;
    h->expires = model.now + event->ttl_ms;
    h->items = *items;
    h->order = -1;
    h->core_index = core_index;
    for (uint32_t i = 0; i < items->seat_count; i++) {
        h->total += event->seats[items->seats[i]].price;
        if (!exchange_kept(o, items->seats[i]))
            seat_change(o->event, items->seats[i], HF_SEAT_HELD, index + 1);
    }
    GROW(model.active, model.active_count, model.active_capacity);
    model.active[model.active_count++] = index;
    model.expected[HF_MUTATION_HOLD_CREATE]++;
    touch_hold(index);
    return index;
}

/* The old order exchanged: what the new hold does not keep is given back. */
static void model_exchange_old(uint32_t old, const model_items_t *items) {
    model_order_t *o = &model.orders[old];
    model_event_t *event = &model.events[o->event];
    o->status = HF_ORDER_EXCHANGED;
    list_remove(model.live, &model.live_count, old);
    model_came_free(o->event, &o->items); /* the kept seats' sections too, as the core's */
    for (uint32_t i = 0; i < o->items.seat_count; i++) {
        bool kept = false;
        for (uint32_t j = 0; j < items->seat_count && !kept; j++)
            kept = items->seats[j] == o->items.seats[i];
        if (!kept) seat_change(o->event, o->items.seats[i], HF_SEAT_AVAILABLE, 0);
    }
    for (uint32_t i = 0; i < o->items.pool_count; i++)
        event->pools[o->items.pools[i]].sold -= o->items.quantities[i];
    model.expected[HF_MUTATION_POOL] += o->items.pool_count;
    model.expected[HF_MUTATION_ORDER_UPDATE]++;
}

/* The refund of a negative difference, against the old order's payment. */
static void model_exchange_refund(const model_order_t *o, const model_hold_t *h,
                                  const char *refund_id) {
    GROW(model.refunds, model.refund_count, model.refund_capacity);
    uint32_t index = model.refund_count++;
    model_refund_t *r = &model.refunds[index];
    memset(r, 0, sizeof *r);
    snprintf(r->id, sizeof r->id, "%s", refund_id);
    snprintf(r->intent, sizeof r->intent, "%s", o->payment);
    snprintf(r->reservation, sizeof r->reservation, "%s", h->id);
    r->amount = o->total - h->total;
    r->reason = HF_REFUND_EXCHANGE;
    r->status = HF_REFUND_PENDING;
    r->created = model.now;
    model.expected[HF_MUTATION_REFUND]++;
    compare_refund(index);
}

/* Whether the model allows the exchange hold: its shape, its seats free or the old order's,
 * the user's limit with the old order's units given back. */
static bool exchange_allowed(const model_order_t *o, const model_items_t *items) {
    const model_event_t *event = &model.events[o->event];
    if (items->seat_count == 0 || items->seat_count > event->per_hold) return false;
    for (uint32_t i = 0; i < items->seat_count; i++) {
        const model_seat_t *s = &event->seats[items->seats[i]];
        if (s->status != HF_SEAT_AVAILABLE && !exchange_kept(o, items->seats[i])) return false;
    }
    if (event->per_user == 0) return true;
    uint32_t have = user_units(o->event, o->user, true, true) - o->items.seat_count;
    for (uint32_t i = 0; i < o->items.pool_count; i++) have -= o->items.quantities[i];
    return have + items->seat_count <= event->per_user;
}

static void exchange_hold_run(const model_order_t *o, const model_items_t *items,
                              const char *hold_id, uint32_t *core_hold) {
    const model_event_t *event = &model.events[o->event];
    const char *seat_ids[ITEM_SEATS_MAX];
    for (uint32_t i = 0; i < items->seat_count; i++) seat_ids[i] = event->seats[items->seats[i]].id;
    hf_hold_request_t request = {.event_id = event->id,
                                 .user_id = user_ids[o->user],
                                 .hold_id = hold_id,
                                 .seat_ids = seat_ids,
                                 .seat_count = items->seat_count,
                                 .ttl_ms = -1,
                                 .exchange_for = o->id};
    static hf_error_detail_t detail;
    memset(&detail, 0, offsetof(hf_error_detail_t, item_count));
    hf_error_t got = hf_core_hold(core, &request, model.now, core_hold, &detail);
    if (got != HF_OK)
        mismatch("exchange hold of %s on %s (%s...): core answered %s, model allows it", o->id,
                 event->id, seat_ids[0], fx_error_code(got));
}

static void op_exchange(void) {
    model_expire(model.now);
    if (model.live_count == 0) return;
    uint32_t old = model.live[rng_below(model.live_count)];
    model_order_t *o = &model.orders[old];
    if (o->booked) return; /* keeps the model's reading of a refund's reservation simple */
    model_items_t items;
    exchange_items(o, &items);
    char hold_id[24], order_id[24], payment[24], refund_id[24];
    snprintf(hold_id, sizeof hold_id, "res_x%" PRIu64, step);
    snprintf(order_id, sizeof order_id, "ord_%u", model.order_count);
    snprintf(payment, sizeof payment, "pi_x%" PRIu64, step);
    snprintf(refund_id, sizeof refund_id, "ref_x%" PRIu64, step);
    snprintf(description, sizeof description, "exchange %s for %u seats", o->id, items.seat_count);
    stats[S_EXCHANGE]++;
    if (!exchange_allowed(o, &items)) return;
    uint32_t core_hold = UINT32_MAX, core_order = UINT32_MAX;
    exchange_hold_run(o, &items, hold_id, &core_hold);
    uint32_t index = model_exchange_hold(o, &items, hold_id, core_hold);
    model_hold_t *h = &model.holds[index];
    bool pays = h->total > o->total;
    hf_error_t got = hf_core_commit_refunding(core, hold_id, user_ids[o->user], order_id,
                                              pays ? payment : NULL, refund_id, model.now,
                                              &core_order);
    if (got != HF_OK)
        mismatch("exchange commit of %s: core answered %s", hold_id, fx_error_code(got));
    stats[S_EXCHANGE_OK]++;
    if (h->total < o->total && o->payment[0]) model_exchange_refund(o, h, refund_id);
    model_exchange_old(old, &items);
    char paid_by[24];
    snprintf(paid_by, sizeof paid_by, "%s", pays ? payment : model.orders[old].payment);
    compare_order(model_order_from_hold(index, order_id, paid_by, core_order));
    compare_order(old);
    compare_hold(index);
    const hf_order_t *swapped = hf_core_order_at(core, model.orders[old].core_index);
    if (swapped->replaced_by != core_order + 1)
        mismatch("exchange: %s replaced by %u, not the new order %u", model.orders[old].id,
                 swapped->replaced_by, core_order + 1);
}

#endif
