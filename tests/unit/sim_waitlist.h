/* The simulation's waitlists (after sim_allocations.h, in test_simulation.c; API.md section
 * 14): joins (a random user, any section, one section or one pool, quantity 1 to
 * max_seats_per_hold, and bad ones), cancels and PATCHes of the setting (on or off, a new
 * offer TTL, within max_hold_ms or past it), each decided by the model first; and what happens
 * when inventory comes free. Three of the four events start with a waitlist (delta's joins
 * answer waitlist_disabled until a PATCH turns it on).
 *
 * The model marks, as the core does, the targets of whatever a lapsed or released hold, a
 * cancelled order, an exchanged order or an allocation's release gives back (model_came_free,
 * while entries wait: "any section", each seat's section, each pool), and at the end of the
 * command (and of every advance) settles: the waiting entries in join order whose target was
 * marked and whose whole quantity the target's free public inventory fills are offered, each
 * as an ordinary hold of its user with TTL offer_ttl_ms, the seats picked by the model's own
 * best_available (sim_holds.h: an adjacent block first, else the best separate seats), so the
 * exact seats are predicted and compared like any hold's. An offer the user's limit refuses
 * leaves its entry waiting; inventory that fills no entry stays on sale. A seat freed while
 * its section is marked is told only once the command settled, and only when still available
 * (change_t.deferred): an offered seat is told held, never available in between.
 *
 * An offer's end is read off its hold: committed (or paid) it is fulfilled, released or
 * lapsed it is lapsed, and its inventory goes down the line like any other. compare_state
 * compares every live entry (and those the operation touched; every entry at the full
 * comparisons) through hf_core_waitlist_get: status, quantity, target, position among the
 * event's waiting entries, the offer's reservation and expiry; and the counts by status. */
#ifndef HF_TESTS_SIM_WAITLIST_H
#define HF_TESTS_SIM_WAITLIST_H

typedef struct model_entry {
    char id[16]; /* "w_wlN": its offer's hold is "res_wlN", never one of the sim's "res_N" */
    uint32_t event, user;
    uint32_t target; /* 0 any section, 1 + s, 1 + sections + p, as the core's */
    uint32_t quantity, sequence;
    uint8_t status;
    uint32_t hold; /* the offer's model hold + 1 once offered, else 0 */
} model_entry_t;

/* Holds offered in a settle the core had not run yet (op_clock expires the model first):
 * their core indexes are looked up after the operation. */
static uint32_t offers_pending[64], offers_pending_count;

static void entry_touch(uint32_t index) {
    for (uint32_t i = 0; i < model.touched_entry_count; i++)
        if (model.touched_entries[i] == index) return;
    if (model.touched_entry_count < 64) model.touched_entries[model.touched_entry_count++] = index;
}

static void entry_status(uint32_t index, uint8_t status) {
    model_entry_t *entry = &model.entries[index];
    if (entry->status == HF_WAITLIST_WAITING) model.events[entry->event].waiting--;
    model.entries_by_status[entry->status]--;
    model.entries_by_status[status]++;
    entry->status = status;
    model.expected[HF_MUTATION_WAITLIST]++;
    entry_touch(index);
}

/* The user's live (waiting or offered) entry on the event, else -1. */
static int32_t entry_live(uint32_t event, uint32_t user) {
    uint32_t latest = model.latest[event][user];
    if (latest == 0 || model.entries[latest - 1].status > HF_WAITLIST_OFFERED) return -1;
    return (int32_t)latest - 1;
}

/* Offers whose hold ended since: committed, fulfilled; released or lapsed, lapsed. */
static void entries_follow_holds(void) {
    for (uint32_t e = 0; e < EVENTS; e++) {
        for (uint32_t u = 0; u < USERS; u++) {
            int32_t live = entry_live(e, u);
            if (live < 0 || model.entries[live].status != HF_WAITLIST_OFFERED) continue;
            uint8_t hold = model.holds[model.entries[live].hold - 1].status;
            if (hold == HF_HOLD_HELD) continue;
            bool fulfilled = hold == HF_HOLD_CONFIRMED;
            entry_status((uint32_t)live, fulfilled ? HF_WAITLIST_FULFILLED : HF_WAITLIST_LAPSED);
            stats[fulfilled ? S_WAITLIST_FULFILLED : S_WAITLIST_LAPSED]++;
        }
    }
}

/* The free public inventory of a target: available seats (an allocation's are not), or a
 * pool's free units (the sim allocates no units). */
