/* The simulation's payments (after sim_holds.h, in test_simulation.c): the model decides each
 * delivery and refund completion by its own reading of API.md section 7, and the clock of
 * the run across the 7-day window of deliveries. */
#ifndef HF_TESTS_SIM_PAYMENTS_H
#define HF_TESTS_SIM_PAYMENTS_H

/* ---- payments: the model decides each delivery by its own reading of API.md section 7 ---- */

/* What the model says a delivery answers. */
typedef struct prediction {
    hf_error_t error;
    bool repeat;
    int32_t delivery; /* the kept delivery a repeat answers, or -1 */
    uint8_t result, reason;
    bool late;
    int32_t order; /* the model order a commit names; -1 for a new one */
} prediction_t;

/* A delivery as drawn: what the provider sends, and the ids the caller makes for it. */
typedef struct delivery_draw {
    uint8_t type;
    char intent[24];
    int32_t hold; /* the model hold named, or -1 */
    char reservation[24];
    int64_t amount;
    char order_id[24], refund_id[24];
    int32_t repeat_of; /* the earlier delivery it repeats on purpose, or -1 */
} delivery_draw_t;

static const char *result_name(uint8_t result) {
    return result <= HF_PAYMENT_RECORDED ? hf_payment_result_name(result) : "?";
}

/* Everything a lapsed hold held is still free: its seats available, its pools with the units. */
static bool model_inventory_free(const model_hold_t *h) {
    const model_event_t *event = &model.events[h->event];
    for (uint32_t i = 0; i < h->items.seat_count; i++) {
        /* Free for it: the public's available seats, or an allocation's hold's own (a seat
         * released to the public meanwhile is not its any more). */
        uint32_t seat = h->items.seats[i];
        bool free = h->allocation
                        ? event->seats[seat].status == HF_SEAT_ALLOCATED &&
                              (event->seat_allocation[seat] & ~MODEL_RELEASED) == h->allocation
                        : event->seats[seat].status == HF_SEAT_AVAILABLE;
        if (!free) return false;
    }
    for (uint32_t i = 0; i < h->items.pool_count; i++) {
        const model_pool_t *pool = &event->pools[h->items.pools[i]];
        if (pool->capacity - pool->held - pool->sold < h->items.quantities[i]) return false;
    }
    return true;
}

/* Forgets the deliveries older than the window at now, as every delivery does first. */
static void model_deliveries_prune(hf_time_ms_t now) {
    while (model.delivery_first < model.delivery_count &&
           now - model.deliveries[model.delivery_first].at > HF_WEBHOOK_DEDUP_KEEP_MS)
        model.delivery_first++;
}

/* The delivery of (intent, type) among those from first on, or -1. */
static int32_t model_delivery_find(uint32_t first, uint32_t end, const char *intent, uint8_t type) {
    for (uint32_t d = first; d < end; d++)
        if (model.deliveries[d].type == type && strcmp(model.deliveries[d].intent, intent) == 0)
            return (int32_t)d;
    return -1;
}

/* A new payment.succeeded: committed (late when the hold had lapsed and all it held is free),
 * or the reason of the refund it requires. Changes nothing. */
static void model_decide(int32_t hold, int64_t amount, const char *intent, prediction_t *p) {
    p->result = HF_PAYMENT_REFUND_REQUIRED;
    p->reason = 0;
    p->late = false;
    p->order = -1;
    if (hold < 0) {
        p->reason = HF_REFUND_HOLD_NOT_FOUND;
        return;
    }
    const model_hold_t *h = &model.holds[hold];
    if (h->status == HF_HOLD_CONFIRMED) {
        /* Committed by this very payment (the client's commit came first), or by another. */
        const model_order_t *order = &model.orders[h->order];
        if (order->payment[0] != '\0' && strcmp(order->payment, intent) == 0) {
            p->result = HF_PAYMENT_COMMITTED;
            p->order = h->order;
        } else {
            p->reason = HF_REFUND_ALREADY_CONFIRMED;
        }
    } else if (h->status == HF_HOLD_RELEASED) {
        p->reason = HF_REFUND_HOLD_RELEASED;
    } else if (amount != h->total) {
        p->reason = HF_REFUND_AMOUNT_MISMATCH;
    } else if (h->status == HF_HOLD_EXPIRED && !model_inventory_free(h)) {
        p->reason = HF_REFUND_HOLD_EXPIRED;
    } else {
        p->result = HF_PAYMENT_COMMITTED;
        p->late = h->status == HF_HOLD_EXPIRED;
    }
}

