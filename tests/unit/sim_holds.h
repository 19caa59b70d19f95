/* The simulation's holds and orders (after sim_model.h, in test_simulation.c): best_available
 * in the model, a plain reading of API.md section 3; and the operations hold, extend,
 * release, commit, cancel and book, each decided by the model first and then run on the
 * core, with forgotten holds revived as the engine does. */
#ifndef HF_TESTS_SIM_HOLDS_H
#define HF_TESTS_SIM_HOLDS_H

/* ---- best_available in the model: a plain reading of API.md section 3 ---- */

typedef struct pick_query {
    uint32_t event;
    int32_t user;          /* -1: none */
    bool replace;          /* the user's active holds on the event count as free */
    const uint32_t *named; /* seats named in the same request: never picked */
    uint32_t named_count;
} pick_query_t;

static bool model_pickable(const pick_query_t *q, uint32_t seat) {
    for (uint32_t i = 0; i < q->named_count; i++)
        if (q->named[i] == seat) return false;
    const model_seat_t *s = &model.events[q->event].seats[seat];
    if (s->status == HF_SEAT_AVAILABLE) return true;
    /* A held seat of an allocation goes back to it, not to the public's replace. */
    if (model.events[q->event].seat_allocation[seat] != 0) return false;
    if (!q->replace || q->user < 0 || s->status != HF_SEAT_HELD) return false;
    const model_hold_t *h = &model.holds[s->owner - 1];
    return h->status == HF_HOLD_HELD && h->event == q->event && h->user == (uint32_t)q->user;
}

/* Seat number n (from 1) of a row is pickable; false outside the row. */
static bool model_free(const pick_query_t *q, const model_row_t *row, int64_t n) {
    return n >= 1 && n <= (int64_t)row->seat_count &&
           model_pickable(q, row->first_seat + (uint32_t)(n - 1));
}

/* count seats into out, best first; section -1: every section in listed order. Every block of
 * every row is scored (strands, distance, number); separate seats are every free seat of a row
 * sorted by (distance, number). */
static bool model_pick(const pick_query_t *q, int32_t section, uint32_t count, bool adjacent,
                       uint32_t *out) {
    const model_event_t *event = &model.events[q->event];
    uint32_t taken = 0;
    for (uint32_t s = 0; s < event->section_count; s++) {
        if (section >= 0 && s != (uint32_t)section) continue;
        for (uint32_t r = event->section_first_row[s];
             r < event->section_first_row[s] + event->section_rows[s]; r++) {
            const model_row_t *row = &event->rows[r];
            int64_t length = row->seat_count;
            if (adjacent) {
                bool found = false, best_strands = false;
                int64_t best_distance = 0, best_first = 0;
                for (int64_t first = 1; first + count - 1 <= length; first++) {
                    int64_t last = first + count - 1;
                    bool all = true;
                    for (int64_t n = first; n <= last && all; n++) all = model_free(q, row, n);
                    if (!all) continue;
                    /* A single free seat between the block and a taken seat or the row's end. */
                    bool strands = (model_free(q, row, first - 1) &&
                                    !model_free(q, row, first - 2)) ||
                                   (model_free(q, row, last + 1) && !model_free(q, row, last + 2));
                    int64_t distance = 2 * first + count - 1 - (length + 1);
                    if (distance < 0) distance = -distance;
                    bool better = !found || (strands != best_strands     ? !strands
                                             : distance != best_distance ? distance < best_distance
                                                                         : first < best_first);
                    if (better) {
                        found = true;
                        best_strands = strands;
                        best_distance = distance;
                        best_first = first;
                    }
                }
                if (found) {
                    for (uint32_t i = 0; i < count; i++)
                        out[i] = row->first_seat + (uint32_t)best_first - 1 + i;
                    return true;
                }
            } else {
                uint32_t numbers[SEATS_MAX], free_count = 0;
                for (int64_t n = 1; n <= length; n++)
                    if (model_free(q, row, n)) numbers[free_count++] = (uint32_t)n;
                /* Insertion sort by (distance from the middle, number). */
                for (uint32_t i = 1; i < free_count; i++) {
                    uint32_t n = numbers[i], j = i;
                    int64_t key = llabs(2 * (int64_t)n - (length + 1));
                    while (j > 0) {
                        int64_t other = llabs(2 * (int64_t)numbers[j - 1] - (length + 1));
                        if (other < key || (other == key && numbers[j - 1] < n)) break;
                        numbers[j] = numbers[j - 1];
                        j--;
                    }
                    numbers[j] = n;
                }
                for (uint32_t i = 0; i < free_count && taken < count; i++)
                    out[taken++] = row->first_seat + numbers[i] - 1;
                if (taken == count) return true;
            }
        }
    }
    return false;
}

static const char *const other_sections[] = {"NOPE", "S", "FLOOR", "T.2", "L", "R", "floor", ""};

