/* Holdfast box office: one calendar (GET /ui/calendars/{cal}, API.md section 12).

   Night calendars show a month grid per resource: each date a button with the free quantity of
   that night (GET /v1/calendars/{cal}/availability), picked as check-in then check-out. Minute
   calendars show one resource's day as a grid of start times for the chosen length: the starts
   GET /slots says would succeed now are enabled, each with its free quantity. A pick is held
   (POST /v1/calendars/{cal}/holds) and counted down to expires_at, then committed or released
   through /v1/holds/{id}/... as a seat hold is.

   The counts follow the calendar's stream: after each snapshot they are read again (so no
   change falls between the read and the stream), and every change event {resource, from, to,
   delta} is added to the nights it covers (night calendars) or makes the day be read again
   (minute calendars, whose slots depend on buffers and lengths the page does not model). */
"use strict";

(function () {
  const { api, h, money, count, askForKey } = window.Holdfast;

  /* ---------- state ---------- */
  const calId = decodeURIComponent(location.pathname.replace(/\/+$/, "").split("/").pop() || "");
  const enc = encodeURIComponent(calId);
  const DAY_MS = 86400000;
  const MINUTE_MS = 60000;
  // A night calendar with at most this many resources shows all their grids at once.
  const GRIDS_SHOWN_MAX = 12;
  // A few lengths to choose from on a minute calendar, from the shortest allowed.
  const LENGTH_CHOICES_MAX = 12;
  // The length offered when a resource sets no maximum (API.md: the horizon), in minutes.
  const LENGTH_DEFAULT_SPAN_MIN = 240;
  const HOLDS_STORE = "holdfast.calendar-holds." + calId;
  let summary = null;
  const resources = new Map();        // resource id → its definition
  const free = new Map();             // resource id → Map(date or instant ms → free quantity)
  const slotStarts = new Map();       // minute calendars: instant ms → true when a hold would succeed
  let shown = [];                     // the resources whose grids are drawn
  let month = null;                   // night calendars: the first date of the month shown (ms, UTC)
  let pick = null;                    // {resource, from, to} (dates, or instants in ms)
  const holds = new Map();            // reservation id → {hold, deadline, el, state}
  let loading = false, changedWhileLoading = false, loadedOnce = false;
  let streamOpen = false;

  /* ---------- elements ---------- */
  const $ = (id) => document.getElementById(id);
  const grids = $("grids"), gridStatus = $("grid-status"), live = $("live"), notice = $("notice");
  const resourceSelect = $("cal-resource"), dayInput = $("cal-day"), lengthSelect = $("cal-length");
  const quantityInput = $("cal-quantity"), userInput = $("user-id");
  const holdBtn = $("hold-btn"), clearBtn = $("clear-btn");

  const isNight = () => summary.unit === "night";

  /* ---------- dates (UTC throughout: a night is a UTC date, the minute grid counts from UTC
     midnight) ---------- */
  const isoDate = (ms) => new Date(ms).toISOString().slice(0, 10);
  const parseDate = (text) => Date.parse(text + "T00:00:00Z");
  const isoInstant = (ms) => new Date(ms).toISOString();
  const clock = (ms) => new Date(ms).toISOString().slice(11, 16);
  const todayMs = () => parseDate(isoDate(Date.now()));
  const longDate = (ms) => new Date(ms).toLocaleDateString(undefined,
    { weekday: "long", day: "numeric", month: "long", year: "numeric", timeZone: "UTC" });
  const shortDate = (ms) => new Date(ms).toLocaleDateString(undefined,
    { weekday: "short", day: "numeric", month: "short", timeZone: "UTC" });
  const monthName = (ms) => new Date(ms).toLocaleDateString(undefined,
    { month: "long", year: "numeric", timeZone: "UTC" });
  const addMonths = (ms, n) => { const d = new Date(ms); return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + n, 1); };

  /* The window a span may take (API.md 12): from not before yesterday's UTC date (night) or
     now (minute), to at most horizon_days ahead. */
  function bookableWindow() {
    const horizon = (summary.horizon_days || 365) * DAY_MS;
    if (isNight()) return { from: todayMs() - DAY_MS, to: todayMs() + horizon };
    return { from: Date.now(), to: Date.now() + horizon };
  }

  /* ---------- messages ---------- */
  let noticeTimer = null;
  function say(text, kind, sticky) {
    clearTimeout(noticeTimer);
    notice.hidden = !text;
    notice.textContent = text || "";
    notice.dataset.kind = kind || "info";
    if (text && !sticky) noticeTimer = setTimeout(() => { notice.hidden = true; }, kind === "error" ? 12000 : 6000);
  }

  /* A human sentence for every error code a calendar's routes answer. */
  function explain(err) {
    const d = err.detail || {};
    switch (err.code) {
      case "range_unavailable": {
        const parts = (d.unavailable || []).map((u) => `${u.resource} ${spanText(u.from, u.to)} (${count(u.available)} free)`);
        return "Not enough is free for that span any more" + (parts.length ? ": " + parts.join(", ") : "") + ". Pick other dates or a smaller quantity.";
      }
      case "resource_not_found": return `There is no resource “${d.resource || ""}” in this calendar (any more).`;
      case "calendar_not_found": return "This calendar does not exist (any more).";
      case "user_limit_exceeded": return "You already hold or booked as much as one person may here. Finish or cancel a hold first.";
      case "sales_closed": return "Bookings are closed right now: no new holds can be made. Holds you already have can still be paid.";
      case "invalid_request":
        if (d.field === "user_id") return "Type a user id (at most 128 characters) so your hold has an owner.";
        if (/quantity$/.test(d.field || "")) return "That quantity is not possible for this resource.";
        if (/\.(from|to)$/.test(d.field || "")) return "That span cannot be booked: " + (err.message || "check its dates") + ".";
        return "The request was refused: " + (err.message || "invalid request") + ".";
      case "hold_expired": return "Too late: this hold expired and its span went back on sale.";
      case "hold_released": return "This hold was cancelled, so its span is no longer yours.";
      case "hold_not_active": return "This hold is no longer active.";
      case "already_confirmed": return "This hold is already paid for: the booking is yours.";
      case "not_owner": return "This hold belongs to another user id. Switch back to the user id that made it.";
      case "hold_not_found": return "That hold no longer exists.";
      case "unauthorized": return "The API key was refused. Enter the right key.";
      case "unavailable": return "The box office could not save that just now. Nothing was changed: try again in a moment.";
      case "network": return "The box office server cannot be reached. Check your connection and try again.";
      default:
        if (err.status === 429) return "Too many requests right now. Wait a moment and try again.";
        if (err.status >= 500) return "The box office had a problem (" + err.status + "). Nothing was changed: try again.";
        return err.message || "Something went wrong.";
    }
  }

  /* "Thu 24 Dec → Sun 27 Dec" for dates, "09:00–09:30 UTC" for instants. */
  function spanText(from, to) {
    if (isNight()) return `${shortDate(parseDate(from))} → ${shortDate(parseDate(to))}`;
    const a = Date.parse(from), b = Date.parse(to);
    return `${shortDate(a)} ${clock(a)}–${clock(b)} UTC`;
  }
  const spanLength = (from, to) => (isNight() ? Math.round((to - from) / DAY_MS) : Math.round((to - from) / MINUTE_MS));
  const unitsOf = (from, to) => (isNight() ? spanLength(from, to) : spanLength(from, to) / (summary.granularity_min || 15));

  /* ---------- reading the counts ---------- */
  function windowShown() {
    const w = bookableWindow();
    const from = isNight() ? month : parseDate(dayInput.value);
    const to = isNight() ? addMonths(month, 1) : from + DAY_MS;
    return { from: Math.max(from, isNight() ? w.from : parseDate(isoDate(w.from))), to: Math.min(to, w.to) };
  }

  /* GET /availability's segments, one count per date (night) or per grid step (minute). */
  async function readAvailability(resource, from, to) {
    const q = `resource=${encodeURIComponent(resource)}&from=${encodeURIComponent(stamp(from))}&to=${encodeURIComponent(stamp(to))}`;
    const data = await api("GET", `/v1/calendars/${enc}/availability?${q}`);
    const step = isNight() ? DAY_MS : (summary.granularity_min || 15) * MINUTE_MS;
    const counts = new Map();
    for (const seg of data.segments || []) {
      const a = isNight() ? parseDate(seg.from) : Date.parse(seg.from);
      const b = isNight() ? parseDate(seg.to) : Date.parse(seg.to);
      for (let t = a; t < b; t += step) counts.set(t, seg.available);
    }
    return counts;
  }
  const stamp = (ms) => (isNight() ? isoDate(ms) : isoInstant(ms));

  /* Minute calendars: the starts where a hold of the chosen length would succeed (every page). */
  async function readSlots(resource, from, to) {
    const starts = new Map();
    let after = null;
    do {
      let q = `resource=${encodeURIComponent(resource)}&length=${lengthSelect.value}&quantity=${quantity()}` +
              `&from=${encodeURIComponent(isoInstant(from))}&to=${encodeURIComponent(isoInstant(to))}&limit=1000`;
      if (after) q += "&after=" + encodeURIComponent(after);
      const data = await api("GET", `/v1/calendars/${enc}/slots?${q}`);
      for (const s of data.slots || []) if (s.resource === resource) starts.set(Date.parse(s.from), true);
      after = data.next || null;
    } while (after);
    return starts;
  }

  /* Reads what is shown again; a change arriving meanwhile makes it read once more, since the
     answer may or may not include it. */
  async function loadCounts() {
    if (loading) { changedWhileLoading = true; return; }
    loading = true;
    changedWhileLoading = false;
    const w = windowShown();
    try {
      for (const r of shown) free.set(r.id, w.from < w.to ? await readAvailability(r.id, w.from, w.to) : new Map());
      slotStarts.clear();
      if (!isNight() && shown.length && w.from < w.to)
        for (const [t] of await readSlots(shown[0].id, w.from, w.to)) slotStarts.set(t, true);
      loadedOnce = true;
      gridStatus.hidden = true;
    } catch (err) {
      gridStatus.hidden = false;
      gridStatus.textContent = "The calendar could not be loaded: " + explain(err);
    } finally {
      loading = false;
    }
    render();
    if (changedWhileLoading) loadCounts();
  }

  /* ---------- drawing ---------- */
  function render() {
    const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.at : null;
    grids.replaceChildren(...shown.map((r) => (isNight() ? monthGrid(r) : dayGrid(r))));
    grids.setAttribute("aria-busy", loadedOnce ? "false" : "true");
    if (isNight()) $("month-label").textContent = monthName(month);
    if (focused) {
      const el = grids.querySelector(`[data-at="${focused}"]`);
      if (el) el.focus();
    }
    renderSelection();
  }

  /* How full a date or slot is: free, few left (a quarter or less of the capacity), full. */
  function level(resource, available) {
    if (available === undefined) return "unknown";
    if (available <= 0) return "full";
    return available * 4 <= resource.capacity && resource.capacity > 1 ? "few" : "free";
  }

  function resourceHead(r) {
    const price = money(r.price || 0, summary.currency) + (isNight() ? " a night" : ` per ${summary.granularity_min || 15} min`);
    return h("div", { class: "section-head" },
      h("h3", { text: r.name || r.id }),
      h("span", { class: "section-price", text: price }),
      h("span", { class: "section-count", text: `capacity ${count(r.capacity || 1)}` }));
  }

  function monthGrid(r) {
    const counts = free.get(r.id) || new Map();
    const w = bookableWindow();
    const days = [];
    const first = new Date(month);
    const lead = (first.getUTCDay() + 6) % 7;          // Monday first
    for (let i = 0; i < lead; i++) days.push(h("span", { class: "cal-day blank", "aria-hidden": "true" }));
    for (let t = month; t < addMonths(month, 1); t += DAY_MS) {
      const available = counts.get(t);
      const outside = t < w.from || t > w.to;
      const role = pickRole(r.id, t);
      const label = `${longDate(t)}, ` + (outside ? "not bookable" : available === undefined ? "loading"
        : `${count(available)} of ${count(r.capacity)} free`) + (role ? ", " + role : "");
      days.push(h("button", {
        type: "button", class: "cal-day", disabled: outside, "aria-label": label,
        "aria-pressed": role ? "true" : "false",
        dataset: { resource: r.id, date: isoDate(t), at: r.id + "|" + t, level: outside ? "outside" : level(r, available), pick: role || "" },
      }, h("span", { class: "cal-date", text: String(new Date(t).getUTCDate()) }),
         h("span", { class: "cal-free", text: outside || available === undefined ? "" : count(available) })));
    }
    const weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map((d) => h("span", { class: "cal-weekday", "aria-hidden": "true", text: d }));
    return h("section", { class: "section-block cal-block", "data-resource": r.id, "aria-label": (r.name || r.id) + ", " + monthName(month) },
      resourceHead(r), h("div", { class: "cal-month", role: "group" }, weekdays, days));
  }

  function dayGrid(r) {
    const counts = free.get(r.id) || new Map();
    const stepMs = (summary.granularity_min || 15) * MINUTE_MS;
    const lengthMs = Number(lengthSelect.value) * MINUTE_MS;
    const day = parseDate(dayInput.value);
    const cells = [];
    for (let t = day; t < day + DAY_MS; t += stepMs) {
      let least;
      for (let s = t; s < t + lengthMs; s += stepMs) {
        const c = counts.get(s);
        if (c !== undefined) least = least === undefined ? c : Math.min(least, c);
      }
      const open = slotStarts.has(t);
      const role = pick && pick.resource === r.id && pick.from === t ? "your pick" : "";
      cells.push(h("button", {
        type: "button", class: "cal-slot", disabled: !open,
        "aria-label": `${clock(t)} to ${clock(t + lengthMs)} UTC, ` + (open ? `${count(least || 0)} free` : "not available") + (role ? ", " + role : ""),
        "aria-pressed": role ? "true" : "false",
        dataset: { resource: r.id, start: isoInstant(t), at: r.id + "|" + t, level: open ? level(r, least) : "full", pick: role ? "in" : "" },
      }, h("span", { class: "cal-date", text: clock(t) }),
         h("span", { class: "cal-free", text: open && r.capacity > 1 ? count(least || 0) + " left" : "" })));
    }
    return h("section", { class: "section-block cal-block", "data-resource": r.id, "aria-label": `${r.name || r.id}, ${longDate(day)}` },
      resourceHead(r), h("div", { class: "cal-slots", role: "group" }, cells));
  }

  /* A date's part in the pick: check-in, check-out, or a night in between. */
  function pickRole(resource, t) {
    if (!pick || pick.resource !== resource) return "";
    if (t === pick.from) return "check-in";
    if (pick.to !== null && t === pick.to) return "check-out";
    if (pick.to !== null && t > pick.from && t < pick.to) return "night";
    return "";
  }

  /* ---------- the pick ---------- */
  function choose(resource, t) {
    if (isNight()) {
      if (!pick || pick.resource !== resource || pick.to !== null || t <= pick.from) {
        pick = { resource, from: t, to: null };
        const c = (free.get(resource) || new Map()).get(t);
        if (c === 0) say("That night is full: pick another check-in date.", "warn");
      } else {
        pick.to = t;
      }
    } else {
      pick = { resource, from: t, to: t + Number(lengthSelect.value) * MINUTE_MS };
    }
    render();
  }
  const quantity = () => Math.max(1, Math.floor(Number(quantityInput.value) || 1));

  function renderSelection() {
    const list = $("sel-list");
    list.replaceChildren();
    const complete = pick && pick.to !== null;
    $("sel-empty").hidden = !!pick;
    if (pick) {
      const r = resources.get(pick.resource);
      const what = complete ? `${spanText(stamp(pick.from), stamp(pick.to))} · ${spanLength(pick.from, pick.to)} ${isNight() ? "nights" : "min"}`
                            : `check-in ${shortDate(pick.from)}: now pick the check-out date`;
      list.append(h("li", { "data-resource": pick.resource },
        h("span", { class: "sel-what" }, h("strong", { text: r.name || r.id }), " " + what),
        complete ? h("span", { class: "sel-price", text: "× " + quantity() }) : null));
    }
    if (pick) quantityInput.max = String(resources.get(pick.resource).capacity);
    const total = complete ? (resources.get(pick.resource).price || 0) * unitsOf(pick.from, pick.to) * quantity() : null;
    $("sel-total").textContent = total === null ? "—" : money(total, summary.currency);
    holdBtn.disabled = !complete;
    clearBtn.disabled = !pick;
  }

  /* ---------- holds ---------- */
  function requireUser() {
    const u = userInput.value.trim();
    if (!u) {
      say("Type a user id first, so your hold has an owner.", "warn");
      userInput.focus();
      userInput.classList.add("invalid");
      return null;
    }
    userInput.classList.remove("invalid");
    window.Holdfast.setUserId(u);
    return u;
  }

  async function placeHold() {
    const user = requireUser();
    if (!user || !pick || pick.to === null) return;
    const item = { resource: pick.resource, from: stamp(pick.from), to: stamp(pick.to), quantity: quantity() };
    holdBtn.disabled = true;
    try {
      const hold = await api("POST", `/v1/calendars/${enc}/holds`, { user_id: user, items: [item] });
      pick = null;
      addHold(hold);
      say(`Held ${itemsText(hold.items)} for you. Pay before the countdown ends.`, "success");
      if (!streamOpen) loadCounts();
      render();
    } catch (err) {
      say(explain(err), "error");
      if (err.code === "range_unavailable" || err.code === "resource_not_found") loadCounts();
      if (err.code === "invalid_request" && (err.detail || {}).field === "user_id") userInput.classList.add("invalid");
      renderSelection();
    }
  }

  const itemsText = (items) => (items || []).map((i) => `${i.resource} ${spanText(i.from, i.to)}` + ((i.quantity || 1) > 1 ? ` × ${i.quantity}` : "")).join(", ");

  function deadlineOf(hold) {
    // Count down to expires_at, corrected for the difference between our clock and the
    // server's (expires_in_ms is measured by the server at the moment it answered).
    const at = Date.parse(hold.expires_at);
    if (typeof hold.expires_in_ms === "number" && hold.status === "held") {
      const skew = at - (Date.now() + hold.expires_in_ms);
      if (Math.abs(skew) > 2000) return at - skew;
    }
    return at;
  }

  function addHold(hold) {
    let rec = holds.get(hold.reservation_id);
    if (!rec) { rec = { hold, el: null, state: hold.status }; holds.set(hold.reservation_id, rec); }
    rec.hold = hold;
    rec.state = hold.status;
    rec.deadline = deadlineOf(hold);
    renderHold(rec);
    saveHolds();
    tick();
  }

  function endHold(rec, state) {
    rec.state = state;
    renderHold(rec);
    saveHolds();
  }

  function renderHold(rec) {
    const hold = rec.hold;
    const countdown = h("span", { class: "countdown", role: "timer", "aria-label": "Time left" });
    const payRef = h("input", { type: "text", class: "pay-ref", placeholder: "Payment reference (optional)",
                                maxlength: "255", "aria-label": "Payment reference" });
    const commit = h("button", { type: "button", class: "btn primary commit-btn", text: "Book · " + money(hold.total, hold.currency || summary.currency) });
    const release = h("button", { type: "button", class: "btn ghost release-btn", text: "Cancel hold" });
    const extend = h("button", { type: "button", class: "link-btn extend-btn", text: "Need more time?" });
    const dismiss = h("button", { type: "button", class: "btn ghost small dismiss-btn", text: "Dismiss" });
    const stateText = { held: "Held for you", expired: "Expired", released: "Cancelled", confirmed: "Booked" }[rec.state] || rec.state;
    const held = rec.state === "held";
    const el = h("article", { class: "hold", "data-hold": hold.reservation_id, "data-state": rec.state },
      h("header", { class: "hold-head" }, h("span", { class: "hold-state", text: stateText }), held ? countdown : null),
      held && !rec.capped ? h("div", { class: "hold-extend" }, extend) : null,
      h("ul", { class: "hold-lines" }, (hold.items || []).map((i) =>
        h("li", null, h("strong", { text: i.resource }), ` ${spanText(i.from, i.to)}` + ((i.quantity || 1) > 1 ? ` × ${i.quantity}` : "")))),
      held ? h("div", { class: "hold-pay" }, payRef, h("div", { class: "actions" }, release, commit)) : null,
      rec.state === "expired" ? h("p", { class: "small muted", text: "The time ran out and this span went back on sale." }) : null,
      rec.state === "released" ? h("p", { class: "small muted", text: "You cancelled this hold; the span is back on sale." }) : null,
      held ? null : h("div", { class: "actions" }, dismiss));
    rec.countdownEl = countdown;
    commit.addEventListener("click", () => commitHold(rec, payRef.value.trim(), [commit, release]));
    release.addEventListener("click", () => releaseHold(rec, [commit, release]));
    extend.addEventListener("click", () => extendHold(rec, extend));
    dismiss.addEventListener("click", () => { holds.delete(hold.reservation_id); el.remove(); refreshHoldsCard(); });
    if (rec.el) rec.el.replaceWith(el); else $("holds").prepend(el);
    rec.el = el;
    refreshHoldsCard();
  }
  function refreshHoldsCard() { $("holds-card").hidden = holds.size === 0; }

  const holdPath = (rec, action) => `/v1/holds/${encodeURIComponent(rec.hold.reservation_id)}/${action}`;

  async function commitHold(rec, paymentRef, buttons) {
    buttons.forEach((b) => { b.disabled = true; });
    const body = { user_id: rec.hold.user_id };
    if (paymentRef) body.payment_ref = paymentRef;
    try {
      const order = await api("POST", holdPath(rec, "commit"), body);
      holds.delete(rec.hold.reservation_id);
      rec.el.remove();
      refreshHoldsCard();
      saveHolds();
      addOrder(order, true);
      say(`Booked. Order ${order.order_id} is confirmed: ${itemsText(order.items)}.`, "success");
    } catch (err) {
      say(explain(err), "error");
      if (err.code === "hold_expired") endHold(rec, "expired");
      else if (err.code === "hold_released") endHold(rec, "released");
      else buttons.forEach((b) => { b.disabled = false; });
    }
  }

  async function extendHold(rec, button) {
    button.disabled = true;
    try {
      const hold = await api("POST", holdPath(rec, "extend"), { user_id: rec.hold.user_id });
      rec.capped = !!hold.capped;
      addHold(hold);
      say(hold.capped ? `Extended as far as allowed: you have until ${new Date(deadlineOf(hold)).toLocaleTimeString()}.`
                      : "Extended: the countdown starts again.", "success");
    } catch (err) {
      say(explain(err), "error");
      if (err.code === "hold_expired") endHold(rec, "expired");
      else if (err.code === "hold_not_active") endHold(rec, "released");
      else button.disabled = false;
    }
  }

  async function releaseHold(rec, buttons) {
    buttons.forEach((b) => { b.disabled = true; });
    try {
      const hold = await api("POST", holdPath(rec, "release"), { user_id: rec.hold.user_id });
      rec.hold = hold;
      endHold(rec, hold.status || "released");
      say(hold.status === "expired" ? "That hold had already expired; the span is back on sale." : "Hold cancelled. The span is back on sale.", "info");
      if (!streamOpen) loadCounts();
    } catch (err) {
      say(explain(err), "error");
      if (err.code === "already_confirmed") endHold(rec, "confirmed");
      else buttons.forEach((b) => { b.disabled = false; });
    }
  }

  function fmtLeft(ms) {
    const s = Math.max(0, Math.ceil(ms / 1000));
    return String(Math.floor(s / 60)).padStart(2, "0") + ":" + String(s % 60).padStart(2, "0");
  }
  function tick() {
    const now = Date.now();
    for (const [, rec] of holds) {
      if (rec.state !== "held") continue;
      const left = rec.deadline - now;
      if (left <= 0) {
        endHold(rec, "expired");   // the server frees the span at that instant; the stream says so
        say("Your hold expired and its span went back on sale.", "warn");
        continue;
      }
      if (rec.countdownEl) {
        rec.countdownEl.textContent = fmtLeft(left);
        rec.countdownEl.classList.toggle("urgent", left < 60000);
      }
    }
  }

  function saveHolds() {
    const list = [];
    for (const [id, rec] of holds) if (rec.state === "held") list.push(id);
    try { localStorage.setItem(HOLDS_STORE, JSON.stringify(list)); } catch (_) { /* ignore */ }
  }
  async function restoreHolds() {
    let list = [];
    try { list = JSON.parse(localStorage.getItem(HOLDS_STORE) || "[]"); } catch (_) { list = []; }
    for (const id of Array.isArray(list) ? list : []) {
      try {
        const hold = await api("GET", `/v1/holds/${encodeURIComponent(id)}`);
        if (hold.status === "held") addHold(hold);
      } catch (_) { /* gone: forget it */ }
    }
    saveHolds();
  }

  /* ---------- bookings ---------- */
  const orders = new Set();
  function addOrder(order, fresh) {
    if (orders.has(order.order_id) || order.status !== "confirmed") return;
    orders.add(order.order_id);
    const el = h("article", { class: "order" + (fresh ? " fresh" : ""), "data-order": order.order_id },
      h("header", { class: "hold-head" },
        h("span", { class: "hold-state ok", text: "Confirmed" }),
        h("span", { class: "order-total", text: money(order.total, order.currency || summary.currency) })),
      h("ul", { class: "hold-lines" }, (order.items || []).map((i) => h("li", null, h("strong", { text: i.resource }), " " + spanText(i.from, i.to)))),
      h("p", { class: "small muted order-id", text: "Order " + order.order_id + (order.payment_ref ? " · " + order.payment_ref : "") }));
    $("orders").prepend(el);
    $("orders-card").hidden = false;
  }
  async function loadOrders() {
    orders.clear();
    $("orders").replaceChildren();
    $("orders-card").hidden = true;
    const u = userInput.value.trim();
    if (!u) return;
    try {
      const data = await api("GET", `/v1/users/${encodeURIComponent(u)}/orders?calendar=${enc}`);
      for (const o of (data && data.orders) || []) addOrder(o, false);
    } catch (_) { /* the list is a convenience: the page works without it */ }
  }

  /* ---------- live updates ---------- */
  let source = null, pollTimer = null, retryTimer = null, reloadTimer = null;
  function setLive(state, text) { live.dataset.state = state; live.textContent = text; }

  /* The stream's address; EventSource cannot send headers, so the credential (a buyer's user
     token, else the key) rides in the query, as on the event page (common.js's streamUrl,
     which names an event's stream). */
  function streamUrl() {
    let url = `/v1/calendars/${enc}/stream`;
    const key = window.Holdfast.userToken() || window.Holdfast.apiKey();
    if (key) url += "?access_token=" + encodeURIComponent(key);
    return url;
  }

  /* A use taken or given back: night counts move at once; a minute day is read again, since
     buffers decide which starts stay open. */
  function applyChange(change) {
    const counts = free.get(change.resource);
    if (!counts) return;
    if (loading) changedWhileLoading = true;
    if (!isNight()) { clearTimeout(reloadTimer); reloadTimer = setTimeout(loadCounts, 100); return; }
    for (let t = parseDate(change.from); t < parseDate(change.to); t += DAY_MS)
      if (counts.has(t)) counts.set(t, counts.get(t) + change.delta);
    render();
  }

  function updateSummary(s) {
    if (!s || !summary) return;
    summary.sales_open = s.sales_open;
    $("sales-badge").hidden = s.sales_open !== false;
  }

  function connect() {
    clearTimeout(retryTimer);
    if (source) source.close();
    streamOpen = false;
    setLive("connecting", "Connecting…");
    const es = new EventSource(streamUrl());
    source = es;
    es.addEventListener("snapshot", (ev) => {
      stopPolling();
      try { updateSummary(JSON.parse(ev.data)); } catch (_) { /* keep the old one */ }
      loadCounts();     // every later change reaches us now
    });
    es.addEventListener("change", (ev) => {
      try { applyChange(JSON.parse(ev.data)); } catch (_) { /* ignore */ }
    });
    es.addEventListener("open", () => { streamOpen = true; stopPolling(); setLive("live", "Live"); });
    es.addEventListener("error", () => {
      streamOpen = false;
      if (es.readyState === EventSource.CLOSED) {
        // Refused (no stream, or the key was refused): read every 5 s, and try again later.
        setLive("polling", "Refreshing every 5 s");
        startPolling();
        retryTimer = setTimeout(connect, 15000);
      } else {
        setLive("connecting", "Reconnecting…");
      }
    });
  }
  function startPolling() {
    if (pollTimer) return;
    pollTimer = setInterval(() => { if (!document.hidden) loadCounts(); }, 5000);
    loadCounts();
  }
  function stopPolling() { clearInterval(pollTimer); pollTimer = null; }

  /* ---------- wiring ---------- */
  function choosable(ev) { return ev.target.closest("button[data-resource]:not(:disabled)"); }

  /* Arrow keys move between dates (a week up and down) or slots (a row of the grid up and
     down, as many as the width holds), as in a date picker. */
  function moveFocus(ev) {
    const el = ev.target.closest("button[data-resource]");
    if (!el) return;
    const all = [...el.parentElement.querySelectorAll("button[data-resource]")];
    const row = isNight() ? 7 : Math.max(1, all.filter((b) => b.offsetTop === all[0].offsetTop).length);
    const steps = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -row, ArrowDown: row };
    if (!(ev.key in steps)) return;
    const next = all[all.indexOf(el) + steps[ev.key]];
    if (next) { ev.preventDefault(); next.focus(); }
  }

  function showResources() {
    const chosen = resourceSelect.value;
    shown = chosen ? [resources.get(chosen)] : [...resources.values()];
    if (pick && !shown.some((r) => r.id === pick.resource)) pick = null;
    if (!isNight()) fillLengths();
    free.clear();
    render();
    loadCounts();
  }

  function fillLengths() {
    const r = shown[0];
    const step = summary.granularity_min || 15;
    const least = Math.max(step, Math.ceil((r.min_length || step) / step) * step);
    const most = r.max_length || least + LENGTH_DEFAULT_SPAN_MIN;
    const was = Number(lengthSelect.value);
    lengthSelect.replaceChildren();
    for (let m = least, n = 0; m <= most && n < LENGTH_CHOICES_MAX; m += step, n++)
      lengthSelect.append(h("option", { value: String(m), text: m >= 60 && m % 60 === 0 ? `${m / 60} h` : `${m} min` }));
    if ([...lengthSelect.options].some((o) => Number(o.value) === was)) lengthSelect.value = String(was);
  }

  function wire() {
    grids.addEventListener("click", (ev) => {
      const el = choosable(ev);
      if (!el) return;
      choose(el.dataset.resource, el.dataset.date ? parseDate(el.dataset.date) : Date.parse(el.dataset.start));
    });
    grids.addEventListener("keydown", moveFocus);
    resourceSelect.addEventListener("change", showResources);
    $("month-prev").addEventListener("click", () => { month = addMonths(month, -1); free.clear(); render(); loadCounts(); });
    $("month-next").addEventListener("click", () => { month = addMonths(month, 1); free.clear(); render(); loadCounts(); });
    dayInput.addEventListener("change", () => { if (dayInput.value) { pick = null; free.clear(); render(); loadCounts(); } });
    lengthSelect.addEventListener("change", () => { pick = null; loadCounts(); });
    quantityInput.addEventListener("input", () => { renderSelection(); if (!isNight()) loadCounts(); });
    holdBtn.addEventListener("click", placeHold);
    clearBtn.addEventListener("click", () => { pick = null; render(); });
    // A buyer's token names the user: the page acts as that user only.
    const tokenUser = window.Holdfast.tokenUser();
    userInput.value = tokenUser || window.Holdfast.userId();
    if (tokenUser) userInput.readOnly = true;
    let userTimer = null;
    userInput.addEventListener("input", () => {
      userInput.classList.remove("invalid");
      window.Holdfast.setUserId(userInput.value.trim());
      clearTimeout(userTimer);
      userTimer = setTimeout(loadOrders, 600);
    });
    setInterval(tick, 250);
    document.addEventListener("visibilitychange", () => { if (!document.hidden) tick(); });
  }

  function renderHeader() {
    const name = summary.name || summary.id;
    document.title = name + " · Holdfast box office";
    $("calendar-name").textContent = name;
    $("crumb-calendar").textContent = name;
    const parts = [summary.id, count(resources.size) + (resources.size === 1 ? " resource" : " resources"),
                   isNight() ? "by the night" : `${summary.granularity_min || 15}-minute grid, times in UTC`];
    const ttl = summary.hold_ttl_s || 600;
    parts.push("holds last " + (ttl >= 120 ? Math.round(ttl / 60) + " min" : ttl + " s"));
    $("calendar-meta").textContent = parts.join(" · ");
    $("sales-badge").hidden = summary.sales_open !== false;
    const many = resources.size > GRIDS_SHOWN_MAX;
    if (isNight() && !many) resourceSelect.append(h("option", { value: "", text: "All resources" }));
    for (const r of resources.values()) resourceSelect.append(h("option", { value: r.id, text: r.name ? `${r.name} (${r.id})` : r.id }));
    grids.dataset.unit = summary.unit;
    $("month-nav").hidden = !isNight();
    $("day-nav").hidden = isNight();
    $("sel-empty").textContent = isNight() ? "Pick a check-in date, then a check-out date." : "Pick a start time.";
  }

  function showMissing() {
    document.title = "No such calendar · Holdfast box office";
    $("crumb-calendar").textContent = "No such calendar";
    $("missing-id").textContent = calId;
    $("missing").hidden = false;
    document.querySelector("main.calendar-layout").hidden = true;
    live.hidden = true;
  }

  async function start() {
    if (!calId) { say("No calendar in the address.", "error", true); return; }
    try {
      summary = await api("GET", `/v1/calendars/${enc}`);
    } catch (err) {
      if (err.status === 401 && window.Holdfast.userToken()) {
        // A buyer is never asked for the API key (API.md section 16): the link's token is
        // refused, say so.
        $("calendar-name").textContent = "Sign-in needed";
        say(explain(err), "error", true);
        setLive("none", "");
        return;
      }
      if (err.status === 401) {
        await askForKey(window.Holdfast.apiKey() ? "That key was refused. Enter the right API key." : undefined);
        return start();
      }
      if (err.code === "calendar_not_found") { showMissing(); return; }
      $("calendar-name").textContent = "Unavailable";
      gridStatus.textContent = explain(err);
      setLive("down", err.status === 0 ? "Offline" : "Unavailable");
      setTimeout(start, 5000);
      return;
    }
    for (const r of summary.resources || []) resources.set(r.id, Object.assign({ capacity: 1, price: 0 }, r));
    month = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1);
    dayInput.value = isoDate(Date.now());
    dayInput.min = isoDate(Date.now());
    renderHeader();
    wire();
    showResources();
    connect();
    restoreHolds();
    loadOrders();
  }

  // The key was refused later on (changed on the server): ask again, then reconnect the stream.
  let askingKey = false;
  window.Holdfast.onUnauthorized = () => {
    if (askingKey || !summary) return;
    if (window.Holdfast.userToken()) {
      // A buyer's token was refused (it lapsed): never ask a buyer for the API key.
      say(explain({ code: "unauthorized" }), "error", true);
      return;
    }
    askingKey = true;
    askForKey("The API key was refused. Enter the right key to go on.").then(() => { askingKey = false; connect(); });
  };
  start();
})();