static int64_t target_free(const model_event_t *event, uint32_t target) {
    if (target > event->section_count) {
        const model_pool_t *pool = &event->pools[target - 1 - event->section_count];
        return pool->capacity - pool->held - pool->sold;
    }
    int64_t free = 0;
    for (uint32_t s = 0; s < event->seat_count; s++)
        free += event->seats[s].status == HF_SEAT_AVAILABLE &&
                (target == 0 || event->seats[s].section == target - 1);
    return free;
}

/* The entry's offer, as the core's hf_core_hold of it: refused (false) by the user's limit,
 * else held with the model's best_available picks (adjacent first) or the pool's units. */
static bool model_offer(uint32_t index) {
    model_entry_t *entry = &model.entries[index];
    uint32_t e = entry->event;
    model_event_t *event = &model.events[e];
    if (event->per_user > 0 &&
        user_units(e, entry->user, true, true) + entry->quantity > event->per_user)
        return false;
    uint32_t picked[ITEM_SEATS_MAX];
    bool pool = entry->target > event->section_count;
    if (!pool) {
        pick_query_t query = {e, (int32_t)entry->user, false, NULL, 0};
        int32_t section = (int32_t)entry->target - 1;
        bool adjacent = model_pick(&query, section, entry->quantity, true, picked);
        if (!adjacent && !model_pick(&query, section, entry->quantity, false, picked))
            mismatch("model bug: %u free seats for %s but no pick", entry->quantity, entry->id);
        if (!adjacent) stats[S_WAITLIST_OFFER_SEPARATE]++;
    }
    GROW(model.holds, model.hold_count, model.hold_capacity);
    uint32_t hold_index = model.hold_count++;
    model_hold_t *h = &model.holds[hold_index];
    memset(h, 0, sizeof *h);
    snprintf(h->id, sizeof h->id, "res_%s", entry->id + 2);
    h->event = e;
    h->user = entry->user;
    h->status = HF_HOLD_HELD;
    h->created = model.now;
    h->expires = model.now + event->offer_ttl_ms;
    h->order = -1;
    if (pool) {
        uint32_t p = entry->target - 1 - event->section_count;
        h->items.pool_count = 1;
        h->items.pools[0] = p;
        h->items.quantities[0] = entry->quantity;
        h->total = event->pools[p].price * entry->quantity;
        event->pools[p].held += entry->quantity;
        model.expected[HF_MUTATION_POOL]++;
        stats[S_WAITLIST_OFFER_POOL]++;
    } else {
        h->items.seat_count = entry->quantity;
        for (uint32_t i = 0; i < entry->quantity; i++) {
            h->items.seats[i] = picked[i];
            h->total += event->seats[picked[i]].price;
            seat_change(e, picked[i], HF_SEAT_HELD, hold_index + 1);
        }
    }
    h->core_index = UINT32_MAX;
    if (hf_core_hold_find(core, h->id, &h->core_index) == NULL) {
        assert_true(offers_pending_count < 64);
        offers_pending[offers_pending_count++] = hold_index;
    }
    GROW(model.active, model.active_count, model.active_capacity);
    model.active[model.active_count++] = hold_index;
    model.expected[HF_MUTATION_HOLD_CREATE]++;
    touch_hold(hold_index);
    entry->hold = hold_index + 1;
    entry_status(index, HF_WAITLIST_OFFERED);
    return true;
}

/* One event's settle: its waiting entries in join order, each whose target came free and
 * whose quantity the target can fill offered (the free counts only fall meanwhile, so one
 * pass in join order is the core's repeated search for the first fillable entry). */
static void settle_event(uint32_t e) {
    model_event_t *event = &model.events[e];
    uint32_t line[USERS], count = 0;
    for (uint32_t u = 0; u < USERS; u++) {
        int32_t live = entry_live(e, u);
        if (live < 0 || model.entries[live].status != HF_WAITLIST_WAITING) continue;
        uint32_t at = count++;
        while (at > 0 && model.entries[line[at - 1]].sequence > model.entries[live].sequence) {
            line[at] = line[at - 1];
            at--;
        }
        line[at] = (uint32_t)live;
    }
    for (uint32_t i = 0; i < count; i++) {
        const model_entry_t *entry = &model.entries[line[i]];
        if (!event->dirty[entry->target] ||
            target_free(event, entry->target) < (int64_t)entry->quantity)
            continue;
        stats[S_WAITLIST_OFFER]++;
        if (!model_offer(line[i])) stats[S_WAITLIST_OFFER_REFUSED]++;
    }
    memset(event->dirty, 0, sizeof event->dirty);
    event->marked = false;
    /* The seats freed meanwhile are told now, those still available: as they are. */
    for (uint32_t c = 0; c < model.change_count;) {
        change_t *change = &model.changes[c];
        const model_seat_t *seat = &event->seats[change->seat];
        if (change->event != e || !change->deferred) {
            c++;
        } else if (seat->status == HF_SEAT_AVAILABLE && seat->version == change->version) {
            change->deferred = false;
            c++;
        } else {
            model.changes[c] = model.changes[--model.change_count];
        }
    }
}