static void op_hold(void) {
    char seat_text[REQUEST_SEATS_MAX][SEAT_ID_SIZE];
    const char *seat_ids[REQUEST_SEATS_MAX];
    hf_pool_request_t pools[REQUEST_POOLS_MAX];
    char pool_text[REQUEST_POOLS_MAX][HF_ID_SIZE_MAX + 1];
    uint32_t seat_count = 0, pool_count = 0;

    /* Draw the request. */
    uint32_t e = rng_below(EVENTS);
    bool unknown_event = rng_chance(4);
    model_event_t *event = &model.events[e];
    const char *event_id = unknown_event ? "nope" : event->id;
    bool empty_user = rng_chance(2);
    int32_t u = (int32_t)rng_below(USERS);
    const char *user_id = empty_user ? "" : user_ids[u];
    /* best_available: a third of the holds. */
    bool use_best = rng_chance(event->seat_count > 0 ? 35 : 5);
    uint32_t best_count = 0;
    const char *best_section = NULL;
    bool best_adjacent = true;
    if (use_best) {
        uint32_t roll = rng_below(100);
        if (roll < 4) best_count = 0;
        else if (roll < 70) best_count = 1 + rng_below(4);
        else if (roll < 92) best_count = 1 + rng_below(event->per_hold + 1);
        else best_count = 1 + rng_below(14);
        best_adjacent = rng_chance(65);
        roll = rng_below(100);
        if (roll < 85 && event->section_count > 0 && roll >= 50)
            best_section = event->definition.sections[rng_below(event->section_count)].id;
        else if (roll >= 85)
            best_section =
                other_sections[rng_below(sizeof other_sections / sizeof *other_sections)];
    }
    uint32_t wanted_seats = 0;
    if (use_best && rng_chance(60)) {
        wanted_seats = 0;
    } else if (event->seat_count > 0 || rng_chance(5)) {
        static const uint32_t weights[] = {20, 35, 20, 12, 6, 4, 3};
        uint32_t roll = rng_below(100), sum = 0;
        for (wanted_seats = 0; wanted_seats < 7; wanted_seats++) {
            sum += weights[wanted_seats];
            if (roll < sum) break;
        }
    }
    for (uint32_t i = 0; i < wanted_seats && seat_count < REQUEST_SEATS_MAX; i++) {
        uint32_t roll = rng_below(100);
        if (event->seat_count == 0 || roll < 8) {
            snprintf(seat_text[seat_count], SEAT_ID_SIZE, "%s",
                     bad_seat_ids[rng_below(sizeof bad_seat_ids / sizeof bad_seat_ids[0])]);
        } else if (roll < 15 && seat_count > 0) {
            memcpy(seat_text[seat_count], seat_text[rng_below(seat_count)], SEAT_ID_SIZE);
        } else if (roll < 55) {
            uint32_t free_seats[SEATS_MAX], free_count = 0;
            for (uint32_t s = 0; s < event->seat_count; s++)
                if (event->seats[s].status == HF_SEAT_AVAILABLE) free_seats[free_count++] = s;
            uint32_t s = free_count ? free_seats[rng_below(free_count)]
                                    : rng_below(event->seat_count);
            snprintf(seat_text[seat_count], SEAT_ID_SIZE, "%s", event->seats[s].id);
        } else {
            snprintf(seat_text[seat_count], SEAT_ID_SIZE, "%s",
                     event->seats[rng_below(event->seat_count)].id);
        }
        seat_ids[seat_count] = seat_text[seat_count];
        seat_count++;
    }
    if ((event->pool_count > 0 || rng_chance(5)) && !(use_best && rng_chance(65))) {
        uint32_t lines = rng_below(3);
        if (event->seat_count == 0 && lines == 0 && rng_chance(80)) lines = 1;
        for (uint32_t i = 0; i < lines; i++) {
            uint32_t roll = rng_below(100);
            if (event->pool_count == 0 || roll < 5)
                snprintf(pool_text[pool_count], sizeof pool_text[0], "NOPE");
            else if (roll < 10 && pool_count > 0)
                memcpy(pool_text[pool_count], pool_text[0], sizeof pool_text[0]);
            else
                snprintf(pool_text[pool_count], sizeof pool_text[0], "%s",
                         event->pools[rng_below(event->pool_count)].id);
            pools[pool_count].pool_id = pool_text[pool_count];
            pools[pool_count].quantity = rng_chance(5) ? 5 : 1 + rng_below(3);
            pool_count++;
        }
    }
    int64_t ttl;
    uint32_t roll = rng_below(100);
    if (roll < 45) ttl = -1;
    else if (roll < 75) ttl = rng_range(1, event->max_hold_ms);
    else if (roll < 82) ttl = rng_range(1, 3000);
    else if (roll < 87) ttl = 0;
    else if (roll < 92) ttl = event->max_hold_ms + rng_range(1, 1000);
    else ttl = event->max_hold_ms;
    bool replace = rng_chance(20);
    char hold_id[24];
    snprintf(hold_id, sizeof hold_id, "res_%u", model.hold_count);

    size_t used = (size_t)snprintf(description, sizeof description,
                                   "hold %s user=\"%s\" event=%s ttl=%" PRId64 "%s seats=[",
                                   hold_id, user_id, event_id, ttl, replace ? " replace" : "");
    for (uint32_t i = 0; i < seat_count; i++)
        used += (size_t)snprintf(description + used, sizeof description - used, "%s\"%s\"",
                                 i ? "," : "", seat_ids[i]);
    used += (size_t)snprintf(description + used, sizeof description - used, "] pools={");
    for (uint32_t i = 0; i < pool_count; i++)
        used += (size_t)snprintf(description + used, sizeof description - used, "%s%s:%u",
                                 i ? "," : "", pools[i].pool_id, pools[i].quantity);
    used += (size_t)snprintf(description + used, sizeof description - used, "}");
    if (use_best)
        snprintf(description + used, sizeof description - used,
                 " best_available={count:%u section:%s%s%s adjacent:%s}", best_count,
                 best_section ? "\"" : "", best_section ? best_section : "null",
                 best_section ? "\"" : "", best_adjacent ? "true" : "false");

    /* The model: expire, then every error that applies. */
    model_expire(model.now);
    stats[S_HOLD]++;
    if (best_count > 0) stats[S_BEST]++;
    uint32_t set = 0;
    uint32_t unknown_items[REQUEST_SEATS_MAX], unknown_count = 0;
    uint32_t taken_items[REQUEST_SEATS_MAX], taken_count = 0;
    uint32_t seat_index[REQUEST_SEATS_MAX];
    int32_t pool_index[REQUEST_POOLS_MAX];
    uint32_t missing_pools = 0, short_pools = 0;
    int64_t units = seat_count + best_count;
    bool duplicate_seats = false, duplicate_pools = false;
    for (uint32_t i = 0; i < seat_count; i++)
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(seat_ids[i], seat_ids[j]) == 0) duplicate_seats = true;
    for (uint32_t i = 0; i < pool_count; i++) {
        units += pools[i].quantity;
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(pools[i].pool_id, pools[j].pool_id) == 0) duplicate_pools = true;
    }
    if (empty_user || seat_count + pool_count + best_count == 0 || duplicate_seats ||
        duplicate_pools)
        set |= 1u << HF_ERROR_INVALID_REQUEST;
    uint32_t picked[SEATS_MAX];
    bool best_no_fit = false;
    if (unknown_event) {
        set |= 1u << HF_ERROR_EVENT_NOT_FOUND;
    } else {
        if (units > event->per_hold || ttl == 0 || ttl > event->max_hold_ms)
            set |= 1u << HF_ERROR_INVALID_REQUEST;
        for (uint32_t i = 0; i < seat_count; i++) {
            bool found = false;
            for (uint32_t s = 0; s < event->seat_count && !found; s++) {
                if (strcmp(event->seats[s].id, seat_ids[i]) == 0) {
                    found = true;
                    seat_index[i] = s;
                }
            }
            if (!found) {
                unknown_items[unknown_count++] = i;
                continue;
            }
            const model_seat_t *s = &event->seats[seat_index[i]];
            bool mine = replace && !empty_user && s->status == HF_SEAT_HELD &&
                        model.holds[s->owner - 1].user == (uint32_t)u &&
                        event->seat_allocation[seat_index[i]] == 0;
            if (s->status != HF_SEAT_AVAILABLE && !mine) taken_items[taken_count++] = i;
        }
        if (unknown_count) set |= 1u << HF_ERROR_SEAT_NOT_FOUND;
        if (taken_count) set |= 1u << HF_ERROR_SEATS_UNAVAILABLE;
        for (uint32_t i = 0; i < pool_count; i++) {
            pool_index[i] = -1;
            for (uint32_t p = 0; p < event->pool_count; p++)
                if (strcmp(event->pools[p].id, pools[i].pool_id) == 0) pool_index[i] = (int32_t)p;
            if (pool_index[i] < 0) {
                missing_pools |= 1u << i;
                continue;
            }
            const model_pool_t *p = &event->pools[pool_index[i]];
            int64_t replaced_units = 0;
            for (uint32_t a = 0; replace && !empty_user && a < model.active_count; a++) {
                const model_hold_t *h = &model.holds[model.active[a]];
                if (h->event != e || h->user != (uint32_t)u) continue;
                for (uint32_t l = 0; l < h->items.pool_count; l++)
                    if (h->items.pools[l] == (uint32_t)pool_index[i])
                        replaced_units += h->items.quantities[l];
            }
            if (p->capacity - p->held - p->sold + replaced_units < pools[i].quantity)
                short_pools |= 1u << i;
        }
        if (missing_pools) set |= 1u << HF_ERROR_POOL_NOT_FOUND;
        if (short_pools) set |= 1u << HF_ERROR_INSUFFICIENT_QUANTITY;
        if (event->per_user > 0 && !empty_user) {
            uint32_t have = user_units(e, (uint32_t)u, !replace, true);
            if ((int64_t)have + units > event->per_user) set |= 1u << HF_ERROR_USER_LIMIT_EXCEEDED;
        }
        if (best_count > 0) {
            int32_t section = -1;
            bool known = true;
            if (best_section != NULL) {
                known = false;
                for (uint32_t s = 0; s < event->section_count && !known; s++)
                    if (strcmp(event->definition.sections[s].id, best_section) == 0) {
                        known = true;
                        section = (int32_t)s;
                    }
            }
            if (!known) {
                set |= 1u << HF_ERROR_SECTION_NOT_FOUND;
            } else if (best_count <= SEATS_MAX) {
                uint32_t named[REQUEST_SEATS_MAX], named_count = 0;
                for (uint32_t i = 0; i < seat_count; i++) {
                    bool unknown = false;
                    for (uint32_t k = 0; k < unknown_count; k++) unknown |= unknown_items[k] == i;
                    if (!unknown) named[named_count++] = seat_index[i];
                }
                pick_query_t query = {e, empty_user ? -1 : u, replace, named, named_count};
                if (!model_pick(&query, section, best_count, best_adjacent, picked)) {
                    best_no_fit = true;
                    set |= 1u << HF_ERROR_SEATS_UNAVAILABLE;
                }
            } else {
                best_no_fit = true; /* more than the event's seats; invalid anyway */
                set |= 1u << HF_ERROR_SEATS_UNAVAILABLE;
            }
        }
    }

    /* The core. */
    hf_hold_request_t request = {
        .event_id = event_id,
        .user_id = user_id,
        .hold_id = hold_id,
        .seat_ids = seat_count ? seat_ids : NULL,
        .seat_count = seat_count,
        .pools = pool_count ? pools : NULL,
        .pool_count = pool_count,
        .ttl_ms = ttl,
        .replace_existing = replace,
        .best_count = best_count,
        .best_section = best_section,
        .best_adjacent = best_adjacent,
    };
    hf_error_detail_t detail;
    memset(&detail, 0, sizeof detail);
    detail.item_count = UINT32_MAX;
    uint32_t core_index = UINT32_MAX;
    hf_error_t got = hf_core_hold(core, &request, model.now, &core_index, &detail);
    expect_result(got, set);
    if (best_count > 0 && best_no_fit) stats[S_BEST_NO_FIT]++;

    /* Details of the error the core chose: for best_available finding nothing, no seats. */
    if (got == HF_ERROR_SEATS_UNAVAILABLE && best_no_fit && detail.item_count == 0) {
        /* fine */
    } else if (got == HF_ERROR_SEAT_NOT_FOUND || got == HF_ERROR_SEATS_UNAVAILABLE) {
        const uint32_t *want = got == HF_ERROR_SEAT_NOT_FOUND ? unknown_items : taken_items;
        uint32_t want_count = got == HF_ERROR_SEAT_NOT_FOUND ? unknown_count : taken_count;
        bool same = detail.item_count == want_count;
        for (uint32_t i = 0; same && i < want_count; i++) {
            bool found = false;
            for (uint32_t j = 0; j < detail.item_count; j++) found |= detail.items[j] == want[i];
            same = found;
        }
        if (!same)
            mismatch("%s: detail has %u items, model %u%s", fx_error_code(got), detail.item_count,
                     want_count, best_no_fit ? " (or 0: best_available found nothing)" : "");
    }
    if (got == HF_ERROR_POOL_NOT_FOUND &&
        (detail.pool >= pool_count || !(missing_pools & (1u << detail.pool))))
        mismatch("pool_not_found: detail.pool %u is not an unknown pool", detail.pool);
    if (got == HF_ERROR_INSUFFICIENT_QUANTITY) {
        if (detail.pool >= pool_count || !(short_pools & (1u << detail.pool)))
            mismatch("insufficient_quantity: detail.pool %u is not short", detail.pool);
        const model_pool_t *p = &event->pools[pool_index[detail.pool]];
        int64_t plain = p->capacity - p->held - p->sold;
        int64_t replaced_units = 0;
        for (uint32_t a = 0; replace && a < model.active_count; a++) {
            const model_hold_t *h = &model.holds[model.active[a]];
            if (h->event != e || h->user != (uint32_t)u) continue;
            for (uint32_t l = 0; l < h->items.pool_count; l++)
                if (h->items.pools[l] == (uint32_t)pool_index[detail.pool])
                    replaced_units += h->items.quantities[l];
        }
        if (detail.available != plain && detail.available != plain + replaced_units)
            mismatch("insufficient_quantity: available %" PRId64 ", model %" PRId64,
                     detail.available, plain);
    }
    if (got == HF_ERROR_INVALID_REQUEST && detail.field == NULL)
        mismatch("invalid_request without detail.field");
    if (got != HF_OK) return;

    /* The seats best_available chose, before anything else. */
    if (best_count > 0) {
        const hf_hold_t *c = hf_core_hold_at(core, core_index);
        if (c == NULL) mismatch("hold answered ok but hf_core_hold_at(%u) is NULL", core_index);
        const hf_item_t *items = hf_core_items(core, c->item_offset);
        bool same = c->seat_count == seat_count + best_count;
        for (uint32_t i = 0; same && i < seat_count; i++) same = items[i].index == seat_index[i];
        for (uint32_t i = 0; same && i < best_count; i++)
            same = items[seat_count + i].index == picked[i];
        if (!same) {
            char got_text[256] = "", want_text[256] = "";
            size_t got_used = 0, want_used = 0;
            for (uint32_t i = 0; i < c->seat_count && got_used < sizeof got_text - 40; i++)
                got_used += (size_t)snprintf(
                    got_text + got_used, sizeof got_text - got_used, "%s%s", i ? " " : "",
                    items[i].index < event->seat_count ? event->seats[items[i].index].id : "?");
            for (uint32_t i = 0; i < seat_count + best_count && want_used < sizeof want_text - 40;
                 i++)
                want_used += (size_t)snprintf(
                    want_text + want_used, sizeof want_text - want_used, "%s%s", i ? " " : "",
                    event->seats[i < seat_count ? seat_index[i] : picked[i - seat_count]].id);
            mismatch("best_available: hold seats [%s], model [%s]", got_text, want_text);
        }
    }

    /* Apply to the model. */
    stats[S_HOLD_OK]++;
    uint32_t replace_mark = model.change_count;
    if (replace) {
        for (uint32_t a = 0; a < model.active_count;) {
            uint32_t index = model.active[a];
            const model_hold_t *h = &model.holds[index];
            if (h->event == e && h->user == (uint32_t)u) {
                model_hold_finish(index, HF_HOLD_RELEASED);
                stats[S_REPLACED]++;
            } else {
                a++;
            }
        }
    }
    GROW(model.holds, model.hold_count, model.hold_capacity);
    uint32_t index = model.hold_count++;
    model_hold_t *h = &model.holds[index];
    memset(h, 0, sizeof *h);
    snprintf(h->id, sizeof h->id, "%s", hold_id);
    h->event = e;
    h->user = (uint32_t)u;
    h->status = HF_HOLD_HELD;
    h->created = model.now;
    h->expires = model.now + (ttl < 0 ? event->ttl_ms : ttl);
    h->order = -1;
    h->core_index = core_index;
    h->items.seat_count = seat_count + best_count;
    h->items.pool_count = pool_count;
    assert_true(h->items.seat_count <= ITEM_SEATS_MAX);
    for (uint32_t i = 0; i < seat_count; i++) h->items.seats[i] = seat_index[i];
    for (uint32_t i = 0; i < best_count; i++) h->items.seats[seat_count + i] = picked[i];
    if (best_count > 0) {
        stats[S_BEST_OK]++;
        stats[S_BEST_PICKED] += best_count;
        if (!best_adjacent) stats[S_BEST_SEPARATE_OK]++;
        if (seat_count > 0) stats[S_BEST_NAMED_OK]++;
        if (replace) stats[S_BEST_REPLACE_OK]++;
    }
    for (uint32_t i = 0; i < h->items.seat_count; i++) {
        uint32_t seat = h->items.seats[i];
        h->total += event->seats[seat].price;
        model_seat_t *s = &event->seats[seat];
        if (s->status == HF_SEAT_AVAILABLE && replace && model.change_count > replace_mark) {
            /* Freed by the replace in this very step? Then the core may have moved it. */
            bool freed = false;
            for (uint32_t c = replace_mark; c < model.change_count; c++)
                if (model.changes[c].event == e && model.changes[c].seat == seat &&
                    model.changes[c].version == s->version &&
                    model.changes[c].status == HF_SEAT_AVAILABLE)
                    freed = true;
            if (freed) {
                /* Undo the model's release change: decide after the core answered. */
                for (uint32_t c = replace_mark; c < model.change_count; c++) {
                    if (model.changes[c].event == e && model.changes[c].seat == seat &&
                        model.changes[c].version == s->version) {
                        model.moved_deferred[model.moved_count] = model.changes[c].deferred;
                        model.changes[c] = model.changes[--model.change_count];
                        break;
                    }
                }
                s->version--;
                s->status = HF_SEAT_HELD;
                s->owner = index + 1;
                model.moved_event = e;
                model.moved_seats[model.moved_count++] = seat;
                continue;
            }
        }
        seat_change(e, seat, HF_SEAT_HELD, index + 1);
    }
    for (uint32_t i = 0; i < pool_count; i++) {
        h->items.pools[i] = (uint32_t)pool_index[i];
        h->items.quantities[i] = pools[i].quantity;
        h->total += event->pools[pool_index[i]].price * pools[i].quantity;
        event->pools[pool_index[i]].held += pools[i].quantity;
        model.expected[HF_MUTATION_POOL]++;
    }
    GROW(model.active, model.active_count, model.active_capacity);
    model.active[model.active_count++] = index;
    model.expected[HF_MUTATION_HOLD_CREATE]++;
    touch_hold(index);
}