/* The whole answer: an invalid delivery, a repeat of a kept one, or a new decision. */
static void model_predict(const delivery_draw_t *draw, prediction_t *p) {
    memset(p, 0, sizeof *p);
    p->delivery = p->order = -1;
    model_deliveries_prune(model.now);
    if (draw->intent[0] == '\0') {
        p->error = HF_ERROR_INVALID_REQUEST;
        return;
    }
    p->delivery = model_delivery_find(model.delivery_first, model.delivery_count, draw->intent,
                                      draw->type);
    if (p->delivery >= 0) {
        const model_delivery_t *d = &model.deliveries[p->delivery];
        p->repeat = true;
        p->result = d->result;
        p->reason = d->reason;
        p->late = d->late;
        p->order = d->order;
        return;
    }
    bool order_taken = false, refund_taken = false;
    for (uint32_t o = 0; o < model.order_count && !order_taken; o++)
        order_taken = strcmp(model.orders[o].id, draw->order_id) == 0;
    for (uint32_t r = 0; r < model.refund_count && !refund_taken; r++)
        refund_taken = strcmp(model.refunds[r].id, draw->refund_id) == 0;
    if (order_taken || refund_taken) {
        p->error = HF_ERROR_INVALID_REQUEST;
        return;
    }
    if (draw->type == HF_PAYMENT_FAILED) p->result = HF_PAYMENT_RECORDED;
    else model_decide(draw->hold, draw->amount, draw->intent, p);
}

enum { PICK_HELD, PICK_LAPSED_FREE, PICK_LAPSED_TAKEN, PICK_RELEASED, PICK_CONFIRMED, PICK_ANY };

static bool hold_of_kind(uint32_t index, int kind) {
    const model_hold_t *h = &model.holds[index];
    switch (kind) {
    case PICK_LAPSED_FREE: return h->status == HF_HOLD_EXPIRED && model_inventory_free(h);
    case PICK_LAPSED_TAKEN: return h->status == HF_HOLD_EXPIRED && !model_inventory_free(h);
    case PICK_RELEASED: return h->status == HF_HOLD_RELEASED;
    case PICK_CONFIRMED: return h->status == HF_HOLD_CONFIRMED;
    default: return true;
    }
}

/* A hold of the kind: an active one, or one of the newest 256 (scanned from a random start);
 * -1 when there is none. */
static int32_t payment_hold_pick(int kind) {
    if (kind == PICK_HELD)
        return model.active_count ? (int32_t)model.active[rng_below(model.active_count)] : -1;
    uint32_t window = model.hold_count < 256 ? model.hold_count : 256;
    uint32_t start = rng_below(window);
    for (uint32_t i = 0; i < window; i++) {
        uint32_t index = model.hold_count - 1 - (start + i) % window;
        if (hold_of_kind(index, kind)) return (int32_t)index;
    }
    return -1;
}

/* The reservation a delivery names: a model hold, or an id no hold has. */
static void draw_hold(delivery_draw_t *draw, int32_t hold) {
    static const char *const unknown[] = {"res_none", "ord_0", "res_", "RES_0"};
    draw->hold = hold;
    snprintf(draw->reservation, sizeof draw->reservation, "%s",
             hold >= 0 ? model.holds[hold].id : unknown[rng_below(4)]);
}

/* The hold's total (mostly), or an amount that differs from it. */
static int64_t draw_amount(int32_t hold, uint32_t right_percent) {
    if (hold < 0) return rng_range(0, 100000);
    int64_t total = model.holds[hold].total;
    if (rng_chance(right_percent)) return total;
    uint32_t roll = rng_below(3);
    if (roll == 0 && total > 0) return total - 1 - rng_range(0, total - 1);
    if (roll == 1) return total + 1 + rng_range(0, 999);
    return total == 0 ? 1 : 0;
}

static void draw_fresh_intent(delivery_draw_t *draw) {
    snprintf(draw->intent, sizeof draw->intent, "pw_%u", model.intent_serial++);
}

/* payment.succeeded for a hold of a random kind, paid with a fresh intent or (a hold committed
 * by the client's commit) the very payment it was committed with. */