static void waitlist_settle_model(void) {
    entries_follow_holds();
    for (uint32_t e = 0; e < EVENTS; e++)
        if (model.events[e].marked) settle_event(e);
}

/* After every operation: what its command freed is settled, and the offers' holds found. */
static void waitlist_after_operation(void) {
    waitlist_settle_model();
    for (uint32_t i = 0; i < offers_pending_count; i++) {
        model_hold_t *h = &model.holds[offers_pending[i]];
        if (hf_core_hold_find(core, h->id, &h->core_index) == NULL)
            mismatch("offer %s: no such hold in the core", h->id);
    }
    offers_pending_count = 0;
}

/* ---- comparison ---- */

static uint32_t entry_position(uint32_t index) {
    const model_entry_t *entry = &model.entries[index];
    uint32_t position = 0;
    for (uint32_t u = 0; u < USERS; u++) {
        int32_t live = entry_live(entry->event, u);
        position += live >= 0 && model.entries[live].status == HF_WAITLIST_WAITING &&
                    model.entries[live].sequence <= entry->sequence;
    }
    return position;
}

static void compare_entry(uint32_t index) {
    const model_entry_t *m = &model.entries[index];
    const model_event_t *event = &model.events[m->event];
    hf_waitlist_view_t view;
    hf_error_t got = hf_core_waitlist_get(core, event->id, m->id, &view);
    if (got != HF_OK) mismatch("entry %s: get answered %s", m->id, fx_error_code(got));
    if (view.status != m->status)
        mismatch("entry %s: %s, model %s", m->id, hf_waitlist_status_name(view.status),
                 hf_waitlist_status_name(m->status));
    const char *section = m->target >= 1 && m->target <= event->section_count
                              ? event->definition.sections[m->target - 1].id
                              : NULL;
    const char *pool = m->target > event->section_count
                           ? event->pools[m->target - 1 - event->section_count].id
                           : NULL;
    if (view.quantity != m->quantity || view.sequence != m->sequence ||
        strcmp(view.user_id, user_ids[m->user]) != 0 ||
        (section == NULL) != (view.section == NULL) || (pool == NULL) != (view.pool == NULL) ||
        (section && strcmp(section, view.section) != 0) || (pool && strcmp(pool, view.pool) != 0))
        mismatch("entry %s: quantity %u join %u user %s section %s pool %s, model %u %u %s %s %s",
                 m->id, view.quantity, view.sequence, view.user_id,
                 view.section ? view.section : "-", view.pool ? view.pool : "-", m->quantity,
                 m->sequence, user_ids[m->user], section ? section : "-", pool ? pool : "-");
    uint32_t position = m->status == HF_WAITLIST_WAITING ? entry_position(index) : 0;
    if (view.position != position)
        mismatch("entry %s: position %u, model %u", m->id, view.position, position);
    const model_hold_t *h = m->hold ? &model.holds[m->hold - 1] : NULL;
    if ((h == NULL) != (view.reservation_id == NULL) ||
        (h && strcmp(h->id, view.reservation_id) != 0))
        mismatch("entry %s: reservation %s, model %s", m->id,
                 view.reservation_id ? view.reservation_id : "none", h ? h->id : "none");
    if (m->status != HF_WAITLIST_OFFERED) return;
    if (view.expires_at_ms != h->expires)
        mismatch("entry %s: offer expires at epoch+%" PRId64 ", model epoch+%" PRId64, m->id,
                 view.expires_at_ms - EPOCH, h->expires - EPOCH);
    const char *linked = hf_core_hold_waitlist_id(core, h->core_index);
    if (linked == NULL || strcmp(linked, m->id) != 0)
        mismatch("hold %s: the offer of %s, model %s", h->id, linked ? linked : "none", m->id);
}

/* The staff's list of an event (every status, and each one), three entries a page, against
 * the model's entries of that event in join order. */