/* A hold id for extend, release and commit: mostly live ones, some old, some unknown. */
/* Gives a forgotten hold back to the core from the model's copy, as the engine does from the
 * store's row when a request names it. */
static void revive(uint32_t index) {
    model_hold_t *h = &model.holds[index];
    const model_event_t *event = &model.events[h->event];
    const char *seat_ids[ITEM_SEATS_MAX];
    hf_pool_request_t pools[REQUEST_POOLS_MAX];
    for (uint32_t i = 0; i < h->items.seat_count; i++)
        seat_ids[i] = event->seats[h->items.seats[i]].id;
    for (uint32_t i = 0; i < h->items.pool_count; i++)
        pools[i] = (hf_pool_request_t){event->pools[h->items.pools[i]].id, h->items.quantities[i]};
    hf_stored_hold_t stored = {
        .request = {.event_id = event->id,
                    .user_id = user_ids[h->user],
                    .hold_id = h->id,
                    .seat_ids = seat_ids,
                    .seat_count = h->items.seat_count,
                    .pools = pools,
                    .pool_count = h->items.pool_count,
                    .ttl_ms = -1,
                    /* The store keeps it in the hold's items. */
                    .allocation_id = h->allocation ? model.allocations[h->allocation - 1].id
                                                   : NULL},
        .status = h->status,
        .created_at_ms = h->created,
        .expires_at_ms = h->expires,
        .total = h->total};
    size_t emitted = sink.total; /* the request's advance, before the revive, may have */
    hf_error_t error = hf_core_revive_hold(core, &stored, &h->core_index);
    if (error != HF_OK) mismatch("revive %s: %s", h->id, fx_error_code(error));
    if (sink.total != emitted) mismatch("revive %s emitted a record", h->id);
    h->forgotten = false;
    h->finished_after = 0;
    GROW(model.kept, model.kept_count, model.kept_capacity);
    model.kept[model.kept_count++] = index;
    stats[S_REVIVED]++;
}