static void draw_succeeded(delivery_draw_t *draw) {
    static const int kinds[] = {PICK_HELD, PICK_LAPSED_FREE, PICK_LAPSED_TAKEN, PICK_RELEASED,
                                PICK_CONFIRMED};
    static const uint32_t weights[] = {30, 18, 12, 10, 16}; /* the rest: an unknown hold */
    uint32_t roll = rng_below(100), sum = 0;
    int32_t hold = -1;
    bool unknown = true;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0] && unknown; k++) {
        sum += weights[k];
        if (roll >= sum) continue;
        unknown = false;
        hold = payment_hold_pick(kinds[k]);
        if (hold < 0) hold = payment_hold_pick(PICK_ANY);
    }
    draw->type = HF_PAYMENT_SUCCEEDED;
    draw_hold(draw, unknown ? -1 : hold);
    draw->amount = draw_amount(draw->hold, 80);
    const model_hold_t *h = draw->hold >= 0 ? &model.holds[draw->hold] : NULL;
    if (h && h->status == HF_HOLD_CONFIRMED && rng_chance(40))
        snprintf(draw->intent, sizeof draw->intent, "%s", model.orders[h->order].payment);
    else draw_fresh_intent(draw);
}

/* payment.failed, with a fresh intent or one that already succeeded (another delivery). */
static void draw_failed(delivery_draw_t *draw) {
    draw->type = HF_PAYMENT_FAILED;
    draw_hold(draw, rng_chance(85) ? payment_hold_pick(rng_chance(60) ? PICK_HELD : PICK_ANY) : -1);
    draw->amount = draw_amount(draw->hold, 90);
    if (model.delivery_count > 0 && rng_chance(40))
        snprintf(draw->intent, sizeof draw->intent, "%s",
                 model.deliveries[rng_below(model.delivery_count)].intent);
    else draw_fresh_intent(draw);
}

/* The same (intent, type) as an earlier delivery: recent ones mostly, the one whose window's
 * edge the clock was just moved to, or any (maybe forgotten by now). What it carries besides
 * is mostly what the first one carried. */
static void draw_repeat(delivery_draw_t *draw) {
    uint32_t count = model.delivery_count;
    uint32_t index;
    if (model.boundary >= 0 && rng_chance(90)) index = (uint32_t)model.boundary;
    else if (rng_chance(60)) index = count - 1 - rng_below(count < 16 ? count : 16);
    else index = rng_below(count);
    model.boundary = -1;
    const model_delivery_t *d = &model.deliveries[index];
    draw->repeat_of = (int32_t)index;
    draw->type = d->type;
    snprintf(draw->intent, sizeof draw->intent, "%s", d->intent);
    if (rng_chance(70)) {
        draw->hold = d->hold;
        snprintf(draw->reservation, sizeof draw->reservation, "%s", d->reservation);
    } else {
        draw_hold(draw, rng_chance(80) ? payment_hold_pick(PICK_ANY) : -1);
    }
    draw->amount = rng_chance(70) ? d->amount : draw_amount(draw->hold, 50);
}

/* A delivery: a repeat a quarter of the time (mostly, right after the clock moved to a kept
 * delivery's window's edge), else payment.succeeded or payment.failed; a few are refused. */
static void payment_draw(delivery_draw_t *draw) {
    memset(draw, 0, sizeof *draw);
    draw->repeat_of = -1;
    uint32_t roll = rng_below(100);
    if (model.delivery_count > 0 && (roll < 25 || (model.boundary >= 0 && roll < 85)))
        draw_repeat(draw);
    else if (roll < 85) draw_succeeded(draw);
    else draw_failed(draw);
    snprintf(draw->order_id, sizeof draw->order_id, "ord_%u", model.order_count);
    snprintf(draw->refund_id, sizeof draw->refund_id, "ref_%u", model.refund_count);
    /* Refused whatever else: no intent. Refused unless a repeat: an id already taken. */
    roll = rng_below(100);
    if (roll < 2) draw->intent[0] = '\0';
    else if (roll < 4 && model.order_count > 0)
        snprintf(draw->order_id, sizeof draw->order_id, "%s",
                 model.orders[rng_below(model.order_count)].id);
    else if (roll < 6 && model.refund_count > 0)
        snprintf(draw->refund_id, sizeof draw->refund_id, "%s",
                 model.refunds[rng_below(model.refund_count)].id);
}