static void compare_waitlist_list(uint32_t e) {
    for (int status = -1; status <= HF_WAITLIST_CANCELLED; status++) {
        uint32_t next = 0; /* the model's entry to match next */
        int64_t after = -1;
        bool more = true;
        while (more) {
            hf_waitlist_view_t views[3];
            uint32_t count = hf_core_waitlist_list(core, model.events[e].id, status >= 0,
                                                   (uint8_t)(status < 0 ? 0 : status), after, 3,
                                                   views, &more);
            for (uint32_t v = 0; v < count; v++) {
                while (next < model.entry_count &&
                       (model.entries[next].event != e ||
                        (status >= 0 && model.entries[next].status != status)))
                    next++;
                if (next == model.entry_count ||
                    strcmp(views[v].waitlist_id, model.entries[next].id))
                    mismatch("event %s: the list of %s has %s, model %s", model.events[e].id,
                             status < 0 ? "all" : hf_waitlist_status_name((uint8_t)status),
                             views[v].waitlist_id,
                             next < model.entry_count ? model.entries[next].id : "none");
                after = views[v].sequence;
                next++;
            }
            if (count == 0) break;
        }
        while (next < model.entry_count && (model.entries[next].event != e ||
                                            (status >= 0 && model.entries[next].status != status)))
            next++;
        if (next < model.entry_count)
            mismatch("event %s: the list of %s ends before %s", model.events[e].id,
                     status < 0 ? "all" : hf_waitlist_status_name((uint8_t)status),
                     model.entries[next].id);
    }
}

static void compare_waitlists(bool full) {
    for (uint32_t e = 0; e < EVENTS; e++)
        for (uint32_t u = 0; u < USERS; u++)
            if (entry_live(e, u) >= 0) compare_entry((uint32_t)entry_live(e, u));
    for (uint32_t i = 0; i < model.touched_entry_count; i++)
        compare_entry(model.touched_entries[i]);
    if (full) {
        for (uint32_t i = 0; i < model.entry_count; i++) compare_entry(i);
        for (uint32_t e = 0; e < EVENTS; e++) compare_waitlist_list(e);
    }
    uint64_t counts[HF_WAITLIST_CANCELLED + 1];
    if (!hf_core_waitlist_counts(core, counts)) mismatch("the core has no waitlists");
    for (uint8_t s = 0; s <= HF_WAITLIST_CANCELLED; s++)
        if (counts[s] != model.entries_by_status[s])
            mismatch("%" PRIu64 " entries %s, model %u", counts[s], hf_waitlist_status_name(s),
                     model.entries_by_status[s]);
}

/* ---- operations ---- */

/* The core's answer is one of the set's errors (bits by error code, past 32), or ok when the
 * set is empty. */
static void expect_waitlist_result(hf_error_t got, uint64_t set) {
    if (got == HF_OK ? set == 0 : (set & (UINT64_C(1) << got)) != 0) return;
    char expected[256] = "";
    size_t used = 0;
    for (int e = 1; e < 64 && used < sizeof expected - 40; e++)
        if (set & (UINT64_C(1) << e))
            used += (size_t)snprintf(expected + used, sizeof expected - used, "%s%s",
                                     used ? "|" : "", fx_error_code((hf_error_t)e));
    mismatch("core answered %s, model expects %s", got == HF_OK ? "ok" : fx_error_code(got),
             set ? expected : "ok");
}

#define ERROR_BIT(error) (UINT64_C(1) << (error))

/* A join's target as drawn: none, a section, a pool, unknown ones, or both (invalid). The
 * errors it brings go into *set. */
static uint32_t join_target(const model_event_t *event, const char **section, const char **pool,
                            uint64_t *set) {
    uint32_t roll = rng_below(100);
    *section = *pool = NULL;
    if (roll < 30 || (roll < 75 && event->section_count == 0) ||
        (roll >= 75 && roll < 92 && event->pool_count == 0)) {
        if (event->seat_count == 0) *set |= ERROR_BIT(HF_ERROR_SECTION_NOT_FOUND);
        return 0;
    }
    if (roll < 75) {
        uint32_t s = rng_below(event->section_count);
        *section = event->definition.sections[s].id;
        return 1 + s;
    }
    if (roll < 92) {
        uint32_t p = rng_below(event->pool_count);
        *pool = event->pools[p].id;
        return 1 + event->section_count + p;
    }
    if (roll < 96) {
        *section = other_sections[rng_below(sizeof other_sections / sizeof *other_sections)];
        bool known = false;
        for (uint32_t s = 0; s < event->section_count; s++)
            known |= strcmp(event->definition.sections[s].id, *section) == 0;
        if (!known) {
            *set |= ERROR_BIT(HF_ERROR_SECTION_NOT_FOUND);
            return 0;
        }
        for (uint32_t s = 0; s < event->section_count; s++)
            if (strcmp(event->definition.sections[s].id, *section) == 0) return 1 + s;
    }
    if (roll < 98) {
        *pool = "NOPE";
        *set |= ERROR_BIT(HF_ERROR_POOL_NOT_FOUND);
        return 0;
    }
    *section = "FLOOR";
    *pool = "GA";
    *set |= ERROR_BIT(HF_ERROR_INVALID_REQUEST);
    return 0;
}