static int32_t pick_hold_any(char *hold_id, size_t size);

static int32_t pick_hold(char *hold_id, size_t size) {
    int32_t index = pick_hold_any(hold_id, size);
    if (index >= 0 && model.holds[index].forgotten) revive((uint32_t)index);
    return index;
}

static int32_t pick_hold_any(char *hold_id, size_t size) {
    uint32_t roll = rng_below(100);
    if (roll < 60 && model.active_count > 0) {
        uint32_t index = model.active[rng_below(model.active_count)];
        snprintf(hold_id, size, "%s", model.holds[index].id);
        return (int32_t)index;
    }
    if (roll < 92 && model.hold_count > 0) {
        /* Recent holds are more interesting than ancient ones. */
        uint32_t window = model.hold_count < 64 ? model.hold_count : 64;
        uint32_t index = rng_chance(80) ? model.hold_count - 1 - rng_below(window)
                                        : rng_below(model.hold_count);
        snprintf(hold_id, size, "%s", model.holds[index].id);
        return (int32_t)index;
    }
    snprintf(hold_id, size, rng_chance(50) ? "res_none" : "ord_0");
    return -1;
}

static const char *pick_user(uint32_t owner) {
    uint32_t roll = rng_below(100);
    if (roll < 75) return user_ids[owner];
    if (roll < 95) return user_ids[rng_below(USERS)];
    return "ghost";
}

