/* Holdfast box office: the staff tab's history of the event (API.md section 7, last paragraph).

   Newest first, a page at a time, with "Older" to page back. The API pages oldest first
   (`after` a seq, `next` the last seq of a page), so the page finds the newest entries first:
   seq grows by one per entry from 1 without gaps (the contract), so the last seq is found by
   probing single entries (`after=S-1&limit=1` answers entry S when it exists), doubling S
   until past the end and then halving the gap: about 2·log2(N) tiny requests instead of
   reading all N entries. The newest page is then `after=last-PAGE`, and each "Older" reads
   the PAGE entries before the oldest one shown. Rows are shown newest first within each page.
   Every entry names its hold's or order's user and items (API.md section 7), so a row needs
   no other entry to say who. A filter box (seat, user, reservation) asks the API for the
   matching entries only: those page oldest first (a filtered page examines at most 1,000
   entries and answers `next` to go on), shown in that order with "More" for the next ones.
   Plain browser JavaScript, no build step. Exposes one global: HoldfastHistory. */
"use strict";

(function () {
  // The staff's routes need the API key, never a buyer's token (API.md section 16).
  const { staffApi: api, h, money } = window.Holdfast;
  // Entries per page; `?history_page=N` in the page's address picks another (1 to 1000, the
  // API's most), which the browser test uses to page back over a few entries.
  const PAGE = (() => {
    const n = Number(new URLSearchParams(window.location.search).get("history_page"));
    return Number.isInteger(n) && n >= 1 && n <= 1000 ? n : 50;
  })();

  let enc = "", currency = "USD";
  let say = () => {};
  let oldest = 0;                      // the seq of the oldest entry shown; 0 when none
  let loading = false;
  let filters = null;                  // {seat, user, reservation} given, or null: everything
  let resume = null;                   // with filters: the `next` to go on from, null at the end
  const $ = (id) => document.getElementById(id);

  function page(after, limit) {
    const query = new URLSearchParams({ after: String(after), limit: String(limit) });
    for (const [name, value] of Object.entries(filters || {})) query.set(name, value);
    return api("GET", `/v1/events/${enc}/history?${query}`);
  }

  async function exists(seq) {
    return (await page(seq - 1, 1)).history.length > 0;
  }

  /* The seq of the newest entry, 0 when the history is empty. */
  async function lastSeq() {
    let low = 0, high = 1;             // entry `low` exists (or low is 0); find the first missing
    while (await exists(high)) { low = high; high *= 2; }
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (await exists(middle)) low = middle; else high = middle;
    }
    return low;
  }

  function items(x) {
    const parts = (x.seats || []).slice();
    for (const [pool, quantity] of Object.entries(x.pools || {})) parts.push(quantity + " × " + pool);
    return parts.join(", ");
  }

  function clock(at) {
    return at ? new Date(at).toLocaleTimeString() : "";
  }

  function payment(x) {
    const paid = (x.payment_type === "payment.failed" ? "Failed payment " : "Payment ") +
                 x.payment_intent_id + " of " + money(x.amount, currency) + " for " + x.reservation_id;
    if (x.result === "committed") return paid + ": committed" + (x.late ? " late" : "") + ", order " + x.order_id;
    if (x.result === "refund_required")
      return paid + ": refund " + x.refund_id + " owed (" + String(x.reason).replace(/_/g, " ") + ")";
    return paid + ": " + String(x.result).replace(/_/g, " ");
  }

  /* What an entry did, in words, from the fields of its type. */
  function what(x) {
    switch (x.type) {
      case "hold": return `Held ${items(x)} (${money(x.total, currency)}) in ${x.reservation_id} until ${clock(x.expires_at)}`;
      case "extend": return `Extended ${x.reservation_id} until ${clock(x.expires_at)}`;
      case "release": return `Released ${items(x)} of ${x.reservation_id}`;
      case "expiry": return `${x.reservation_id} expired: ${items(x)} free again`;
      case "commit": return `Paid ${items(x)} of ${x.reservation_id}: order ${x.order_id} (${money(x.total, currency)}), payment ${x.payment_ref || "—"}`;
      case "booking": return `Booked ${items(x)}: order ${x.order_id} (${money(x.total, currency)}), payment ${x.payment_ref || "—"}`;
      case "cancel": return `Cancelled order ${x.order_id}: ${items(x)} free again`;
      case "payment": return payment(x);
      default: return x.type;
    }
  }

  function entryRow(x) {
    return h("tr", { dataset: { seq: String(x.seq), type: x.type, reservation: x.reservation_id || "" } },
      h("td", { class: "num staff-seq", text: String(x.seq) }),
      h("td", { class: "staff-time", title: x.at, text: new Date(x.at).toLocaleString() }),
      h("td", { class: "staff-type", text: x.type }),
      h("td", { class: "staff-user", text: x.user_id || "—" }),
      h("td", { class: "staff-what", text: what(x) }));
  }

  /* With filters: the next matching entries, oldest first, from `resume` (0 when fresh),
     following `next` over pages that examined entries without a match, a few at a time. */
  async function loadFiltered(fresh, body) {
    let after = fresh ? 0 : resume, entries = [];
    for (let round = 0; round < 10 && after !== null && entries.length === 0; round++) {
      const answer = await page(after, PAGE);
      entries = answer.history;
      after = answer.next;
    }
    if (fresh) body.replaceChildren();
    for (const x of entries) body.append(entryRow(x));
    resume = after;
    const older = $("staff-history-older");
    older.textContent = "More";
    older.hidden = resume === null;
  }

  /* Reads the entries after `after` up to the oldest shown (or the newest, when fresh) and
     appends them below, newest first. */
  async function loadNewestFirst(fresh, body) {
    const before = fresh ? (await lastSeq()) + 1 : oldest;
    const after = Math.max(0, before - 1 - PAGE);
    const entries = before > 1 ? (await page(after, before - 1 - after)).history : [];
    if (fresh) body.replaceChildren();
    for (const x of entries.slice().reverse()) body.append(entryRow(x));
    if (entries.length) oldest = entries[0].seq;
    else if (fresh) oldest = 0;
    const older = $("staff-history-older");
    older.textContent = "Older";
    older.hidden = oldest <= 1;
  }

  async function load(fresh) {
    if (loading) return;
    const body = $("staff-history-body"), older = $("staff-history-older");
    loading = true;
    older.disabled = true;
    try {
      if (filters) await loadFiltered(fresh, body);
      else await loadNewestFirst(fresh, body);
      $("staff-history-empty").hidden = body.children.length > 0;
    } catch (err) {
      say("Could not read the history: " + err.message, "error");
    } finally {
      loading = false;
      older.disabled = false;
    }
  }

  /* The filter box, made here so the page's markup stays as it is: seat, user and
     reservation, any of them (all must match); empty boxes show everything, newest first. */
  function filterBox() {
    const field = (name, label, placeholder) => h("label", { class: "small" }, label + " ",
      h("input", { id: "staff-history-" + name, name, type: "search", placeholder, autocomplete: "off" }));
    const form = h("form", { id: "staff-history-filters", class: "staff-history-filters",
                             style: "display:flex;flex-wrap:wrap;gap:0.5rem;align-items:center;margin:0.5rem 0" },
      field("seat", "Seat", "FLOOR-A-1"), field("user", "User", "u1"),
      field("reservation", "Reservation", "res_…"),
      h("button", { type: "submit", class: "btn ghost small", text: "Filter" }));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const given = {};
      for (const name of ["seat", "user", "reservation"]) {
        const value = $("staff-history-" + name).value.trim();
        if (value) given[name] = value;
      }
      filters = Object.keys(given).length ? given : null;
      load(true);
    });
    $("staff-history-body").closest("table").before(form);
  }

  /* Called by the staff tab once: the event, its currency and the tab's notice line. */
  function start(eventId, eventCurrency, notice) {
    enc = encodeURIComponent(eventId);
    currency = eventCurrency || "USD";
    say = notice;
    filterBox();
    $("staff-history-older").addEventListener("click", () => load(false));
  }

  window.HoldfastHistory = { start, refresh: () => load(true) };
})();