/* The DELIVERY record (and REFUND record) of a new delivery against the model. */
static void payment_records_check(const delivery_draw_t *draw, const prediction_t *p) {
    const fx_record_t *record = fx_sink_first(&sink, HF_MUTATION_DELIVERY);
    if (record == NULL) mismatch("delivery: no DELIVERY record");
    const char *event_id = draw->hold >= 0 ? model.events[model.holds[draw->hold].event].id : "";
    const char *order_id = p->result != HF_PAYMENT_COMMITTED ? ""
                           : p->order >= 0                   ? model.orders[p->order].id
                                                             : draw->order_id;
    const char *refund_id = p->result == HF_PAYMENT_REFUND_REQUIRED ? draw->refund_id : "";
    if (strcmp(record->payment_intent_id, draw->intent) != 0 ||
        strcmp(record->hold_id, draw->reservation) != 0 || record->amount != draw->amount ||
        record->payment_type != draw->type || strcmp(record->event_id, event_id) != 0)
        mismatch("DELIVERY record: intent %s reservation %s amount %" PRId64 " type %d event %s",
                 record->payment_intent_id, record->hold_id, record->amount, record->payment_type,
                 record->event_id);
    if (record->status != p->result || record->late != p->late ||
        strcmp(record->order_id, order_id) != 0 || strcmp(record->refund_id, refund_id) != 0 ||
        (p->result == HF_PAYMENT_REFUND_REQUIRED && record->reason != p->reason))
        mismatch("DELIVERY record: %s%s order \"%s\" refund \"%s\" reason %s, model %s%s \"%s\" "
                 "\"%s\" %s",
                 result_name((uint8_t)record->status), record->late ? " late" : "",
                 record->order_id, record->refund_id, reason_name((uint8_t)record->reason),
                 result_name(p->result), p->late ? " late" : "", order_id, refund_id,
                 reason_name(p->reason));
    if (p->result != HF_PAYMENT_REFUND_REQUIRED) return;
    record = fx_sink_first(&sink, HF_MUTATION_REFUND);
    if (record == NULL) mismatch("refund required: no REFUND record");
    if (strcmp(record->refund_id, draw->refund_id) != 0 || record->amount != draw->amount ||
        record->reason != p->reason || record->status != HF_REFUND_PENDING ||
        record->created_at_ms != model.now)
        mismatch("REFUND record %s: amount %" PRId64 " reason %s status %d", record->refund_id,
                 record->amount, reason_name((uint8_t)record->reason), record->status);
}

/* The model takes the new delivery's outcome: the order made, the refund, the delivery kept. */
static void payment_apply(const delivery_draw_t *draw, const prediction_t *p,
                          const hf_payment_outcome_t *outcome) {
    int32_t order = p->order, refund = -1;
    if (p->result == HF_PAYMENT_COMMITTED && order >= 0) {
        if (outcome->order != model.orders[order].core_index)
            mismatch("committed by its own payment: order index %u, model %s at %u", outcome->order,
                     model.orders[order].id, model.orders[order].core_index);
        stats[S_PAY_OWN]++;
    } else if (p->result == HF_PAYMENT_COMMITTED) {
        const hf_order_t *made = hf_core_order_at(core, outcome->order);
        if (made == NULL || strcmp(made->id, draw->order_id) != 0)
            mismatch("committed: order index %u is %s, not %s", outcome->order,
                     made ? made->id : "none", draw->order_id);
        order = (int32_t)model_order_from_hold((uint32_t)draw->hold, draw->order_id, draw->intent,
                                               outcome->order);
        compare_order((uint32_t)order);
        stats[p->late ? S_PAY_LATE : S_PAY_COMMITTED]++;
    } else if (p->result == HF_PAYMENT_REFUND_REQUIRED) {
        if (outcome->refund != model.refund_count)
            mismatch("refund index %u, model %u", outcome->refund, model.refund_count);
        GROW(model.refunds, model.refund_count, model.refund_capacity);
        refund = (int32_t)model.refund_count++;
        model_refund_t *r = &model.refunds[refund];
        memset(r, 0, sizeof *r);
        snprintf(r->id, sizeof r->id, "%s", draw->refund_id);
        snprintf(r->intent, sizeof r->intent, "%s", draw->intent);
        snprintf(r->reservation, sizeof r->reservation, "%s", draw->reservation);
        r->amount = draw->amount;
        r->reason = p->reason;
        r->status = HF_REFUND_PENDING;
        r->created = model.now;
        model.expected[HF_MUTATION_REFUND]++;
        compare_refund((uint32_t)refund);
        stats[S_PAY_REFUND]++;
        stats[S_PAY_REASON + p->reason]++;
    }
    GROW(model.deliveries, model.delivery_count, model.delivery_capacity);
    model.deliveries[model.delivery_count++] = (model_delivery_t){.type = draw->type,
                                                                  .hold = draw->hold,
                                                                  .amount = draw->amount,
                                                                  .result = p->result,
                                                                  .reason = p->reason,
                                                                  .late = p->late,
                                                                  .order = order,
                                                                  .refund = refund,
                                                                  .at = model.now};
    model_delivery_t *kept = &model.deliveries[model.delivery_count - 1];
    snprintf(kept->intent, sizeof kept->intent, "%s", draw->intent);
    snprintf(kept->reservation, sizeof kept->reservation, "%s", draw->reservation);
    model.expected[HF_MUTATION_DELIVERY]++;
    payment_records_check(draw, p);
}