static void op_extend(void) {
    char hold_id[24];
    int32_t index = pick_hold(hold_id, sizeof hold_id);
    const char *user = pick_user(index >= 0 ? model.holds[index].user : rng_below(USERS));
    int64_t ttl;
    uint32_t roll = rng_below(100);
    uint32_t e = index >= 0 ? model.holds[index].event : 0;
    int64_t max_hold = model.events[e].max_hold_ms;
    int64_t to_cap = index >= 0 ? model.holds[index].created + max_hold - model.now : 0;
    if (roll < 28) ttl = -1;
    else if (roll < 55) ttl = rng_range(1, max_hold);
    else if (roll < 78) ttl = rng_range(1, 5000);
    else if (roll < 88 && to_cap > 1) ttl = to_cap - rng_below(2); /* exactly at the cap */
    else ttl = rng_range(max_hold, 4 * max_hold);
    snprintf(description, sizeof description, "extend %s user=%s ttl=%" PRId64, hold_id, user, ttl);

    model_expire(model.now);
    stats[S_EXTEND]++;
    uint32_t set = 0;
    model_hold_t *h = index >= 0 ? &model.holds[index] : NULL;
    if (h == NULL) {
        set = 1u << HF_ERROR_HOLD_NOT_FOUND;
    } else {
        if (strcmp(user_ids[h->user], user) != 0) set |= 1u << HF_ERROR_NOT_OWNER;
        if (h->status == HF_HOLD_EXPIRED) set |= 1u << HF_ERROR_HOLD_EXPIRED;
        if (h->status == HF_HOLD_RELEASED || h->status == HF_HOLD_CONFIRMED)
            set |= 1u << HF_ERROR_HOLD_NOT_ACTIVE;
    }
    bool capped = false;
    hf_error_t got = hf_core_extend(core, hold_id, user, ttl, model.now, &capped);
    expect_result(got, set);
    if (got != HF_OK) return;
    stats[S_EXTEND_OK]++;
    int64_t wanted = model.now + (ttl < 0 ? model.events[e].ttl_ms : ttl);
    int64_t cap = h->created + max_hold;
    bool want_capped = wanted > cap;
    if (capped != want_capped) mismatch("extend: capped %d, model %d", capped, want_capped);
    int64_t expires = want_capped ? cap : wanted;
    if (expires > h->expires) {
        h->expires = expires;
        model.expected[HF_MUTATION_HOLD_UPDATE]++;
    } else {
        model.extend_unchanged = 1;
    }
    touch_hold((uint32_t)index);
}

static void op_release(void) {
    char hold_id[24];
    int32_t index = pick_hold(hold_id, sizeof hold_id);
    const char *user = pick_user(index >= 0 ? model.holds[index].user : rng_below(USERS));
    snprintf(description, sizeof description, "release %s user=%s", hold_id, user);
    model_expire(model.now);
    stats[S_RELEASE]++;
    uint32_t set = 0;
    model_hold_t *h = index >= 0 ? &model.holds[index] : NULL;
    if (h == NULL) {
        set = 1u << HF_ERROR_HOLD_NOT_FOUND;
    } else {
        if (strcmp(user_ids[h->user], user) != 0) set |= 1u << HF_ERROR_NOT_OWNER;
        if (h->status == HF_HOLD_CONFIRMED) set |= 1u << HF_ERROR_ALREADY_CONFIRMED;
    }
    hf_error_t got = hf_core_release(core, hold_id, user, model.now);
    expect_result(got, set);
    if (got != HF_OK) return;
    stats[S_RELEASE_OK]++;
    if (h->status == HF_HOLD_HELD) model_hold_finish((uint32_t)index, HF_HOLD_RELEASED);
    touch_hold((uint32_t)index);
}

/* A hold becomes an order: committed, or paid in time (its seats go from held to sold), or
 * paid late (it had expired: its seats go from available to sold and its units from free to
 * sold). Returns the model order. */
static uint32_t model_order_from_hold(uint32_t index, const char *order_id, const char *payment,
                                      uint32_t core_order) {
    model_hold_t *h = &model.holds[index];
    model_event_t *event = &model.events[h->event];
    bool late = h->status == HF_HOLD_EXPIRED;
    GROW(model.orders, model.order_count, model.order_capacity);
    uint32_t o = model.order_count++;
    model_order_t *order = &model.orders[o];
    memset(order, 0, sizeof *order);
    snprintf(order->id, sizeof order->id, "%s", order_id);
    order->event = h->event;
    order->user = h->user;
    order->hold = index;
    order->status = HF_ORDER_CONFIRMED;
    order->created = model.now;
    order->total = h->total;
    order->items = h->items;
    order->core_index = core_order;
    snprintf(order->payment, sizeof order->payment, "%s", payment);
    h->status = HF_HOLD_CONFIRMED;
    h->order = (int32_t)o;
    if (late) list_remove(model.kept, &model.kept_count, index);
    else list_remove(model.active, &model.active_count, index);
    for (uint32_t i = 0; i < h->items.seat_count; i++)
        seat_change(h->event, h->items.seats[i], HF_SEAT_SOLD, o + 1);
    for (uint32_t i = 0; i < h->items.pool_count; i++) {
        if (!late) event->pools[h->items.pools[i]].held -= h->items.quantities[i];
        event->pools[h->items.pools[i]].sold += h->items.quantities[i];
        model.expected[HF_MUTATION_POOL]++;
    }
    GROW(model.live, model.live_count, model.live_capacity);
    model.live[model.live_count++] = o;
    model.expected[HF_MUTATION_HOLD_UPDATE]++;
    model.expected[HF_MUTATION_ORDER_CREATE]++;
    model.expected[HF_MUTATION_ORDER_ITEM] += h->items.seat_count + h->items.pool_count;
    touch_hold(index);
    return o;
}