/* A new entry at the back of its event's line. */
static uint32_t entry_add(const char *id, uint32_t e, uint32_t u, uint32_t target,
                          uint32_t quantity) {
    GROW(model.entries, model.entry_count, model.entry_capacity);
    uint32_t index = model.entry_count++;
    model_entry_t *entry = &model.entries[index];
    memset(entry, 0, sizeof *entry);
    snprintf(entry->id, sizeof entry->id, "%s", id);
    entry->event = e;
    entry->user = u;
    entry->target = target;
    entry->quantity = quantity;
    entry->sequence = model.events[e].joined++;
    entry->status = HF_WAITLIST_WAITING;
    model.events[e].waiting++;
    model.entries_by_status[HF_WAITLIST_WAITING]++;
    model.latest[e][u] = index + 1;
    model.expected[HF_MUTATION_WAITLIST]++;
    entry_touch(index);
    return index;
}

static void op_waitlist_join(void) {
    model_expire(model.now);
    uint32_t e = rng_below(EVENTS), u = rng_below(USERS);
    model_event_t *event = &model.events[e];
    bool unknown_event = rng_chance(3), empty_user = rng_chance(2);
    uint64_t set = 0;
    const char *section, *pool;
    uint32_t target = join_target(event, &section, &pool, &set);
    uint32_t roll = rng_below(100), quantity;
    uint32_t most = event->per_hold < 4 ? event->per_hold : 4;
    if (roll < 80) quantity = 1 + rng_below(most);
    else if (roll < 95) quantity = 1 + rng_below(event->per_hold);
    else quantity = rng_chance(50) ? 0 : event->per_hold + 1;
    if (quantity == 0 || quantity > event->per_hold || empty_user)
        set |= ERROR_BIT(HF_ERROR_INVALID_REQUEST);
    if (!event->waitlist) set |= ERROR_BIT(HF_ERROR_WAITLIST_DISABLED);
    if (unknown_event) set = ERROR_BIT(HF_ERROR_EVENT_NOT_FOUND);
    char id[16];
    snprintf(id, sizeof id, "w_wl%u", model.entry_count);
    const char *user_id = empty_user ? "" : user_ids[u];
    snprintf(description, sizeof description, "waitlist join %s on %s by \"%s\": %s%s%s x%u", id,
             unknown_event ? "nope" : event->id, user_id, section ? section : "any",
             pool ? " pool " : "", pool ? pool : "", quantity);
    stats[S_WAITLIST_JOIN]++;
    hf_waitlist_request_t request = {.event_id = unknown_event ? "nope" : event->id,
                                     .user_id = user_id,
                                     .waitlist_id = id,
                                     .section = section,
                                     .pool = pool,
                                     .quantity = quantity};
    hf_waitlist_view_t view;
    bool existing = false;
    hf_error_t got = hf_core_waitlist_join(core, &request, model.now, &view, &existing);
    expect_waitlist_result(got, set);
    if (got != HF_OK) return;
    stats[S_WAITLIST_JOIN_OK]++;
    int32_t live = entry_live(e, u);
    if (live >= 0) {
        /* One entry per user and event while it waits or is offered: that one, as it is. */
        if (!existing || strcmp(view.waitlist_id, model.entries[live].id) != 0)
            mismatch("join: %s entry %s, model the live %s", existing ? "existing" : "new",
                     view.waitlist_id, model.entries[live].id);
        stats[S_WAITLIST_EXISTING]++;
        entry_touch((uint32_t)live);
        return;
    }
    if (existing) mismatch("join: the existing entry %s, model a new one", view.waitlist_id);
    uint32_t index = entry_add(id, e, u, target, quantity);
    if (strcmp(view.waitlist_id, id) != 0 || view.status != HF_WAITLIST_WAITING ||
        view.position != entry_position(index))
        mismatch("join: entry %s %s at %u, model %s waiting at %u", view.waitlist_id,
                 hf_waitlist_status_name(view.status), view.position, id, entry_position(index));
}