/* A repeat answers the kept outcome and changes nothing; counts one whose hold has moved on
 * since (a new delivery would now decide otherwise). */
static void payment_repeat_check(const delivery_draw_t *draw, const prediction_t *p,
                                 const hf_payment_outcome_t *outcome) {
    const model_delivery_t *d = &model.deliveries[p->delivery];
    if (d->result == HF_PAYMENT_COMMITTED && outcome->order != model.orders[d->order].core_index)
        mismatch("repeat: order index %u, first delivery's %s at %u", outcome->order,
                 model.orders[d->order].id, model.orders[d->order].core_index);
    if (d->result == HF_PAYMENT_REFUND_REQUIRED && outcome->refund != (uint32_t)d->refund)
        mismatch("repeat: refund index %u, first delivery's %u", outcome->refund, d->refund);
    stats[S_PAY_REPEAT]++;
    if (d->type != HF_PAYMENT_SUCCEEDED) return;
    prediction_t now;
    model_decide(draw->hold, draw->amount, draw->intent, &now);
    if (now.result != d->result || now.late != d->late ||
        (now.result == HF_PAYMENT_REFUND_REQUIRED && now.reason != d->reason))
        stats[S_PAY_REPEAT_CHANGED]++;
}

static void op_payment(void) {
    model_expire(model.now); /* the kinds of holds as the delivery will find them */
    delivery_draw_t draw;
    payment_draw(&draw);
    /* A hold the core forgot is taken back first, as the engine does from the store. */
    if (draw.hold >= 0 && model.holds[draw.hold].forgotten) revive((uint32_t)draw.hold);
    snprintf(description, sizeof description,
             "%s intent=\"%s\" reservation=%s amount=%" PRId64 " order=%s refund=%s%s",
             hf_payment_type_name(draw.type), draw.intent, draw.reservation, draw.amount,
             draw.order_id, draw.refund_id, draw.repeat_of >= 0 ? " (a repeat)" : "");
    prediction_t p;
    model_predict(&draw, &p);
    stats[S_PAY]++;
    if (draw.type == HF_PAYMENT_FAILED) stats[S_PAY_FAILED]++;
    if (draw.repeat_of >= 0 && !p.repeat && p.error == HF_OK &&
        model_delivery_find(0, model.delivery_first, draw.intent, draw.type) >= 0)
        stats[S_PAY_REPEAT_PRUNED]++;
    if (draw.repeat_of >= 0 && p.error == HF_OK) {
        /* At the window's last millisecond, or the first one past it. */
        int64_t age = model.now - model.deliveries[draw.repeat_of].at;
        if (age == HF_WEBHOOK_DEDUP_KEEP_MS) stats[S_EDGE_KEPT]++;
        if (age == HF_WEBHOOK_DEDUP_KEEP_MS + 1) stats[S_EDGE_PRUNED]++;
    }

    hf_payment_delivery_t delivery = {.event_id = "evt_sim",
                                      .type = draw.type,
                                      .payment_intent_id = draw.intent,
                                      .reservation_id = draw.reservation,
                                      .amount = draw.amount,
                                      .order_id = draw.order_id,
                                      .refund_id = draw.refund_id};
    hf_payment_outcome_t outcome;
    memset(&outcome, 0xA5, sizeof outcome);
    hf_error_t got = hf_core_payment(core, &delivery, model.now, &outcome);
    expect_result(got, p.error == HF_OK ? 0 : 1u << p.error);
    if (got != HF_OK) {
        stats[S_PAY_INVALID]++;
        return;
    }
    if (outcome.repeat != p.repeat || outcome.result != p.result || outcome.late != p.late ||
        (p.result == HF_PAYMENT_REFUND_REQUIRED && outcome.reason != p.reason))
        mismatch("delivery answered %s%s%s%s%s, model %s%s%s%s%s", result_name(outcome.result),
                 outcome.result == HF_PAYMENT_REFUND_REQUIRED ? " " : "",
                 outcome.result == HF_PAYMENT_REFUND_REQUIRED ? reason_name(outcome.reason) : "",
                 outcome.late ? " late" : "", outcome.repeat ? " (repeat)" : "",
                 result_name(p.result), p.result == HF_PAYMENT_REFUND_REQUIRED ? " " : "",
                 p.result == HF_PAYMENT_REFUND_REQUIRED ? reason_name(p.reason) : "",
                 p.late ? " late" : "", p.repeat ? " (repeat)" : "");
    if (p.repeat) payment_repeat_check(&draw, &p, &outcome);
    else payment_apply(&draw, &p, &outcome);
    if (draw.hold >= 0) touch_hold((uint32_t)draw.hold);
}