static void op_commit(void) {
    char hold_id[24], order_id[24], payment[24];
    int32_t index = pick_hold(hold_id, sizeof hold_id);
    const char *user = pick_user(index >= 0 ? model.holds[index].user : rng_below(USERS));
    snprintf(order_id, sizeof order_id, "ord_%u", model.order_count);
    snprintf(payment, sizeof payment, "pi_%" PRIu64, step);
    model_expire(model.now);
    stats[S_COMMIT]++;
    uint32_t set = 0;
    model_hold_t *h = index >= 0 ? &model.holds[index] : NULL;
    /* A confirmed hold is committed again with its own payment, none, or another one, which
     * is refused: a second payment is never absorbed. */
    const char *paid = payment;
    if (h && h->status == HF_HOLD_CONFIRMED) {
        uint32_t choice = rng_below(3);
        if (choice == 0) paid = model.orders[h->order].payment;
        else if (choice == 1) paid = NULL;
    }
    snprintf(description, sizeof description, "commit %s user=%s order=%s payment=%s", hold_id,
             user, order_id, paid ? paid : "none");
    if (h == NULL) {
        set = 1u << HF_ERROR_HOLD_NOT_FOUND;
    } else {
        if (strcmp(user_ids[h->user], user) != 0) set |= 1u << HF_ERROR_NOT_OWNER;
        if (h->status == HF_HOLD_EXPIRED) set |= 1u << HF_ERROR_HOLD_EXPIRED;
        if (h->status == HF_HOLD_RELEASED) set |= 1u << HF_ERROR_HOLD_RELEASED;
        if (h->status == HF_HOLD_CONFIRMED && paid == payment)
            set |= 1u << HF_ERROR_ALREADY_CONFIRMED;
    }
    uint32_t core_order = UINT32_MAX;
    hf_error_t got = hf_core_commit(core, hold_id, user, order_id, paid, model.now, &core_order);
    expect_result(got, set);
    if (got == HF_ERROR_ALREADY_CONFIRMED && core_order != model.orders[h->order].core_index)
        mismatch("commit with another payment: order index %u, the hold's %u", core_order,
                 model.orders[h->order].core_index);
    if (got != HF_OK) {
        if (hf_core_order_find(core, order_id, NULL) != NULL)
            mismatch("a failed commit created order %s", order_id);
        return;
    }
    stats[S_COMMIT_OK]++;
    touch_hold((uint32_t)index);
    if (h->status == HF_HOLD_CONFIRMED) {
        if (core_order != model.orders[h->order].core_index)
            mismatch("repeated commit: order index %u, first %u", core_order,
                     model.orders[h->order].core_index);
        if (hf_core_order_find(core, order_id, NULL) != NULL)
            mismatch("a repeated commit created order %s", order_id);
        return;
    }
    compare_order(model_order_from_hold((uint32_t)index, order_id, payment, core_order));
}

/* The refund a paid order's cancel owes: its total to its payment, named by the order. */
static void model_cancel_refund(const model_order_t *o, const char *refund_id) {
    GROW(model.refunds, model.refund_count, model.refund_capacity);
    uint32_t index = model.refund_count++;
    model_refund_t *r = &model.refunds[index];
    memset(r, 0, sizeof *r);
    snprintf(r->id, sizeof r->id, "%s", refund_id);
    snprintf(r->intent, sizeof r->intent, "%s", o->payment);
    snprintf(r->reservation, sizeof r->reservation, "%s", o->booked ? "" : model.holds[o->hold].id);
    r->amount = o->total;
    r->reason = HF_REFUND_ORDER_CANCELLED;
    r->status = HF_REFUND_PENDING;
    r->created = model.now;
    model.expected[HF_MUTATION_REFUND]++;
    const hf_order_t *order = hf_core_order_at(core, o->core_index);
    if (order->refund != index + 1)
        mismatch("cancel of %s: refund %u, model %u", o->id, order->refund, index + 1);
    compare_refund(index);
}

static void op_cancel(void) {
    char order_id[24];
    int32_t index = -1;
    uint32_t roll = rng_below(100);
    if (roll < 70 && model.live_count > 0) index = (int32_t)model.live[rng_below(model.live_count)];
    else if (roll < 90 && model.order_count > 0) index = (int32_t)rng_below(model.order_count);
    if (index >= 0) snprintf(order_id, sizeof order_id, "%s", model.orders[index].id);
    else snprintf(order_id, sizeof order_id, rng_chance(50) ? "ord_none" : "res_0");
    const char *user = pick_user(index >= 0 ? model.orders[index].user : rng_below(USERS));
    snprintf(description, sizeof description, "cancel %s user=%s", order_id, user);
    model_expire(model.now);
    stats[S_CANCEL]++;
    uint32_t set = 0;
    model_order_t *o = index >= 0 ? &model.orders[index] : NULL;
    if (o == NULL) set = 1u << HF_ERROR_ORDER_NOT_FOUND;
    else if (strcmp(user_ids[o->user], user) != 0) set = 1u << HF_ERROR_NOT_OWNER;
    char refund_id[24];
    snprintf(refund_id, sizeof refund_id, "ref_c%" PRIu64, step);
    hf_error_t got = hf_core_cancel(core, order_id, user, refund_id, model.now);
    /* An exchanged order is final (sim_exchange.h); its error is past the sets' 32 bits. */
    if (set == 0 && o->status == HF_ORDER_EXCHANGED) {
        if (got != HF_ERROR_ORDER_NOT_ACTIVE)
            mismatch("cancel of exchanged %s: core answered %s", order_id,
                     got == HF_OK ? "ok" : fx_error_code(got));
        compare_order((uint32_t)index);
        return;
    }
    expect_result(got, set);
    if (got != HF_OK) return;
    stats[S_CANCEL_OK]++;
    if (o->status == HF_ORDER_CONFIRMED && o->payment[0]) model_cancel_refund(o, refund_id);
    if (o->status == HF_ORDER_CONFIRMED) {
        const model_items_t *items = &o->items;
        model_event_t *event = &model.events[o->event];
        o->status = HF_ORDER_CANCELLED;
        if (o->booked) stats[S_BOOK_CANCEL_OK]++;
        list_remove(model.live, &model.live_count, (uint32_t)index);
        model_came_free(o->event, items);
        for (uint32_t i = 0; i < items->seat_count; i++)
            seat_change(o->event, items->seats[i], HF_SEAT_AVAILABLE, 0);
        for (uint32_t i = 0; i < items->pool_count; i++)
            event->pools[items->pools[i]].sold -= items->quantities[i];
        model.expected[HF_MUTATION_POOL] += items->pool_count;
        model.expected[HF_MUTATION_ORDER_UPDATE]++;
    }
    compare_order((uint32_t)index);
}