static void op_waitlist_cancel(void) {
    model_expire(model.now);
    int32_t index = -1;
    uint32_t roll = rng_below(100);
    if (roll < 70) {
        uint32_t live[EVENTS * USERS], count = 0;
        for (uint32_t e = 0; e < EVENTS; e++)
            for (uint32_t u = 0; u < USERS; u++)
                if (entry_live(e, u) >= 0) live[count++] = (uint32_t)entry_live(e, u);
        if (count) index = (int32_t)live[rng_below(count)];
    } else if (roll < 92 && model.entry_count) {
        index = (int32_t)rng_below(model.entry_count);
    }
    model_entry_t *entry = index >= 0 ? &model.entries[index] : NULL;
    uint32_t e = entry ? entry->event : rng_below(EVENTS);
    if (entry && rng_chance(4)) e = (e + 1) % EVENTS; /* named under another event */
    const char *id = entry ? entry->id : "w_none";
    const char *user = pick_user(entry ? entry->user : rng_below(USERS));
    snprintf(description, sizeof description, "waitlist cancel %s on %s by %s", id,
             model.events[e].id, user);
    stats[S_WAITLIST_CANCEL]++;
    uint64_t set = 0;
    if (entry == NULL || e != entry->event) set = ERROR_BIT(HF_ERROR_WAITLIST_NOT_FOUND);
    else if (strcmp(user_ids[entry->user], user) != 0) set = ERROR_BIT(HF_ERROR_NOT_OWNER);
    hf_waitlist_view_t view;
    hf_error_t got = hf_core_waitlist_cancel(core, model.events[e].id, id, user, model.now, &view);
    expect_waitlist_result(got, set);
    if (got != HF_OK) return;
    stats[S_WAITLIST_CANCEL_OK]++;
    uint8_t was = entry->status;
    if (was <= HF_WAITLIST_OFFERED) entry_status((uint32_t)index, HF_WAITLIST_CANCELLED);
    /* Cancelled first, so its offer's end reads as no lapse; what the offer held goes down
     * the line. */
    if (was == HF_WAITLIST_OFFERED) model_hold_finish(entry->hold - 1, HF_HOLD_RELEASED);
    entry_touch((uint32_t)index);
    if (view.status != entry->status)
        mismatch("cancel: entry %s answered %s, model %s", id, hf_waitlist_status_name(view.status),
                 hf_waitlist_status_name(entry->status));
}

/* The event's setting changed by a PATCH (hf_core_event_update): off refuses joins, while
 * the entries waiting keep their turn and are still offered; a new TTL is the next offers'. */
static void op_waitlist_setting(void) {
    model_expire(model.now);
    uint32_t e = rng_below(EVENTS);
    model_event_t *event = &model.events[e];
    bool enabled = rng_chance(75);
    int64_t ttl = rng_chance(50) ? rng_range(1000, event->max_hold_ms)
                                 : rng_range(event->max_hold_ms, 3 * event->max_hold_ms);
    snprintf(description, sizeof description, "waitlist of %s %s, offers of %" PRId64 " ms",
             event->id, enabled ? "on" : "off", ttl);
    stats[S_WAITLIST_SETTING]++;
    hf_event_definition_t patch;
    memset(&patch, 0, sizeof patch);
    snprintf(patch.id, sizeof patch.id, "%s", event->id);
    patch.waitlist = (hf_waitlist_setting_t){enabled, ttl};
    bool layout = false;
    hf_error_detail_t detail;
    memset(&detail, 0, sizeof detail);
    hf_error_t got = hf_core_event_update(core, &patch, HF_EVENT_MEMBER_WAITLIST, model.now,
                                          &layout, &detail);
    if (got != HF_OK || layout)
        mismatch("waitlist setting: core answered %s%s", got ? fx_error_code(got) : "ok",
                 layout ? ", layout changed" : "");
    event->waitlist = enabled;
    event->offer_ttl_ms = ttl;
    hf_waitlist_setting_t setting = hf_core_waitlist_setting(core, event->id);
    if (setting.enabled != enabled || (enabled && setting.offer_ttl_ms != ttl))
        mismatch("waitlist setting: %s, %" PRId64 " ms", setting.enabled ? "on" : "off",
                 setting.offer_ttl_ms);
}

#endif
