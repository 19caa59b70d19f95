/* Holdfast box office: the staff tab of an event's page (API.md section 2, last paragraphs).

   Shown once the page has loaded the event, which means the API key was given or the server
   needs none: the staff's routes sit behind the same key. It lists the event's live holds
   (or holds of any status) and its orders with who holds and who bought, page by page with a
   "More" button that follows `next`, and closes or reopens sales. The pending refunds
   (refunds.js) and the event's history (history.js) are cards of the same tab, loaded with it.
   Plain browser JavaScript, no build step. Exposes one global: HoldfastStaff. */
"use strict";

(function () {
  // The staff's routes need the API key, never a buyer's token (API.md section 16).
  const { staffApi: api, h, money } = window.Holdfast;
  const PAGE = 50;

  let eventId = "", enc = "", currency = "USD";
  let salesOpen = true;
  let onSales = null;                  // told of each change of sales_open
  const countdowns = new Set();        // {el, deadline} of listed held holds
  const lists = {};                    // "holds" / "orders" → {next, status, loading}
  const $ = (id) => document.getElementById(id);

  function say(text, kind) {
    const el = $("staff-notice");
    el.hidden = !text;
    el.textContent = text || "";
    el.dataset.kind = kind || "info";
  }

  function items(x) {
    const parts = (x.seats || []).slice();
    for (const [pool, quantity] of Object.entries(x.pools || {})) parts.push(quantity + " × " + pool);
    return parts.join(", ") || "—";
  }

  function left(ms) {
    if (ms <= 0) return "expired";
    const s = Math.ceil(ms / 1000);
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0") + " left";
  }

  function tick() {
    const now = Date.now();
    for (const c of countdowns) {
      if (!c.el.isConnected) { countdowns.delete(c); continue; }
      c.el.textContent = left(c.deadline - now);
      if (c.deadline <= now) {
        // From expires_at on the hold is expired, whether or not the server swept it yet.
        c.el.closest("tr").dataset.status = "expired";
        if (c.el.previousSibling) c.el.previousSibling.textContent = "expired";
        countdowns.delete(c);
      }
    }
  }

  function holdRow(x) {
    const expires = h("td", { class: "staff-expiry" });
    const row = h("tr", { dataset: { hold: x.reservation_id, status: x.status } },
      h("td", { class: "mono", text: x.reservation_id }),
      h("td", { class: "staff-user", text: x.user_id }),
      h("td", { class: "staff-items", text: items(x) }),
      h("td", { class: "num", text: money(x.total, x.currency || currency) }),
      h("td", { class: "staff-status", text: x.status }),
      expires);
    if (x.status === "held") {
      const c = { el: expires, deadline: Date.now() + (x.expires_in_ms || 0) };
      expires.textContent = left(c.deadline - Date.now());
      countdowns.add(c);
    } else {
      expires.textContent = x.status === "confirmed" ? "order " + (x.order_id || "") : "—";
    }
    return row;
  }

  function orderRow(x) {
    return h("tr", { dataset: { order: x.order_id, status: x.status } },
      h("td", { class: "mono", text: x.order_id }),
      h("td", { class: "staff-user", text: x.user_id }),
      h("td", { class: "staff-items", text: items(x) }),
      h("td", { class: "num", text: money(x.total, x.currency || currency) }),
      h("td", { class: "staff-status", text: x.status }),
      h("td", { class: "mono small", text: x.payment_ref || "—" }));
  }

  /* Loads the next page of a list (or the first, when fresh), appending its rows. */
  async function load(kind, fresh) {
    const list = lists[kind];
    if (list.loading) return;
    const body = $("staff-" + kind + "-body"), more = $("staff-" + kind + "-more");
    if (fresh) list.next = null;
    let path = `/v1/events/${enc}/${kind}?limit=${PAGE}`;
    if (list.status) path += "&status=" + encodeURIComponent(list.status);
    if (!fresh && list.next) path += "&after=" + encodeURIComponent(list.next);
    list.loading = true;
    more.disabled = true;
    try {
      const page = await api("GET", path);
      if (fresh) body.replaceChildren();
      for (const x of page[kind]) body.append(kind === "holds" ? holdRow(x) : orderRow(x));
      list.next = page.next;
      more.hidden = !page.next;
      $("staff-" + kind + "-empty").hidden = body.children.length > 0;
    } catch (err) {
      say("Could not read the " + kind + ": " + err.message, "error");
    } finally {
      list.loading = false;
      more.disabled = false;
    }
  }

  function showSales(open) {
    salesOpen = open;
    const state = $("staff-sales-state"), toggle = $("staff-sales-toggle");
    state.dataset.open = String(open);
    state.textContent = open ? "Sales are open" : "Sales are closed";
    toggle.textContent = open ? "Close sales" : "Reopen sales";
    toggle.dataset.action = open ? "close" : "open";
    if (onSales) onSales(open);
  }

  async function toggleSales() {
    const toggle = $("staff-sales-toggle");
    const action = salesOpen ? "close" : "open";
    toggle.disabled = true;
    try {
      const summary = await api("POST", `/v1/events/${enc}/${action}`);
      showSales(summary.sales_open);
      say(summary.sales_open ? "Sales reopened: new holds are taken again."
                             : "Sales closed: new holds and bookings are refused; existing holds can still be paid.",
          "success");
    } catch (err) {
      say("Could not " + action + " sales: " + err.message, "error");
    } finally {
      toggle.disabled = false;
    }
  }

  /* The cancel job's card: its counts, polled while it runs or offers are open. */
  let jobTimer = null;
  async function showJob(jobId) {
    $("staff-cancel-card").hidden = true;
    $("staff-job-card").hidden = false;
    try {
      const job = await api("GET", `/v1/jobs/${encodeURIComponent(jobId)}`);
      $("staff-job-status").textContent = job.status === "done" ? "Done" : "Running";
      $("staff-job-status").dataset.open = String(job.status !== "done");
      $("staff-job-progress").textContent =
        `${job.orders} orders: ${job.offered} offered (${job.open} open, ${job.accepted} accepted), ` +
        `${job.refunded} refunded` + (job.rebook_to ? ` · rebooking onto ${job.rebook_to}` : "");
      clearTimeout(jobTimer);
      if (job.status !== "done" || job.open > 0) jobTimer = setTimeout(() => showJob(jobId), 2000);
    } catch (err) {
      say("Could not read the cancel job: " + err.message, "error");
    }
  }

  async function cancelEvent() {
    const rebook = $("staff-rebook-to").value.trim();
    if (!window.confirm("Cancel this event for good? Its buyers are rebooked or refunded.")) return;
    $("staff-cancel").disabled = true;
    try {
      const job = await api("POST", `/v1/events/${enc}/cancel`, rebook ? { rebook_to: rebook } : {});
      showSales(false);
      say("Event cancelled: its buyers are being " + (rebook ? "offered seats on " + rebook + " or refunded." : "refunded."),
          "success");
      showJob(job.job_id);
    } catch (err) {
      say("Could not cancel the event: " + err.message, "error");
    } finally {
      $("staff-cancel").disabled = false;
    }
  }

  function refresh() {
    load("holds", true);
    load("orders", true);
    if (window.HoldfastRefunds) window.HoldfastRefunds.refresh();
    if (window.HoldfastHistory) window.HoldfastHistory.refresh();
  }

  function showTab(staff) {
    $("tab-map").setAttribute("aria-selected", String(!staff));
    $("tab-staff").setAttribute("aria-selected", String(staff));
    document.querySelector("main.event-layout").hidden = staff;
    $("staff-panel").hidden = !staff;
    if (staff) refresh();
  }

  /* Called by the seat map once the event's summary loaded. */
  function start(id, summary, salesChanged) {
    eventId = id;
    enc = encodeURIComponent(id);
    currency = summary.currency || "USD";
    onSales = salesChanged;
    lists.holds = { next: null, status: $("staff-holds-status").value, loading: false };
    lists.orders = { next: null, status: $("staff-orders-status").value, loading: false };
    $("staff-tabs").hidden = false;
    $("tab-map").addEventListener("click", () => showTab(false));
    $("tab-staff").addEventListener("click", () => showTab(true));
    $("staff-sales-toggle").addEventListener("click", toggleSales);
    $("staff-cancel").addEventListener("click", cancelEvent);
    if (summary.status === "cancelled" && summary.job_id) showJob(summary.job_id);
    $("staff-refresh").addEventListener("click", refresh);
    for (const kind of ["holds", "orders"]) {
      $("staff-" + kind + "-more").addEventListener("click", () => load(kind, false));
      $("staff-" + kind + "-status").addEventListener("change", (ev) => {
        lists[kind].status = ev.target.value;
        load(kind, true);
      });
    }
    // Refunds (the server's) and the event's history have files of their own.
    if (window.HoldfastRefunds) window.HoldfastRefunds.start(currency, say);
    if (window.HoldfastHistory) window.HoldfastHistory.start(id, currency, say);
    showSales(summary.sales_open !== false);
    setInterval(tick, 250);
  }

  /* A newer summary (the stream's snapshot): keeps the switch in step. */
  function update(summary) {
    if (summary && typeof summary.sales_open === "boolean" && summary.sales_open !== salesOpen)
      showSales(summary.sales_open);
  }

  window.HoldfastStaff = { start, update };
})();