/* A booking (hf_core_book): seats at the version last seen (current, or stale), pools. */
static void op_book(void) {
    char seat_text[REQUEST_SEATS_MAX][SEAT_ID_SIZE];
    const char *seat_ids[REQUEST_SEATS_MAX];
    uint32_t versions[REQUEST_SEATS_MAX];
    hf_pool_request_t pools[REQUEST_POOLS_MAX];
    char pool_text[REQUEST_POOLS_MAX][HF_ID_SIZE_MAX + 1];
    uint32_t seat_count = 0, pool_count = 0;

    uint32_t e = rng_below(EVENTS);
    bool unknown_event = rng_chance(3);
    model_event_t *event = &model.events[e];
    const char *event_id = unknown_event ? "nope" : event->id;
    bool empty_user = rng_chance(2);
    uint32_t u = rng_below(USERS);
    const char *user_id = empty_user ? "" : user_ids[u];
    uint32_t wanted = event->seat_count > 0 ? rng_below(5) : (rng_chance(10) ? 1 : 0);
    for (uint32_t i = 0; i < wanted; i++) {
        uint32_t roll = rng_below(100);
        if (event->seat_count == 0 || roll < 4) {
            snprintf(seat_text[seat_count], SEAT_ID_SIZE, "%s",
                     bad_seat_ids[rng_below(sizeof bad_seat_ids / sizeof bad_seat_ids[0])]);
            versions[seat_count] = 1;
        } else if (roll < 8 && seat_count > 0) {
            uint32_t other = rng_below(seat_count);
            memcpy(seat_text[seat_count], seat_text[other], SEAT_ID_SIZE);
            versions[seat_count] = versions[other];
        } else {
            uint32_t seat;
            if (roll < 75) {
                uint32_t free_seats[SEATS_MAX], free_count = 0;
                for (uint32_t s = 0; s < event->seat_count; s++)
                    if (event->seats[s].status == HF_SEAT_AVAILABLE) free_seats[free_count++] = s;
                seat = free_count ? free_seats[rng_below(free_count)]
                                  : rng_below(event->seat_count);
            } else {
                seat = rng_below(event->seat_count);
            }
            snprintf(seat_text[seat_count], SEAT_ID_SIZE, "%s", event->seats[seat].id);
            uint32_t version = event->seats[seat].version;
            if (rng_chance(15)) /* the client saw an older (or a made-up newer) version */
                version = version > 1 && rng_chance(70) ? version - 1 - rng_below(version - 1)
                                                        : version + 1 + rng_below(2);
            versions[seat_count] = version;
        }
        seat_ids[seat_count] = seat_text[seat_count];
        seat_count++;
    }
    if (event->pool_count > 0 || rng_chance(5)) {
        uint32_t lines = rng_below(3);
        if (event->seat_count == 0 && lines == 0 && rng_chance(80)) lines = 1;
        for (uint32_t i = 0; i < lines; i++) {
            uint32_t roll = rng_below(100);
            if (event->pool_count == 0 || roll < 5)
                snprintf(pool_text[pool_count], sizeof pool_text[0], "NOPE");
            else if (roll < 10 && pool_count > 0)
                memcpy(pool_text[pool_count], pool_text[0], sizeof pool_text[0]);
            else
                snprintf(pool_text[pool_count], sizeof pool_text[0], "%s",
                         event->pools[rng_below(event->pool_count)].id);
            pools[pool_count].pool_id = pool_text[pool_count];
            pools[pool_count].quantity = rng_chance(5) ? 5 : 1 + rng_below(3);
            pool_count++;
        }
    }
    bool no_versions = seat_count > 0 && rng_chance(2);
    bool replace = rng_chance(10); /* no meaning for a booking: must change nothing */
    char order_id[24], payment[24];
    bool reused_id = model.order_count > 0 && rng_chance(2);
    if (reused_id)
        snprintf(order_id, sizeof order_id, "%s", model.orders[rng_below(model.order_count)].id);
    else snprintf(order_id, sizeof order_id, "ord_%u", model.order_count);
    snprintf(payment, sizeof payment, "pb_%" PRIu64, step);

    size_t used = (size_t)snprintf(
        description, sizeof description, "book %s user=\"%s\" event=%s%s%s seats=[", order_id,
        user_id, event_id, replace ? " replace" : "", no_versions ? " versions=NULL" : "");
    for (uint32_t i = 0; i < seat_count; i++)
        used += (size_t)snprintf(description + used, sizeof description - used, "%s\"%s\"@%u",
                                 i ? "," : "", seat_ids[i], versions[i]);
    used += (size_t)snprintf(description + used, sizeof description - used, "] pools={");
    for (uint32_t i = 0; i < pool_count; i++)
        used += (size_t)snprintf(description + used, sizeof description - used, "%s%s:%u",
                                 i ? "," : "", pools[i].pool_id, pools[i].quantity);
    snprintf(description + used, sizeof description - used, "}");

    /* The model. */
    model_expire(model.now);
    stats[S_BOOK]++;
    uint32_t set = 0;
    uint32_t unknown_items[REQUEST_SEATS_MAX], unknown_count = 0;
    uint32_t moved_items[REQUEST_SEATS_MAX], moved_count = 0;
    uint32_t seat_index[REQUEST_SEATS_MAX];
    int32_t pool_index[REQUEST_POOLS_MAX];
    uint32_t missing_pools = 0, short_pools = 0;
    int64_t units = seat_count;
    bool duplicates = false;
    for (uint32_t i = 0; i < seat_count; i++)
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(seat_ids[i], seat_ids[j]) == 0) duplicates = true;
    for (uint32_t i = 0; i < pool_count; i++) {
        units += pools[i].quantity;
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(pools[i].pool_id, pools[j].pool_id) == 0) duplicates = true;
    }
    if (empty_user || seat_count + pool_count == 0 || duplicates || reused_id)
        set |= 1u << HF_ERROR_INVALID_REQUEST;
    if (unknown_event) {
        set |= 1u << HF_ERROR_EVENT_NOT_FOUND;
    } else {
        if (units > event->per_hold || no_versions) set |= 1u << HF_ERROR_INVALID_REQUEST;
        for (uint32_t i = 0; i < seat_count; i++) {
            bool found = false;
            for (uint32_t s = 0; s < event->seat_count && !found; s++)
                if (strcmp(event->seats[s].id, seat_ids[i]) == 0) {
                    found = true;
                    seat_index[i] = s;
                }
            if (!found) {
                unknown_items[unknown_count++] = i;
                continue;
            }
            const model_seat_t *s = &event->seats[seat_index[i]];
            if (s->status != HF_SEAT_AVAILABLE || s->version != versions[i])
                moved_items[moved_count++] = i;
        }
        if (unknown_count) set |= 1u << HF_ERROR_SEAT_NOT_FOUND;
        if (moved_count && !no_versions) set |= 1u << HF_ERROR_VERSION_CONFLICT;
        for (uint32_t i = 0; i < pool_count; i++) {
            pool_index[i] = -1;
            for (uint32_t p = 0; p < event->pool_count; p++)
                if (strcmp(event->pools[p].id, pools[i].pool_id) == 0) pool_index[i] = (int32_t)p;
            if (pool_index[i] < 0) {
                missing_pools |= 1u << i;
                continue;
            }
            const model_pool_t *p = &event->pools[pool_index[i]];
            if (p->capacity - p->held - p->sold < pools[i].quantity) short_pools |= 1u << i;
        }
        if (missing_pools) set |= 1u << HF_ERROR_POOL_NOT_FOUND;
        if (short_pools) set |= 1u << HF_ERROR_INSUFFICIENT_QUANTITY;
        if (event->per_user > 0 && !empty_user &&
            (int64_t)user_units(e, u, true, true) + units > event->per_user)
            set |= 1u << HF_ERROR_USER_LIMIT_EXCEEDED;
    }

    /* The core. */
    hf_hold_request_t request = {
        .event_id = event_id,
        .user_id = user_id,
        .seat_ids = seat_count ? seat_ids : NULL,
        .seat_count = seat_count,
        .seat_versions = no_versions ? NULL : versions,
        .pools = pool_count ? pools : NULL,
        .pool_count = pool_count,
        .ttl_ms = -1,
        .replace_existing = replace,
    };
    hf_error_detail_t detail;
    memset(&detail, 0, sizeof detail);
    detail.item_count = UINT32_MAX;
    uint32_t core_order = UINT32_MAX;
    hf_error_t got = hf_core_book(core, &request, order_id, payment, model.now, &core_order,
                                  &detail);
    expect_result(got, set);
    if (got == HF_ERROR_SEAT_NOT_FOUND || got == HF_ERROR_VERSION_CONFLICT) {
        const uint32_t *want = got == HF_ERROR_SEAT_NOT_FOUND ? unknown_items : moved_items;
        uint32_t want_count = got == HF_ERROR_SEAT_NOT_FOUND ? unknown_count : moved_count;
        bool same = detail.item_count == want_count;
        for (uint32_t i = 0; same && i < want_count; i++) same = detail.items[i] == want[i];
        if (!same) {
            char text[128] = "";
            size_t length = 0;
            for (uint32_t i = 0; i < detail.item_count && i < 16 && length < sizeof text - 8; i++)
                length += (size_t)snprintf(text + length, sizeof text - length, "%s%u",
                                           i ? "," : "", detail.items[i]);
            mismatch("booking %s: detail.items [%s] (%u), model %u items (first %u)",
                     fx_error_code(got), text, detail.item_count, want_count,
                     want_count ? want[0] : UINT32_MAX);
        }
    }
    if (got == HF_ERROR_VERSION_CONFLICT) stats[S_BOOK_CONFLICT]++;
    if (got == HF_ERROR_POOL_NOT_FOUND &&
        (detail.pool >= pool_count || !(missing_pools & (1u << detail.pool))))
        mismatch("booking pool_not_found: detail.pool %u is not an unknown pool", detail.pool);
    if (got == HF_ERROR_INSUFFICIENT_QUANTITY) {
        if (detail.pool >= pool_count || !(short_pools & (1u << detail.pool)))
            mismatch("booking insufficient_quantity: detail.pool %u is not short", detail.pool);
        const model_pool_t *p = &event->pools[pool_index[detail.pool]];
        if (detail.available != p->capacity - p->held - p->sold)
            mismatch("booking insufficient_quantity: available %" PRId64 ", model %" PRId64,
                     detail.available, p->capacity - p->held - p->sold);
    }
    if (got == HF_ERROR_INVALID_REQUEST && detail.field == NULL)
        mismatch("booking invalid_request without detail.field");
    if (got != HF_OK) {
        if (hf_core_order_at(core, model.order_count) != NULL)
            mismatch("a failed booking created an order");
        return;
    }

    /* Apply to the model. */
    stats[S_BOOK_OK]++;
    GROW(model.orders, model.order_count, model.order_capacity);
    uint32_t o = model.order_count++;
    model_order_t *order = &model.orders[o];
    memset(order, 0, sizeof *order);
    snprintf(order->id, sizeof order->id, "%s", order_id);
    order->event = e;
    order->user = u;
    order->booked = true;
    order->status = HF_ORDER_CONFIRMED;
    order->created = model.now;
    order->core_index = core_order;
    snprintf(order->payment, sizeof order->payment, "%s", payment);
    order->items.seat_count = seat_count;
    order->items.pool_count = pool_count;
    for (uint32_t i = 0; i < seat_count; i++) {
        order->items.seats[i] = seat_index[i];
        order->total += event->seats[seat_index[i]].price;
        seat_change(e, seat_index[i], HF_SEAT_SOLD, o + 1);
    }
    for (uint32_t i = 0; i < pool_count; i++) {
        order->items.pools[i] = (uint32_t)pool_index[i];
        order->items.quantities[i] = pools[i].quantity;
        order->total += event->pools[pool_index[i]].price * pools[i].quantity;
        event->pools[pool_index[i]].sold += pools[i].quantity;
        model.expected[HF_MUTATION_POOL]++;
    }
    GROW(model.live, model.live_count, model.live_capacity);
    model.live[model.live_count++] = o;
    model.expected[HF_MUTATION_ORDER_CREATE]++;
    model.expected[HF_MUTATION_ORDER_ITEM] += seat_count + pool_count;
    const fx_record_t *created = fx_sink_first(&sink, HF_MUTATION_ORDER_CREATE);
    if (created == NULL) mismatch("booking: no ORDER_CREATE record");
    if (strcmp(created->order_id, order_id) != 0 || created->hold_id[0] != '\0' ||
        strcmp(created->user_id, user_id) != 0 || strcmp(created->event_id, event->id) != 0 ||
        created->total != order->total)
        mismatch("booking: ORDER_CREATE order %s hold \"%s\" user %s event %s total %" PRId64
                 ", model %s, no hold, %s, %s, %" PRId64,
                 created->order_id, created->hold_id, created->user_id, created->event_id,
                 created->total, order_id, user_id, event->id, order->total);
    if (strcmp(hf_core_string(core, hf_core_order_at(core, core_order)->payment_ref), payment) != 0)
        mismatch("booking: payment_ref differs");
    /* replace_existing means nothing here: the user's holds stay (compare_state checks). */
    compare_order(o);
}

#endif
