/* Holdfast box office: the live seat map of one event (GET /ui/events/{event}).

   The map is built once from the event summary (sections → rows → seat counts), one element per
   seat with data-seat="SECTION-ROW-N" and data-status="available|held|sold|allocated" (a seat
   set aside for an allocation, API.md section 14: its own colour, the allocation's name on
   hover, from the seat list's "allocation"). Seat states then
   come from GET /v1/events/{e}/seats (paged) and from the stream (SSE); each seat keeps the
   highest `version` seen, so a stale page never overwrites a newer stream event. Only changed
   seats are touched (a Map from seat id to element).

   A seat is drawn "loading" (data-status="loading", a neutral colour, title "Loading") until
   its state has been read, and again from a loss of the stream until the seats have been read
   once more over the reopened stream: the layout alone says nothing about which seats are
   sold, and drawing them available would offer a buyer seats that are gone. The counts show a
   placeholder meanwhile. */
"use strict";

(function () {
  const { api, h, money, count, countsBar, askForKey, streamUrl } = window.Holdfast;

  /* ---------- state ---------- */
  const eventId = decodeURIComponent(location.pathname.replace(/\/+$/, "").split("/").pop() || "");
  const enc = encodeURIComponent(eventId);
  let summary = null;                 // the event summary (latest)
  const seatEls = new Map();          // seat id → element; element._st = status, ._v = version
  const sectionInfo = new Map();      // section id → {price, tally{available,held,sold}, countsEl, barEl}
  const poolInfo = new Map();         // pool id → {pool, el refs, input}
  const selected = new Set();         // seat ids chosen by the visitor (not yet held)
  const holds = new Map();            // reservation id → {hold, deadline, el, state}
  const mySeatHold = new Map();       // seat id → reservation id (seats in my active holds)
  const ownedSeats = new Set();       // seats in my confirmed orders
  let seatsLoaded = false;            // the seats have been read once (the map is usable)
  // From a loss of the stream until the seats are read again, every seat is drawn loading
  // while its last known state (el._st) is kept and still follows what arrives.
  let seatsStale = false;
  let streamOpen = false;             // the stream is connected: changes after now reach us
  let streamEpoch = 0;                // grows at each loss of the stream
  let poolsCurrent = false;           // the pools' counts came from a snapshot or a poll
  let countsDirty = false;
  const HOLDS_STORE = "holdfast.holds." + eventId;

  /* ---------- elements ---------- */
  const $ = (id) => document.getElementById(id);
  const mapEl = $("map"), sectionsEl = $("sections"), mapStatus = $("map-status");
  const live = $("live"), notice = $("notice"), tooltip = $("tooltip");
  const userInput = $("user-id"), holdBtn = $("hold-btn"), clearBtn = $("clear-btn");
  const selList = $("sel-list"), selEmpty = $("sel-empty"), selTotal = $("sel-total");
  const bestForm = $("best-form"), bestCount = $("best-count"), bestSection = $("best-section"),
        bestAdjacent = $("best-adjacent"), bestBtn = $("best-btn");

  /* ---------- messages ---------- */
  let noticeTimer = null;
  function say(text, kind, sticky) {
    clearTimeout(noticeTimer);
    notice.hidden = !text;
    notice.textContent = text || "";
    notice.dataset.kind = kind || "info";
    if (text && !sticky) noticeTimer = setTimeout(() => { notice.hidden = true; }, kind === "error" ? 12000 : 6000);
  }

  const listSeats = (ids) => {
    if (ids.length <= 1) return ids.join("");
    if (ids.length > 6) return ids.slice(0, 5).join(", ") + " and " + (ids.length - 5) + " more";
    return ids.slice(0, -1).join(", ") + " and " + ids[ids.length - 1];
  };

  /* A human sentence for every error code of the contract. */
  function explain(err, context) {
    const d = err.detail || {};
    const seats = Array.isArray(d.seats) ? d.seats.map((s) => (typeof s === "string" ? s : s.id)) : [];
    switch (err.code) {
      case "seats_unavailable":
        if (context === "best") {
          const c = Number(bestCount.value);
          const where = bestSection.value ? " in " + bestSection.value : "";
          return bestAdjacent.checked
            ? `There is no block of ${c} seats together${where} right now. Try fewer seats, another section, or untick “Together in one row”.`
            : `There are not ${c} free seats${where} right now. Try fewer seats or another section.`;
        }
        if (seats.length === 1) return `Someone just took ${seats[0]}. Pick another seat.`;
        if (seats.length > 1) return `Someone just took ${listSeats(seats)}. Pick other seats.`;
        return "Some of those seats were just taken. Pick other seats.";
      case "seat_not_found":
        return seats.length ? `${listSeats(seats)} ${seats.length === 1 ? "is" : "are"} not a seat of this event.`
                            : "That seat does not exist on this event.";
      case "section_not_found":
        return `There is no section ${bestSection.value || ""} at this event.`.replace("  ", " ");
      case "insufficient_quantity":
        return d.available === 0 ? `${d.pool || "Those"} tickets are sold out.`
             : `Only ${count(d.available)} ${d.pool || ""} ticket${d.available === 1 ? " is" : "s are"} left. Lower the quantity and try again.`;
      case "pool_not_found":
        return `${d.pool || "That ticket type"} is not sold for this event.`;
      case "user_limit_exceeded":
        return summary && summary.max_seats_per_user
          ? `You have reached the limit of ${summary.max_seats_per_user} tickets per person for this event (holds and purchases together).`
          : "You have reached the ticket limit per person for this event.";
      case "invalid_request":
        if (d.field === "user_id") return "Type a user id first (at most 128 characters).";
        if (d.field === "seats" || d.field === "pools")
          return summary ? `That request is not valid: hold between 1 and ${summary.max_seats_per_hold} tickets at a time, each seat once.`
                         : "That selection is not valid.";
        if (d.field === "best_available") return "Best-available search is not offered by this server yet. Pick seats on the map instead.";
        if (d.field === "payment_ref") return "The payment reference is not valid (at most 255 characters).";
        return "The request was refused: " + (err.message || "invalid request") + ".";
      case "admission_required":
        if (queue.status === "waiting")
          return "You are still in the waiting room: you can hold seats as soon as it is your turn.";
        if (queue.status === "expired" || queue.status === "admitted")
          return "Your waiting-room pass has expired. Join the queue again.";
        return "This event has a waiting room: join the queue, and hold seats when it is your turn.";
      case "admission_invalid":
        return "Your waiting-room pass is not valid for this event or user id (or your turn is over). Join the queue again.";
      case "waiting_room_full":
        return "The waiting room is full right now. Try to join again in a few minutes.";
      case "waiting_room_disabled":
        return "This event has no waiting room: go ahead and hold seats.";
      case "ticket_not_found":
        return "Your place in the waiting room was not found. Join the queue again.";
      case "admission_expired":
        return "Your waiting-room pass has expired. Join the queue again.";
      case "hold_expired":
        return "Too late: this hold expired and its seats went back on sale. Pick seats again.";
      case "hold_released":
        return "This hold was cancelled, so its seats are no longer yours.";
      case "hold_not_active":
        return "This hold is no longer active.";
      case "already_confirmed":
        return "This hold is already paid for: the seats are yours.";
      case "not_owner":
        return "This hold belongs to another user id. Switch back to the user id that made it.";
      case "hold_not_found":
        return "That hold no longer exists.";
      case "event_not_found":
        return "This event does not exist (any more).";
      case "sales_closed":
        return "Sales for this event are closed right now: no new holds can be made. Holds you already have can still be paid.";
      case "idempotency_key_reused":
        return "That request was already sent with different details. Try again.";
      case "unauthorized":
        return window.Holdfast.userToken()
          ? "Your sign-in has expired or is not valid. Open the link from your account again."
          : "The API key was refused. Enter the right key.";
      case "forbidden":
        return "Only the box office's staff can do that.";
      case "unavailable":
        return "The box office could not save that just now. Nothing was changed: try again in a moment.";
      case "network":
        return "The box office server cannot be reached. Check your connection and try again.";
      case "body_too_large":
        return "That selection is too large to send. Hold fewer seats at a time.";
      default:
        if (err.status === 429) return "Too many requests right now. Wait a moment and try again.";
        if (err.status >= 500) return "The box office had a problem (" + err.status + "). Nothing was changed: try again.";
        return err.message || "Something went wrong.";
    }
  }

  /* Flash seats the server complained about. */
  function flagSeats(ids) {
    let first = null;
    for (const id of ids) {
      const el = seatEls.get(id);
      if (!el) continue;
      el.classList.add("err");
      first = first || el;
      setTimeout(() => el.classList.remove("err"), 5000);
    }
    if (first) {
      const r = first.getBoundingClientRect();
      if (r.bottom < 0 || r.top > window.innerHeight) first.scrollIntoView({ block: "center", behavior: "smooth" });
    }
  }

  /* ---------- seat map ---------- */
  function sectionOf(seatId) { return seatId.split("-")[0]; }

  // The smallest seat the map is fitted to while the seats carry their numbers: a number of three
  // digits is read at it, and a finger finds it. A row wider than the map at that size scrolls
  // sideways instead of shrinking to dots (zooming out still goes smaller). A map too large to
  // carry numbers (MAP_NUMBERS_MAX seats) is still fitted whole, an overview.
  const NUMBERED_SEAT_MIN = 22;
  const MAP_NUMBERS_MAX = 20000;      // text nodes cost memory on huge maps
  let seatNumbers = true;

  function seatSizeToFit() {
    if (!summary) return 20;
    let widest = 1;
    for (const s of summary.sections || []) for (const r of s.rows || []) widest = Math.max(widest, r.seats);
    const width = Math.max(260, sectionsEl.clientWidth - 84);      // minus row labels and padding
    let size = Math.floor(width / widest) - 3;                      // minus the gap
    if (size < 10) size = Math.floor((width - 20) / widest) - 1;    // tiny seats: 1px gaps
    const min = seatNumbers ? NUMBERED_SEAT_MIN : window.innerWidth < 700 ? 12 : 5;   // tappable on phones
    return Math.max(min, Math.min(26, size));
  }

  let seatSize = 20;
  function setSeatSize(px) {
    seatSize = Math.max(5, Math.min(34, px));
    mapEl.style.setProperty("--seat", seatSize + "px");
    // Sections wider than the map scroll sideways in their own box: their row labels then stay
    // at its edges (app.css, .wide).
    const avail = sectionsEl.clientWidth;
    for (const block of sectionsEl.children) {
      const cols = Number(block.style.getPropertyValue("--cols")) || 0;
      block.classList.toggle("wide", cols * (seatSize + (seatSize < 10 ? 1 : 3)) + 84 > avail);
    }
    mapEl.classList.toggle("numbers", seatSize >= 18);
    mapEl.classList.toggle("tiny", seatSize < 10);
    centerRows();
  }

  /* A section wider than the map shows its middle first, the seats facing the stage; the rest
     is a sideways scroll away. */
  function centerRows() {
    for (const scroller of sectionsEl.querySelectorAll(".rows-scroll"))
      scroller.scrollLeft = (scroller.scrollWidth - scroller.clientWidth) / 2;
  }

  function buildMap() {
    const totalSeats = (summary.sections || []).reduce(
      (n, s) => n + (s.rows || []).reduce((m, r) => m + r.seats, 0), 0);
    seatNumbers = totalSeats <= MAP_NUMBERS_MAX;
    const proto = document.createElement("button");
    proto.type = "button";
    proto.className = "seat";
    proto.tabIndex = totalSeats > 5000 ? -1 : 0;
    proto.dataset.status = "loading";
    proto.title = "Loading";
    const frag = document.createDocumentFragment();
    for (const s of summary.sections || []) {
      const tally = { available: 0, held: 0, sold: 0, allocated: 0, loading: 0 };
      const countsEl = h("span", { class: "section-count" });
      const barEl = h("div", { class: "section-bar" });
      const block = h("section", { class: "section-block", "data-section": s.id, "aria-label": "Section " + s.id },
        h("header", { class: "section-head" },
          h("h3", null, s.id),
          h("span", { class: "section-price", text: money(s.price, summary.currency) }),
          countsEl),
        barEl);
      const rowsEl = h("div", { class: "rows" });
      let rowsCount = 0, widest = 0;
      for (const r of s.rows || []) {
        rowsCount++;
        widest = Math.max(widest, r.seats);
        const seatsEl = document.createElement("div");
        seatsEl.className = "row-seats";
        const prefix = s.id + "-" + r.id + "-";
        for (let n = 1; n <= r.seats; n++) {
          const el = proto.cloneNode(false);
          const id = prefix + n;
          el.setAttribute("data-seat", id);
          if (seatNumbers) el.textContent = n;
          el._st = "loading";
          el._v = 0;
          seatEls.set(id, el);
          seatsEl.appendChild(el);
        }
        tally.loading += r.seats;
        const row = document.createElement("div");
        row.className = "row";
        row.dataset.row = r.id;
        const l1 = document.createElement("span"); l1.className = "row-label"; l1.textContent = r.id;
        const l2 = l1.cloneNode(true);
        row.append(l1, seatsEl, l2);
        rowsEl.appendChild(row);
      }
      block.style.setProperty("--rows", rowsCount);
      block.style.setProperty("--cols", widest);
      block.append(h("div", { class: "rows-scroll" }, rowsEl));
      frag.appendChild(block);
      // The layout's counts are not shown: they are older than the snapshot, the first counts
      // that the stream's changes follow.
      sectionInfo.set(s.id, { price: s.price, tally, countsEl, barEl, summaryCounts: null });
    }
    sectionsEl.replaceChildren(frag);
    setSeatSize(seatSizeToFit());
  }

  /* The seat counts to show: the seats' own tally once every seat is read and drawn, the last
     snapshot's (or poll's) counts before that, or null while neither is known. */
  function sectionCounts(info) {
    if (!seatsStale && info.tally.loading === 0) return info.tally;
    return info.summaryCounts;
  }
  function renderCounts() {
    countsDirty = false;
    const total = { available: 0, held: 0, sold: 0 };
    let known = true;
    for (const [, info] of sectionInfo) {
      const c = sectionCounts(info);
      if (!c) {
        known = false;
        info.countsEl.textContent = "Loading…";
        info.barEl.replaceChildren(h("div", { class: "bar bar-loading", role: "img", "aria-label": "loading" }));
        continue;
      }
      total.available += c.available; total.held += c.held; total.sold += c.sold;
      info.countsEl.textContent = `${count(c.available)} of ${count(c.available + c.held + c.sold)} available`;
      info.barEl.replaceChildren(countsBar(c));
    }
    const box = $("event-counts");
    box.dataset.state = known ? "known" : "loading";
    const figure = (n) => (known ? count(n) : "—");
    box.replaceChildren(
      h("div", { class: "big-count" }, h("strong", { text: figure(total.available) }), h("span", { class: "k-available", text: "available" })),
      h("div", { class: "big-count" }, h("strong", { text: figure(total.held) }), h("span", { class: "k-held", text: "held" })),
      h("div", { class: "big-count" }, h("strong", { text: figure(total.sold) }), h("span", { class: "k-sold", text: "sold" })));
    if (!known) box.setAttribute("aria-label", "Counts loading"); else box.removeAttribute("aria-label");
  }
  function countsChanged() {
    if (countsDirty) return;
    countsDirty = true;
    requestAnimationFrame(renderCounts);
  }

  /* Apply a seat state. version undefined: a local change we know happened (our own request). */
  function applySeat(id, status, version, allocation) {
    const el = seatEls.get(id);
    if (!el) return;
    // The allocation a seat is set aside for: the seat list names it, the stream does not (a
    // seat the stream shows allocated has its name read once the change settles).
    if (allocation) el._alloc = allocation;
    if (version !== undefined && version !== null) {
      if (version <= el._v) {
        if (allocation && el._st === "allocated" && !seatsStale) drawSeat(el, "allocated");
        return;
      }
      el._v = version;
    }
    if (status === "allocated" && !allocation && !el._alloc) allocationNamesWanted();
    const old = el._st;
    if (old === status) return;
    el._st = status;
    if (!seatsStale) drawSeat(el, status);
    const info = sectionInfo.get(sectionOf(id));
    if (info) { info.tally[old]--; info.tally[status]++; countsChanged(); }
    if (status !== "available" && selected.has(id) && !mySeatHold.has(id)) {
      selected.delete(id);
      el.classList.remove("sel");
      selectionChanged();
      if (seatsLoaded) { say(`${id} was just taken by someone else and left your selection.`, "warn"); flagSeats([id]); }
    }
    if (status !== "held" && mySeatHold.has(id)) {
      // Our hold on it ended (expired, released, or committed → sold).
      mySeatHold.delete(id);
      el.classList.remove("mine");
    }
  }

  function drawSeat(el, status) {
    el.dataset.status = status;
    if (status === "loading") el.title = "Loading";
    else if (status === "allocated") el.title = "Set aside: " + (el._alloc || "an allocation");
    else el.removeAttribute("title");
  }

  /* Seats the stream showed allocated get their allocation's name from one read of the
     allocated seats, a moment after the change (an allocation sets many seats aside at once). */
  let allocationTimer = null;
  function allocationNamesWanted() {
    if (allocationTimer !== null) return;
    allocationTimer = setTimeout(async () => {
      allocationTimer = null;
      try {
        let after = null;
        for (;;) {
          let url = `/v1/events/${enc}/seats?status=allocated&limit=10000`;
          if (after) url += "&after=" + encodeURIComponent(after);
          const page = await api("GET", url);
          for (const s of page.seats || []) applySeat(s.id, s.status, s.version, s.allocation);
          if (!page.next) break;
          after = page.next;
        }
      } catch (_) { /* the names wait for the next read of the seats */ }
    }, 300);
  }

  /* The stream was lost: what the map shows may be missing changes from now on. */
  function seatsLost() {
    streamEpoch++;
    if (seatsStale) return;
    seatsStale = true;
    mapEl.classList.add("settling");
    for (const el of seatEls.values()) drawSeat(el, "loading");
    mapEl.setAttribute("aria-busy", "true");
    mapStatus.hidden = false;
    mapStatus.textContent = "Reconnecting: the seats are shown again once they are up to date.";
    for (const [, info] of sectionInfo) info.summaryCounts = null;
    poolsCurrent = false;
    for (const [, info] of poolInfo) renderPool(info);
    countsChanged();
  }

  /* A read of every seat that started while changes reached us (the stream open, or polling)
     has finished: what the map knows is current again. */
  function seatsCurrent() {
    if (seatsStale) {
      seatsStale = false;
      for (const el of seatEls.values()) drawSeat(el, el._st);
      if (streamOpen) setLive("live", "Live");
    }
    if (!seatsLoaded) {
      seatsLoaded = true;
      console.debug("holdfast: seats loaded");
    }
    mapEl.setAttribute("aria-busy", "false");
    mapStatus.hidden = true;
    countsChanged();
    // Seats fade into a new state from now on, once the states drawn in bulk have been styled.
    requestAnimationFrame(() => requestAnimationFrame(() => { if (!seatsStale) mapEl.classList.remove("settling"); }));
  }

  let loading = null, reloadWanted = false;
  async function loadSeats() {
    if (loading) { reloadWanted = true; return loading; }
    loading = (async () => {
      do {
        reloadWanted = false;
        let after = null;
        // Changes after this read reach us only when the stream is open or polling goes on.
        const fed = streamOpen || pollTimer !== null, epoch = streamEpoch;
        for (;;) {
          let url = `/v1/events/${enc}/seats?limit=10000`;
          if (after) url += "&after=" + encodeURIComponent(after);
          const page = await api("GET", url);
          for (const s of page.seats || []) applySeat(s.id, s.status, s.version, s.allocation);
          if (!page.next) break;
          after = page.next;
          if (!seatsLoaded) mapStatus.textContent = `Loading seats… ${count(indexOfSeat(after))} of ${count(seatEls.size)}`;
        }
        if (fed && epoch === streamEpoch) seatsCurrent();
        countsChanged();
      } while (reloadWanted);
    })();
    try { await loading; } finally { loading = null; }
  }
  let seatIndexCache = null;
  function indexOfSeat(id) {
    if (!seatIndexCache) { seatIndexCache = new Map(); let i = 0; for (const k of seatEls.keys()) seatIndexCache.set(k, ++i); }
    return seatIndexCache.get(id) || 0;
  }

  /* ---------- pools ---------- */
  function buildPools() {
    const pools = summary.pools || [];
    $("pools-panel").hidden = pools.length === 0;
    $("sel-empty-pools").hidden = pools.length === 0;
    const box = $("pools");
    box.replaceChildren();
    for (const p of pools) {
      const input = h("input", { type: "number", min: "0", value: "0", inputmode: "numeric",
                                 id: "pool-qty-" + p.id, "data-pool": p.id, "aria-label": "Quantity of " + p.id });
      const minus = h("button", { type: "button", class: "btn ghost small step", "aria-label": "One less", text: "−" });
      const plus = h("button", { type: "button", class: "btn ghost small step", "aria-label": "One more", text: "+" });
      const nums = h("dl", { class: "counts" });
      const bar = h("div", { class: "pool-bar" });
      const card = h("div", { class: "card pool-card", "data-pool": p.id },
        h("div", { class: "pool-head" }, h("h3", { text: p.id }), h("span", { class: "section-price", text: money(p.price, summary.currency) })),
        bar, nums,
        h("div", { class: "qty" }, h("label", { for: input.id, class: "muted small", text: "Tickets" }), minus, input, plus));
      const info = { pool: p, card, bar, nums, input };
      minus.addEventListener("click", () => { input.value = Math.max(0, (Number(input.value) || 0) - 1); selectionChanged(); });
      plus.addEventListener("click", () => { input.value = Math.min(maxQty(info), (Number(input.value) || 0) + 1); selectionChanged(); });
      input.addEventListener("input", selectionChanged);
      poolInfo.set(p.id, info);
      box.append(card);
      renderPool(info);
    }
  }
  function maxQty(info) {
    return Math.max(0, Math.min(info.pool.available, summary.max_seats_per_hold || 10));
  }
  function renderPool(info) {
    const p = info.pool;
    // Like the seats, a pool's counts wait for the snapshot (or a poll) before they are shown.
    const figure = (n) => (poolsCurrent ? count(n) : "—");
    info.bar.replaceChildren(poolsCurrent ? countsBar({ available: p.available, held: p.held, sold: p.sold })
                                          : h("div", { class: "bar bar-loading", role: "img", "aria-label": "loading" }));
    info.nums.replaceChildren(
      h("div", null, h("dt", { class: "k-available", text: "Available" }), h("dd", { text: figure(p.available) })),
      h("div", null, h("dt", { class: "k-held", text: "Held" }), h("dd", { text: figure(p.held) })),
      h("div", null, h("dt", { class: "k-sold", text: "Sold" }), h("dd", { text: figure(p.sold) })));
    info.card.dataset.counts = poolsCurrent ? "known" : "loading";
    info.input.max = String(maxQty(info));
    info.card.classList.toggle("sold-out", p.available === 0);
  }
  function applyPool(update) {
    const info = poolInfo.get(update.id);
    if (!info) return;
    Object.assign(info.pool, update);
    renderPool(info);
  }

  /* ---------- selection ---------- */
  function poolQuantities() {
    const out = {};
    for (const [id, info] of poolInfo) {
      const q = Math.floor(Number(info.input.value) || 0);
      if (q > 0) out[id] = q;
    }
    return out;
  }

  let selectionQueued = false;
  function selectionChanged() {
    if (selectionQueued) return;
    selectionQueued = true;
    queueMicrotask(renderSelection);
  }
  function renderSelection() {
    selectionQueued = false;
    const cur = summary.currency;
    const items = [];
    let total = 0;
    for (const id of selected) {
      const info = sectionInfo.get(sectionOf(id));
      const price = info ? info.price : 0;
      total += price;
      const [sec, row, num] = id.split("-");
      items.push(h("li", { "data-seat": id },
        h("span", { class: "sel-what" }, h("strong", { text: sec }), ` Row ${row} · Seat ${num}`),
        h("span", { class: "sel-price", text: money(price, cur) }),
        h("button", { type: "button", class: "icon-btn", "aria-label": "Remove " + id, text: "×",
                      onclick: () => toggleSeat(id) })));
    }
    const pools = poolQuantities();
    for (const [id, q] of Object.entries(pools)) {
      const p = poolInfo.get(id).pool;
      total += q * p.price;
      items.push(h("li", { "data-pool": id },
        h("span", { class: "sel-what" }, h("strong", { text: id }), ` × ${q}`),
        h("span", { class: "sel-price", text: money(q * p.price, cur) })));
    }
    selList.replaceChildren(...items);
    selEmpty.hidden = items.length > 0;
    selTotal.textContent = items.length ? money(total, cur) : "—";
    const units = selected.size + Object.values(pools).reduce((a, b) => a + b, 0);
    holdBtn.disabled = units === 0 || busy;
    clearBtn.disabled = units === 0;
    holdBtn.textContent = units ? `Hold ${units} ticket${units === 1 ? "" : "s"}` : "Hold";
    // Phones: the side panel is below the map, so a bar at the bottom carries the Hold button.
    $("mobile-bar").hidden = units === 0;
    $("mobile-sum").textContent = units ? `${units} ticket${units === 1 ? "" : "s"} · ${money(total, cur)}` : "";
    $("mobile-hold").disabled = holdBtn.disabled;
  }

  function toggleSeat(id) {
    const el = seatEls.get(id);
    if (!el) return;
    if (selected.has(id)) {
      selected.delete(id);
      el.classList.remove("sel");
    } else {
      if (el.dataset.status === "loading") {
        say(seatsLoaded ? "Reconnecting: the seats can be picked again once they are up to date."
                        : "The seats are still loading: pick one in a moment.", "info");
        return;
      }
      if (el._st !== "available") {
        say(mySeatHold.has(id) ? `${id} is already in your hold.`
            : el._st === "held" ? `${id} is held by another buyer right now. It may come back if they don't buy it.`
            : el._st === "allocated" ? `${id} is set aside (${el._alloc || "an allocation"}): it is not on public sale.`
            : ownedSeats.has(id) ? `${id} is already yours.` : `${id} is sold.`, "info");
        return;
      }
      const max = summary.max_seats_per_hold || 10;
      const units = selected.size + Object.values(poolQuantities()).reduce((a, b) => a + b, 0);
      if (units >= max) {
        say(`You can hold at most ${max} tickets at a time.`, "warn");
        return;
      }
      selected.add(id);
      el.classList.add("sel");
    }
    selectionChanged();
  }

  function clearSelection() {
    for (const id of selected) { const el = seatEls.get(id); if (el) el.classList.remove("sel"); }
    selected.clear();
    for (const [, info] of poolInfo) info.input.value = "0";
    selectionChanged();
  }

  /* ---------- holds ---------- */
  let busy = false;
  function setBusy(b) {
    busy = b;
    holdBtn.disabled = b || holdBtn.disabled;
    bestBtn.disabled = b;
    if (!b) selectionChanged();
  }

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

  async function placeHold(body, context) {
    const user = requireUser();
    if (!user) return;
    body.user_id = user;
    const token = admissionToken();
    if (token) body.admission_token = token;
    setBusy(true);
    try {
      const hold = await api("POST", `/v1/events/${enc}/holds`, body);
      for (const id of hold.seats || []) {
        selected.delete(id);
        const el = seatEls.get(id);
        if (el) el.classList.remove("sel");
      }
      if (body.pools) for (const [, info] of poolInfo) info.input.value = "0";
      addHold(hold);
      const n = (hold.seats || []).length + Object.values(hold.pools || {}).reduce((a, b) => a + b, 0);
      say(`Held ${n} ticket${n === 1 ? "" : "s"} for you${hold.seats && hold.seats.length ? ": " + listSeats(hold.seats) : ""}. Pay before the countdown ends.`, "success");
      if (hold.seats && hold.seats.length) {
        const first = seatEls.get(hold.seats[0]);
        if (first && context === "best") first.scrollIntoView({ block: "center", behavior: "smooth" });
      }
    } catch (err) {
      say(explain(err, context), "error");
      const d = err.detail || {};
      if (Array.isArray(d.seats) && d.seats.length) {
        const ids = d.seats.map((s) => (typeof s === "string" ? s : s.id));
        if (err.code === "seats_unavailable" || err.code === "seat_not_found") {
          for (const id of ids) { selected.delete(id); const el = seatEls.get(id); if (el) el.classList.remove("sel"); }
        }
        flagSeats(ids);
      }
      if (err.code === "insufficient_quantity" && d.pool && poolInfo.has(d.pool)) {
        const info = poolInfo.get(d.pool);
        if (typeof d.available === "number") applyPool({ id: d.pool, available: d.available });
        info.card.classList.add("err");
        setTimeout(() => info.card.classList.remove("err"), 5000);
      }
      if (err.code === "invalid_request" && d.field === "user_id") userInput.classList.add("invalid");
      if (/^admission_/.test(err.code)) admissionFailed(err.code);
    } finally {
      setBusy(false);
    }
  }

  function saveHolds() {
    const list = [];
    for (const [id, rec] of holds) if (rec.state === "held") list.push({ id, user_id: rec.hold.user_id });
    try { localStorage.setItem(HOLDS_STORE, JSON.stringify(list)); } catch (_) { /* ignore */ }
  }

  function deadlineOf(hold) {
    // Count down to expires_at, corrected for the difference between our clock and the server's
    // (expires_in_ms is measured by the server at the moment it answered).
    const at = Date.parse(hold.expires_at);
    if (typeof hold.expires_in_ms === "number" && hold.status === "held") {
      const skew = at - (Date.now() + hold.expires_in_ms);
      if (Math.abs(skew) > 2000) return at - skew;
    }
    return at;
  }

  function addHold(hold) {
    let rec = holds.get(hold.reservation_id);
    if (!rec) {
      rec = { hold, el: null, state: hold.status };
      holds.set(hold.reservation_id, rec);
    }
    rec.hold = hold;
    rec.state = hold.status;
    rec.deadline = deadlineOf(hold);
    if (hold.status === "held") {
      for (const id of hold.seats || []) {
        mySeatHold.set(id, hold.reservation_id);
        const el = seatEls.get(id);
        if (el) { el.classList.add("mine"); applySeat(id, "held"); }
      }
    }
    renderHold(rec);
    saveHolds();
    tick();
  }

  function endHold(rec, state) {
    rec.state = state;
    for (const id of rec.hold.seats || []) {
      if (mySeatHold.get(id) === rec.hold.reservation_id) {
        mySeatHold.delete(id);
        const el = seatEls.get(id);
        if (el) el.classList.remove("mine");
      }
    }
    renderHold(rec);
    saveHolds();
  }

  function renderHold(rec) {
    const hold = rec.hold;
    const cur = hold.currency || summary.currency;
    const pools = Object.entries(hold.pools || {});
    const lines = [
      ...(hold.seats || []).map((id) => {
        const [sec, row, num] = id.split("-");
        return h("li", { "data-seat": id }, h("strong", { text: sec }), ` Row ${row} · Seat ${num}`);
      }),
      ...pools.map(([id, q]) => h("li", null, h("strong", { text: id }), ` × ${q}`)),
    ];
    const countdown = h("span", { class: "countdown", "aria-label": "Time left" });
    const payRef = h("input", { type: "text", class: "pay-ref", placeholder: "Payment reference (optional)",
                                maxlength: "255", "aria-label": "Payment reference" });
    // What the buyer does is buy and pay the hold's total, or give the seats up: "Buy · $900.00"
    // and "Cancel hold" (API.md's commit and release).
    const commit = h("button", { type: "button", class: "btn primary commit-btn", text: "Buy · " + money(hold.total, cur) });
    const release = h("button", { type: "button", class: "btn ghost release-btn", text: "Cancel hold" });
    const extend = h("button", { type: "button", class: "link-btn extend-btn", text: "Need more time?" });
    const dismiss = h("button", { type: "button", class: "btn ghost small dismiss-btn", text: "Dismiss" });
    const stateText = { held: "Held for you", expired: "Expired", released: "Cancelled", confirmed: "Paid" }[rec.state] || rec.state;
    const el = h("article", { class: "hold", "data-hold": hold.reservation_id, "data-state": rec.state },
      h("header", { class: "hold-head" },
        h("span", { class: "hold-state", text: stateText }),
        rec.state === "held" ? countdown : null),
      rec.state === "held" && !rec.capped ? h("div", { class: "hold-extend" }, extend) : null,
      h("ul", { class: "hold-lines" }, lines),
      rec.state === "held" ? h("div", { class: "hold-pay" }, payRef, h("div", { class: "actions" }, release, commit)) : null,
      rec.state === "expired" ? h("p", { class: "small muted", text: "The time ran out and these seats went back on sale." }) : null,
      rec.state === "released" ? h("p", { class: "small muted", text: "You cancelled this hold; the seats are back on sale." }) : null,
      rec.state !== "held" ? h("div", { class: "actions" }, dismiss) : null);
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

  async function commitHold(rec, paymentRef, buttons) {
    buttons.forEach((b) => { b.disabled = true; });
    const body = { user_id: rec.hold.user_id };
    if (paymentRef) body.payment_ref = paymentRef;
    try {
      const order = await api("POST", `/v1/holds/${encodeURIComponent(rec.hold.reservation_id)}/commit`, body);
      for (const id of order.seats || []) { applySeat(id, "sold"); markOwned(id); }
      endHold(rec, "confirmed");
      holds.delete(rec.hold.reservation_id);
      rec.el.remove();
      refreshHoldsCard();
      addOrder(order, true);
      say(`Paid. Order ${order.order_id} is confirmed: ${orderItems(order)}. Enjoy the show!`, "success");
      completeQueue();
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
      const hold = await api("POST", `/v1/holds/${encodeURIComponent(rec.hold.reservation_id)}/extend`, { user_id: rec.hold.user_id });
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
      const hold = await api("POST", `/v1/holds/${encodeURIComponent(rec.hold.reservation_id)}/release`, { user_id: rec.hold.user_id });
      rec.hold = hold;
      for (const id of hold.seats || []) applySeat(id, "available");
      endHold(rec, hold.status || "released");
      say(hold.status === "expired" ? "That hold had already expired; the seats are back on sale." : "Hold cancelled. The seats are back on sale.", "info");
    } catch (err) {
      say(explain(err), "error");
      if (err.code === "already_confirmed") endHold(rec, "confirmed");
      else buttons.forEach((b) => { b.disabled = false; });
    }
  }

  function fmtLeft(ms) {
    const s = Math.max(0, Math.ceil(ms / 1000));
    const m = Math.floor(s / 60);
    return String(m).padStart(2, "0") + ":" + String(s % 60).padStart(2, "0");
  }
  function tick() {
    const now = Date.now();
    for (const [, rec] of holds) {
      if (rec.state !== "held") continue;
      const left = rec.deadline - now;
      if (left <= 0) {
        endHold(rec, "expired");   // the server frees the seats at that instant; the stream says so
        say("Your hold expired and its seats went back on sale.", "warn");
        continue;
      }
      if (rec.countdownEl) {
        rec.countdownEl.textContent = fmtLeft(left);
        rec.countdownEl.classList.toggle("urgent", left < 60000);
      }
    }
  }

  async function restoreHolds() {
    let list = [];
    try { list = JSON.parse(localStorage.getItem(HOLDS_STORE) || "[]"); } catch (_) { list = []; }
    for (const item of list) {
      try {
        const hold = await api("GET", `/v1/holds/${encodeURIComponent(item.id)}`);
        if (hold.status === "held") addHold(hold);
      } catch (_) { /* gone: forget it */ }
    }
    saveHolds();
  }

  /* ---------- waiting room (API section 6) ----------
     When the event has a room, holds need an admission token: the visitor joins the queue,
     the page polls the ticket (which also keeps it alive: a ticket not polled for the room's
     abandon_after_s is dropped), shows the place in line, a progress bar from the place where
     the visitor joined to the front, and the expected wait, and once admitted the token rides
     along with every hold. After the purchase (or when the visitor leaves the line) the page
     completes the ticket, which frees the slot for the next person at once. Kept per event and
     user in sessionStorage, so a reload keeps the place. */
  // How often a waiting ticket is polled: often enough that the place shown follows the line,
  // and far inside abandon_after_s (300 s by default) even when a background tab's timers are
  // slowed to one a second. A room that drops tickets sooner is polled four times in that span.
  const QUEUE_POLL_MS = 2000;
  const QUEUE_POLL_MIN_MS = 250;
  function queuePollMs() {
    const abandon = summary && summary.waiting_room && summary.waiting_room.abandon_after_s;
    if (!(abandon > 0)) return QUEUE_POLL_MS;
    return Math.max(QUEUE_POLL_MIN_MS, Math.min(QUEUE_POLL_MS, abandon * 1000 / 4));
  }
  // After a failed poll (the server away for a moment) the place is kept and asked again later.
  const QUEUE_RETRY_MS = 5000;
  const QUEUE_EMPTY = { ticket: null, status: "none", position: null, start: null, wait: null, token: null, expiresAt: null, note: null, skew: 0 };
  const queue = Object.assign({ user: null }, QUEUE_EMPTY);
  let queueTimer = null;
  const queueKey = (u) => "holdfast.queue." + eventId + "." + u;
  const roomEnabled = () => !!(summary && summary.waiting_room && summary.waiting_room.enabled);

  function saveQueue() {
    if (!queue.user) return;
    try {
      if (queue.ticket) sessionStorage.setItem(queueKey(queue.user), JSON.stringify(
        { ticket: queue.ticket, token: queue.token, expiresAt: queue.expiresAt, status: queue.status,
          position: queue.position, start: queue.start, wait: queue.wait, skew: queue.skew }));
      else sessionStorage.removeItem(queueKey(queue.user));
    } catch (_) { /* ignore */ }
  }
  /* Forget the ticket (completed, left, refused or gone); `note` says why, on the card. */
  function resetQueue(note) {
    clearTimeout(queueTimer);
    Object.assign(queue, QUEUE_EMPTY, { note: note || null });
    saveQueue();
    renderQueue();
  }
  function loadQueue() {
    const u = userInput.value.trim();
    // Typing ends after a pause; by then this visitor may have joined the queue already (the
    // join sets queue.user): what the page knows is newer than what sessionStorage keeps.
    if (u && u === queue.user) return;
    clearTimeout(queueTimer);
    Object.assign(queue, QUEUE_EMPTY, { user: u || null });
    if (u) {
      try {
        const saved = JSON.parse(sessionStorage.getItem(queueKey(u)) || "null");
        if (saved && saved.ticket) Object.assign(queue, saved);
      } catch (_) { /* ignore */ }
    }
    // A waiting ticket is polled again at once (it moved meanwhile, or was admitted).
    if (queue.status === "waiting" || (queue.status === "admitted" && !queue.token)) pollQueue();
    renderQueue();
  }
  /* The pass's expires_at is the server's instant, so it is counted down on the server's clock:
     queue.skew (server minus browser, ms) comes from the Date of the room's last answer. Date
     has whole seconds, so the server's time is taken as the middle of its second, and a skew
     within the 2 s that this and the trip account for is taken as none. */
  function clockSkew(received) {
    const server = received && Date.parse(received.date || "");
    if (!Number.isFinite(server)) return 0;
    const skew = server + 500 - received.at;
    return Math.abs(skew) > 2000 ? skew : 0;
  }
  const serverNow = () => Date.now() + (queue.skew || 0);
  function tokenLive() {
    return !!queue.token && !(queue.expiresAt && Date.parse(queue.expiresAt) <= serverNow());
  }
  function admissionToken() {
    if (queue.user !== userInput.value.trim() || !tokenLive()) return null;
    return queue.token;
  }

  function fmtWait(s) {
    if (typeof s !== "number") return "";
    if (s <= 0) return "any moment now";
    if (s < 60) return "about " + Math.round(s) + (Math.round(s) === 1 ? " second" : " seconds");
    if (s < 3600) return "about " + Math.round(s / 60) + " min";
    return "about " + (s / 3600).toFixed(1) + " h";
  }
  /* How far the visitor has come, in percent: from the place where the ticket was first seen
     (0) to the front of the line (100, admitted). */
  function queueProgress() {
    if (queue.status === "admitted") return 100;
    if (!queue.start || !queue.position) return 0;
    return Math.max(0, Math.min(100, Math.round(100 * (queue.start - queue.position) / queue.start)));
  }

  function renderQueue() {
    const card = $("queue-card"), body = $("queue-body");
    card.hidden = !roomEnabled() && queue.status === "none";
    if (card.hidden) return;
    card.dataset.state = queue.status;
    const join = h("button", { type: "button", class: "btn primary", id: "queue-join",
                               text: queue.status === "none" ? "Join the queue" : "Join again" });
    join.addEventListener("click", joinQueue);
    if (queue.status === "waiting") {
      renderWaiting(body);
    } else if (queue.status === "admitted" && tokenLive()) {
      body.replaceChildren(
        h("div", { class: "queue-progress", id: "queue-progress", role: "progressbar", "aria-label": "Your way to the front of the line",
                   "aria-valuemin": "0", "aria-valuemax": "100", "aria-valuenow": "100" },
          h("span", { id: "queue-progress-fill", style: "width:100%" })),
        h("p", { class: "queue-in" }, h("strong", { text: "You're in." }), " Pick your seats and hold them."),
        h("p", { class: "small muted" }, "Your pass is valid for ", h("span", { class: "queue-left", id: "queue-left" }), "."));
      tickQueue();
    } else if (queue.status === "admitted") {
      // Admitted, the token not read yet (a join answered "admitted"): the next poll brings it.
      body.replaceChildren(h("p", { class: "small", text: "It's your turn: getting your pass…" }));
    } else if (queue.status === "expired" || queue.status === "abandoned") {
      body.replaceChildren(
        h("p", { class: "small queue-ended", text: queue.status === "abandoned"
          ? "Your place in line lapsed while this page was away. Join again to get back in line."
          : "Your pass has expired, so you can no longer hold seats with it. Join again: you go to the back of the line." }),
        h("div", { class: "actions" }, join));
    } else {
      const notes = {
        done: "Your purchase is done and your turn is over, so the next person in line can go in. To buy more, join the queue again.",
        left: "You left the line. Join again whenever you like: you start at the back.",
        invalid: "Your pass was not accepted. Join the queue again to get a new one.",
        lost: "Your place in line was not found any more. Join the queue again.",
        over: "Your turn in this line is over (you bought or left in another tab). To buy more, join the queue again.",
      };
      body.replaceChildren(
        h("p", { class: "small queue-intro", text: notes[queue.note] ||
          "This event is in high demand: buyers enter in turn. Join the queue to hold seats." }),
        h("div", { class: "actions" }, join));
    }
  }
  /* The waiting card is updated in place from poll to poll, so its bar slides forward. */
  function renderWaiting(body) {
    if (!body.querySelector("#queue-position")) {
      const leave = h("button", { type: "button", class: "btn ghost small", id: "queue-leave", text: "Leave the line" });
      leave.addEventListener("click", leaveQueue);
      body.replaceChildren(
        h("div", { class: "queue-pos" }, h("span", { class: "muted small", text: "Your place in line" }),
          h("strong", { id: "queue-position" }), h("span", { class: "muted small", id: "queue-ahead" })),
        h("div", { class: "queue-progress", id: "queue-progress", role: "progressbar",
                   "aria-label": "Your way to the front of the line", "aria-valuemin": "0", "aria-valuemax": "100" },
          h("span", { id: "queue-progress-fill" })),
        h("p", { class: "small queue-wait", id: "queue-wait" }),
        h("p", { class: "small muted", text: "Keep this page open: you move up automatically, and you can hold seats as soon as it is your turn." }),
        h("div", { class: "actions" }, leave));
    }
    const pct = queueProgress();
    $("queue-position").textContent = queue.position ? "#" + count(queue.position) : "…";
    const ahead = queue.position ? queue.position - 1 : null;
    $("queue-ahead").textContent = ahead === null ? "" : ahead === 0 ? "You are next." : ahead === 1 ? "1 person ahead of you" : count(ahead) + " people ahead of you";
    $("queue-progress").setAttribute("aria-valuenow", String(pct));
    $("queue-progress-fill").style.width = pct + "%";
    $("queue-wait").textContent = queue.wait !== null ? "Estimated wait: " + fmtWait(queue.wait) + "." : "";
  }
  function tickQueue() {
    const el = document.getElementById("queue-left");
    if (!el || !queue.expiresAt) return;
    const left = Date.parse(queue.expiresAt) - serverNow();
    if (left <= 0) {
      queue.status = "expired"; queue.token = null;
      saveQueue(); renderQueue();
      say("Your waiting-room pass has expired. Join the queue again to hold seats.", "warn");
      return;
    }
    el.textContent = fmtLeft(left);
    el.classList.toggle("urgent", left < 60000);
  }

  function applyTicket(t, received) {
    // Completed elsewhere (bought or left in another tab): this ticket's turn is over.
    if (t.status === "completed") { resetQueue("over"); return; }
    const fresh = t.ticket && t.ticket !== queue.ticket;
    if (fresh) Object.assign(queue, QUEUE_EMPTY);
    if (received) queue.skew = clockSkew(received);
    queue.ticket = t.ticket || queue.ticket;
    const wasAdmitted = queue.status === "admitted" && tokenLive();
    queue.status = t.status || queue.status;
    queue.note = null;
    if (typeof t.position === "number") {
      queue.position = t.position;
      // The bar starts from the first place seen; a place never grows (API section 6).
      if (!queue.start || t.position > queue.start) queue.start = t.position;
    }
    if (typeof t.estimated_wait_s === "number") queue.wait = t.estimated_wait_s;
    if (t.admission_token) { queue.token = t.admission_token; queue.expiresAt = t.expires_at || null; }
    if (queue.status !== "admitted") { queue.token = null; queue.expiresAt = null; }
    if (queue.status === "admitted" && queue.token && !wasAdmitted) say("You're in! Pick your seats and hold them.", "success");
    saveQueue();
    renderQueue();
    clearTimeout(queueTimer);
    if (queue.status === "waiting") queueTimer = setTimeout(pollQueue, queuePollMs());
    else if (queue.status === "admitted" && !queue.token) pollQueue();
  }

  async function joinQueue() {
    const user = requireUser();
    if (!user) return;
    queue.user = user;
    try {
      const received = {};
      const t = await api("POST", `/v1/events/${enc}/queue`, { user_id: user }, undefined, received);
      if (t.status === "waiting") say(`You joined the queue${t.position ? " at number " + count(t.position) : ""}.`, "info");
      applyTicket(t, received);
    } catch (err) {
      if (err.code === "waiting_room_disabled") {
        resetQueue();
        summary.waiting_room = { enabled: false };
        renderQueue();
        say("This event has no waiting room any more: go ahead and hold seats.", "info");
      } else say(explain(err), err.code === "waiting_room_full" ? "warn" : "error");
    }
  }

  async function pollQueue() {
    clearTimeout(queueTimer);
    const ticket = queue.ticket, user = queue.user;
    if (!ticket) return;
    try {
      const received = {};
      const t = await api("GET", `/v1/events/${enc}/queue/${encodeURIComponent(ticket)}`, undefined, undefined, received);
      if (queue.ticket === ticket && queue.user === user) applyTicket(t, received);
    } catch (err) {
      if (queue.ticket !== ticket || queue.user !== user) return;      // left or switched meanwhile
      if (err.code === "ticket_not_found") {
        resetQueue("lost");
        say(explain(err), "warn");
        return;
      }
      queueTimer = setTimeout(pollQueue, QUEUE_RETRY_MS);      // the server is away: keep the place, try later
    }
  }

  /* Tell the server this ticket is done, so the slot goes to the next person at once. */
  async function completeTicket(ticket) {
    try {
      await api("POST", `/v1/events/${enc}/queue/${encodeURIComponent(ticket)}/complete`, {});
      return true;
    } catch (err) {
      return err.code === "ticket_not_found";      // gone already: nothing to free
    }
  }

  async function leaveQueue() {
    const ticket = queue.ticket;
    if (!ticket) return;
    clearTimeout(queueTimer);
    if (await completeTicket(ticket)) {
      if (queue.ticket === ticket) resetQueue("left");
      say("You left the waiting room.", "info");
    } else {
      say("Leaving the line did not go through: try again in a moment.", "error");
      if (queue.ticket === ticket && queue.status === "waiting") queueTimer = setTimeout(pollQueue, queuePollMs());
    }
  }

  function admissionFailed(code) {
    if (!summary.waiting_room || !summary.waiting_room.enabled) summary.waiting_room = { enabled: true };
    if (code === "admission_expired" || (code === "admission_required" && queue.status === "admitted")) {
      // The pass ran out (the server's clock may be a little ahead of ours).
      clearTimeout(queueTimer);
      Object.assign(queue, { status: "expired", token: null, expiresAt: null });
      saveQueue();
    } else if (code === "admission_invalid") {
      resetQueue("invalid");
      return;
    }
    renderQueue();
  }

  async function completeQueue() {
    // Bought: free our place for the next person in line (the pass stops working).
    if (!queue.ticket || queue.status !== "admitted" || !tokenLive()) return;
    for (const [, rec] of holds) if (rec.state === "held") return;     // still paying for something
    const ticket = queue.ticket;
    if (await completeTicket(ticket) && queue.ticket === ticket) resetQueue("done");
  }

  /* ---------- orders ---------- */
  /* "FLOOR-A-12, FLOOR-A-13 and 2 × GA": what an order bought, in a sentence. */
  function orderItems(order) {
    const items = (order.seats || []).concat(Object.entries(order.pools || {}).map(([id, q]) => `${q} × ${id}`));
    return listSeats(items);
  }
  const orders = new Map();
  function markOwned(id) {
    ownedSeats.add(id);
    const el = seatEls.get(id);
    if (el) el.classList.add("owned");
  }
  function addOrder(order, fresh) {
    if (orders.has(order.order_id) || order.status !== "confirmed") return;
    orders.set(order.order_id, order);
    for (const id of order.seats || []) markOwned(id);
    const seats = order.seats || [];
    const pools = Object.entries(order.pools || {});
    const el = h("article", { class: "order" + (fresh ? " fresh" : ""), "data-order": order.order_id },
      h("header", { class: "hold-head" },
        h("span", { class: "hold-state ok", text: "Confirmed" }),
        h("span", { class: "order-total", text: money(order.total, order.currency || summary.currency) })),
      h("ul", { class: "hold-lines" },
        seats.map((id) => { const [sec, row, num] = id.split("-"); return h("li", null, h("strong", { text: sec }), ` Row ${row} · Seat ${num}`); }),
        pools.map(([id, q]) => h("li", null, h("strong", { text: id }), ` × ${q}`))),
      h("p", { class: "small muted order-id", text: "Order " + order.order_id + (order.payment_ref ? " · " + order.payment_ref : "") }));
    $("orders").prepend(el);
    $("orders-card").hidden = false;
  }
  async function loadOrders() {
    const u = userInput.value.trim();
    for (const id of ownedSeats) { const el = seatEls.get(id); if (el) el.classList.remove("owned"); }
    ownedSeats.clear();
    orders.clear();
    $("orders").replaceChildren();
    $("orders-card").hidden = true;
    if (!u) return;
    try {
      const data = await api("GET", `/v1/users/${encodeURIComponent(u)}/orders?event=${enc}`);
      for (const o of (data && data.orders) || []) addOrder(o, false);
    } catch (_) { /* optional: an older server may not list orders */ }
  }

  /* ---------- live updates ---------- */
  // How long the page waits for the stream to open (at first, or again after a loss) before it
  // reads the seats every 5 s instead: a proxy that buffers event streams, or a stream that
  // cannot connect, would otherwise leave the map loading for good.
  const STREAM_WAIT_MS = 5000;
  // After the stream reopens without a snapshot (a server resuming from Last-Event-ID sends the
  // missed changes instead), how long a snapshot may still come before the seats are read.
  const RESUME_READ_DELAY_MS = 300;
  let source = null, pollTimer = null, retryTimer = null, waitTimer = null, resyncTimer = null;
  function setLive(state, text) { live.dataset.state = state; live.textContent = text; }

  function readSeats() {
    loadSeats().catch((err) => {
      seatsFailed(err);
      // Over an open stream no snapshot comes again by itself: try the read again later.
      clearTimeout(resyncTimer);
      if (streamOpen) resyncTimer = setTimeout(readSeats, 5000);
    });
  }

  function waitForStream() {
    clearTimeout(waitTimer);
    waitTimer = setTimeout(() => {
      if (streamOpen) return;
      setLive("polling", "Refreshing every 5 s");
      startPolling();
    }, STREAM_WAIT_MS);
  }

  function connect() {
    clearTimeout(retryTimer);
    clearTimeout(resyncTimer);
    if (source) source.close();
    if (streamOpen) { streamOpen = false; if (!pollTimer) seatsLost(); }
    setLive("connecting", "Connecting…");
    waitForStream();
    const es = new EventSource(streamUrl(eventId));
    source = es;
    es.addEventListener("snapshot", (ev) => {
      clearTimeout(resyncTimer);
      stopPolling();
      try { updateSummary(JSON.parse(ev.data)); } catch (_) { /* keep the old one */ }
      // The snapshot has the counts, not the seats: read them now that every later change
      // reaches us. A snapshot on a reconnect means the server could not replay what changed
      // while we were away (too long ago, or it restarted); when it could, EventSource's
      // Last-Event-ID got us the missed changes as seat and pool events, and no snapshot.
      readSeats();
    });
    es.addEventListener("seat", (ev) => {
      try { const s = JSON.parse(ev.data); applySeat(s.id, s.status, s.version); } catch (_) { /* ignore */ }
    });
    es.addEventListener("pool", (ev) => {
      try { applyPool(JSON.parse(ev.data)); } catch (_) { /* ignore */ }
    });
    es.addEventListener("open", () => {
      streamOpen = true;
      clearTimeout(waitTimer);
      stopPolling();
      if (!seatsStale) { setLive("live", "Live"); return; }
      // Back after a loss: the missed changes (or a snapshot) come first; a read of the seats
      // over the open stream then says the map is current, whichever the server sent.
      setLive("connecting", "Catching up…");
      resyncTimer = setTimeout(readSeats, RESUME_READ_DELAY_MS);
    });
    es.addEventListener("error", () => {
      const wasOpen = streamOpen;
      streamOpen = false;
      clearTimeout(resyncTimer);
      if (wasOpen && !pollTimer) seatsLost();
      if (es.readyState === EventSource.CLOSED) {
        // Refused (no stream on this server, or the key was refused): poll, and try again later.
        clearTimeout(waitTimer);
        setLive("polling", "Refreshing every 5 s");
        startPolling();
        retryTimer = setTimeout(connect, 15000);
      } else if (!pollTimer) {
        setLive("connecting", "Reconnecting…");
        if (wasOpen) waitForStream();
      }
    });
  }

  function startPolling() {
    if (pollTimer) return;
    pollTimer = setInterval(poll, 5000);
    poll();
  }
  async function poll() {
    if (document.hidden && seatsLoaded) return;
    try {
      updateSummary(await api("GET", `/v1/events/${enc}`));
      await loadSeats();
    } catch (err) {
      if (!seatsLoaded) seatsFailed(err);
      setLive("down", err.status === 0 ? "Offline" : "Unavailable");
    }
  }
  function stopPolling() { clearInterval(pollTimer); pollTimer = null; }

  function updateSummary(s) {
    if (!s || !summary) return;
    summary.max_seats_per_user = s.max_seats_per_user;
    if (s.waiting_room) { const was = roomEnabled(); summary.waiting_room = s.waiting_room; if (was !== roomEnabled()) renderQueue(); }
    summary.max_seats_per_hold = s.max_seats_per_hold;
    poolsCurrent = true;
    if (window.HoldfastStaff) window.HoldfastStaff.update(s);
    for (const p of s.pools || []) applyPool(p);
    for (const sec of s.sections || []) {
      const info = sectionInfo.get(sec.id);
      if (info && sec.counts) info.summaryCounts = sec.counts;
    }
    countsChanged();
  }

  function seatsFailed(err) {
    mapStatus.hidden = false;
    mapStatus.textContent = "The seats could not be loaded: " + explain(err);
  }

  /* ---------- tooltip ---------- */
  function showTip(el) {
    const id = el.dataset.seat;
    const [sec, row, num] = id.split("-");
    const info = sectionInfo.get(sec);
    const st = el.dataset.status === "loading" ? "Loading"
             : mySeatHold.has(id) ? "Your hold" : ownedSeats.has(id) ? "Your ticket"
             : selected.has(id) ? "Selected" : { available: "Available", held: "Held", sold: "Sold" }[el._st];
    tooltip.replaceChildren(
      h("strong", { text: `${sec} · Row ${row} · Seat ${num}` }),
      h("span", { text: `${info ? money(info.price, summary.currency) : ""} · ${st}` }));
    tooltip.hidden = false;
    const r = el.getBoundingClientRect();
    const tw = tooltip.offsetWidth, th = tooltip.offsetHeight;
    let x = r.left + r.width / 2 - tw / 2, y = r.top - th - 8;
    if (y < 4) y = r.bottom + 8;
    x = Math.max(4, Math.min(window.innerWidth - tw - 4, x));
    tooltip.style.transform = `translate(${Math.round(x)}px, ${Math.round(y)}px)`;
  }

  /* ---------- wiring ---------- */
  function wire() {
    sectionsEl.addEventListener("click", (ev) => {
      const el = ev.target.closest("[data-seat]");
      if (el) toggleSeat(el.dataset.seat);
    });
    sectionsEl.addEventListener("mouseover", (ev) => {
      const el = ev.target.closest("[data-seat]");
      if (el) showTip(el); else tooltip.hidden = true;
    });
    sectionsEl.addEventListener("mouseleave", () => { tooltip.hidden = true; });
    sectionsEl.addEventListener("focusin", (ev) => {
      const el = ev.target.closest("[data-seat]");
      if (!el) return;
      showTip(el);
      // Labels are made on demand (60,000 of them up front would cost memory for nothing).
      const [sec, row, num] = el.dataset.seat.split("-");
      const st = el.dataset.status === "loading" ? "loading" : mySeatHold.has(el.dataset.seat) ? "your hold"
               : selected.has(el.dataset.seat) ? "selected" : el._st;
      el.setAttribute("aria-label", `Section ${sec}, row ${row}, seat ${num}, ${st}`);
    });
    sectionsEl.addEventListener("focusout", () => { tooltip.hidden = true; });
    window.addEventListener("scroll", () => { tooltip.hidden = true; }, { passive: true });
    // A wide section's own sideways scroll moves its seats from under the tooltip too.
    sectionsEl.addEventListener("scroll", () => { tooltip.hidden = true; }, { capture: true, passive: true });

    holdBtn.addEventListener("click", () => {
      const body = {};
      if (selected.size) body.seats = [...selected];
      const pools = poolQuantities();
      if (Object.keys(pools).length) body.pools = pools;
      if (!body.seats && !body.pools) { say("Select seats on the map or a number of tickets first.", "info"); return; }
      placeHold(body, "seats");
    });
    clearBtn.addEventListener("click", clearSelection);
    $("mobile-hold").addEventListener("click", () => {
      holdBtn.click();
      $("notice").scrollIntoView({ block: "start", behavior: "smooth" });
    });
    bestForm.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const n = Math.floor(Number(bestCount.value));
      const max = summary.max_seats_per_hold || 10;
      if (!(n >= 1)) { say("How many seats? Type a number from 1.", "warn"); bestCount.focus(); return; }
      if (n > max) { say(`You can hold at most ${max} tickets at a time.`, "warn"); bestCount.focus(); return; }
      const best = { count: n, adjacent: bestAdjacent.checked };
      if (bestSection.value) best.section = bestSection.value;
      placeHold({ best_available: best }, "best");
    });

    // A buyer's token names the user: the page acts as that user only.
    const tokenUser = window.Holdfast.tokenUser();
    userInput.value = tokenUser || window.Holdfast.userId();
    if (tokenUser) userInput.readOnly = true;
    let userTimer = null;
    userInput.addEventListener("input", () => {
      userInput.classList.remove("invalid");
      window.Holdfast.setUserId(userInput.value.trim());
      clearTimeout(userTimer);
      userTimer = setTimeout(() => { loadOrders(); loadQueue(); }, 600);
    });

    $("zoom-in").addEventListener("click", () => setSeatSize(seatSize + 3));
    $("zoom-out").addEventListener("click", () => setSeatSize(seatSize - 3));
    $("zoom-fit").addEventListener("click", () => setSeatSize(seatSizeToFit()));
    let resizeTimer = null, lastWidth = sectionsEl.clientWidth;
    window.addEventListener("resize", () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => {
        if (Math.abs(sectionsEl.clientWidth - lastWidth) > 40) { lastWidth = sectionsEl.clientWidth; setSeatSize(seatSizeToFit()); }
      }, 150);
    });
    setInterval(() => { tick(); tickQueue(); }, 250);
    document.addEventListener("visibilitychange", () => { if (!document.hidden) tick(); });
  }

  function renderHeader() {
    document.title = (summary.name || summary.id) + " · Holdfast box office";
    $("event-name").textContent = summary.name || summary.id;
    $("crumb-event").textContent = summary.name || summary.id;
    const seats = (summary.sections || []).reduce((n, s) => n + (s.rows || []).reduce((m, r) => m + r.seats, 0), 0);
    const prices = (summary.sections || []).map((s) => s.price).concat((summary.pools || []).map((p) => p.price));
    const parts = [summary.id, count(seats) + " seats"];
    if (prices.length) parts.push("from " + money(Math.min(...prices), summary.currency));
    parts.push("holds last " + (summary.hold_ttl_s >= 120 ? Math.round(summary.hold_ttl_s / 60) + " min" : summary.hold_ttl_s + " s"));
    if (summary.max_seats_per_user) parts.push("limit " + summary.max_seats_per_user + " per person");
    $("event-meta").textContent = parts.join(" · ");
    for (const s of summary.sections || []) bestSection.append(h("option", { value: s.id, text: s.id + " · " + money(s.price, summary.currency) }));
    bestCount.max = String(summary.max_seats_per_hold || 10);
    if (!(summary.sections || []).length) bestForm.closest("section").hidden = true;
  }

  /* An event the server does not have (404 event_not_found): a plain sentence and the way back
     to the list, no map and no booking form; and no connection badge: the server answered, so
     it is not offline, and there is nothing to follow live. */
  function showMissing() {
    document.title = "No such event · Holdfast box office";
    $("crumb-event").textContent = "No such event";
    $("missing-id").textContent = eventId;
    $("missing").hidden = false;
    document.querySelector("main.event-layout").hidden = true;
    setLive("none", "");
    live.hidden = true;
  }

  async function start() {
    if (!eventId) { say("No event in the address.", "error", true); return; }
    try {
      summary = await api("GET", `/v1/events/${enc}`);
    } catch (err) {
      if (err.status === 401 && window.Holdfast.userToken()) {
        // A buyer is never asked for the API key: the link's token is refused, say so.
        $("event-name").textContent = "Sign-in needed";
        say(explain(err), "error", true);
        setLive("none", "");
        return;
      }
      if (err.status === 401) {
        await askForKey(window.Holdfast.apiKey() ? "That key was refused. Enter the right API key." : undefined);
        return start();
      }
      if (err.code === "event_not_found") { showMissing(); return; }
      $("event-name").textContent = "Unavailable";
      mapStatus.textContent = explain(err);
      // Offline only when the server cannot be reached: any answer, an error too, means it is up.
      setLive("down", err.status === 0 ? "Offline" : "Unavailable");
      setTimeout(start, 5000);
      return;
    }
    renderHeader();
    // The summary loaded, so the key was given or none is needed: the staff tab may show; not
    // on a buyer's page (a user token), whose token cannot reach the staff's routes.
    if (window.HoldfastStaff && !window.Holdfast.userToken())
      window.HoldfastStaff.start(eventId, summary, (open) => { $("sales-badge").hidden = open; });
    const tb = performance.now();
    buildMap();
    console.debug("holdfast: map built in", Math.round(performance.now() - tb), "ms");
    buildPools();
    renderCounts();
    wire();
    selectionChanged();
    // The seats are read once the stream's snapshot has come (so no change falls between the
    // two); they are drawn loading until then.
    connect();
    restoreHolds();
    loadOrders();
    loadQueue();
  }

  // The key was refused later on (changed on the server): ask again, then reconnect the stream.
  let askingKey = false;
  window.Holdfast.onUnauthorized = () => {
    if (askingKey || !summary) return;
    if (window.Holdfast.userToken()) {
      say(explain({ code: "unauthorized" }), "error", true);
      return;
    }
    askingKey = true;
    askForKey("The API key was refused. Enter the right key to go on.").then(() => {
      askingKey = false;
      connect();
    });
  };
  start();
})();