/* A refund completed: a pending one mostly, one completed already (changes nothing), or an id
 * no refund has. */
static void op_refund_complete(void) {
    int32_t index = -1;
    uint32_t roll = rng_below(100);
    if (roll < 60 && model.refund_count > 0) {
        uint32_t start = rng_below(model.refund_count);
        for (uint32_t i = 0; i < model.refund_count && index < 0; i++) {
            uint32_t r = (start + i) % model.refund_count;
            if (model.refunds[r].status == HF_REFUND_PENDING) index = (int32_t)r;
        }
    }
    if (index < 0 && roll < 85 && model.refund_count > 0)
        index = (int32_t)rng_below(model.refund_count);
    static const char *const unknown[] = {"ref_none", "ord_0", "", "REF_0"};
    const char *id = index >= 0 ? model.refunds[index].id : unknown[rng_below(4)];
    snprintf(description, sizeof description, "complete refund \"%s\"", id);
    model_expire(model.now);
    stats[S_REFUND_COMPLETE]++;
    uint32_t core_index = UINT32_MAX;
    hf_error_t got = hf_core_refund_complete(core, id, model.now, &core_index);
    expect_result(got, index < 0 ? 1u << HF_ERROR_REFUND_NOT_FOUND : 0);
    if (got != HF_OK) return;
    if (core_index != (uint32_t)index)
        mismatch("refund %s: completed index %u, model %d", id, core_index, index);
    model_refund_t *r = &model.refunds[index];
    if (r->status == HF_REFUND_COMPLETED) {
        stats[S_REFUND_COMPLETE_AGAIN]++;
    } else {
        r->status = HF_REFUND_COMPLETED;
        model.expected[HF_MUTATION_REFUND]++;
        const fx_record_t *record = fx_sink_first(&sink, HF_MUTATION_REFUND);
        if (record == NULL || strcmp(record->refund_id, id) != 0 ||
            record->status != HF_REFUND_COMPLETED || record->created_at_ms != r->created ||
            record->amount != r->amount)
            mismatch("refund %s completed: its REFUND record is missing or differs", id);
        stats[S_REFUND_COMPLETE_OK]++;
    }
    compare_refund((uint32_t)index);
}

/* The window run's clock: short steps (holds get paid), hours and days, and to the last
 * millisecond a kept delivery is kept, or the one after. */
static hf_time_ms_t window_clock_target(uint32_t roll) {
    hf_time_ms_t target = model.now;
    const int64_t hour = 3600 * 1000;
    if (roll < 35) {
        target += rng_range(0, 30000);
    } else if (roll < 55) {
        /* Exactly to a hold's expires_at, or one millisecond before. */
        if (model.active_count > 0)
            target = model.holds[model.active[rng_below(model.active_count)]].expires -
                     (hf_time_ms_t)rng_below(2);
    } else if (roll < 75) {
        target += rng_range(hour, 36 * hour);
    } else if (roll < 88) {
        /* A delivery still kept now (by the model's reckoning), to its window's edge. */
        uint32_t first = model.delivery_first;
        while (first < model.delivery_count &&
               model.now - model.deliveries[first].at > HF_WEBHOOK_DEDUP_KEEP_MS)
            first++;
        if (first < model.delivery_count) {
            uint32_t d = first + rng_below(model.delivery_count - first);
            target = model.deliveries[d].at + HF_WEBHOOK_DEDUP_KEEP_MS + rng_below(2);
            model.boundary = (int32_t)d;
            stats[S_WINDOW_JUMP]++;
        }
    } else {
        target += rng_range(24 * hour, 8 * 24 * hour);
    }
    return target < model.now ? model.now : target;
}

#endif
