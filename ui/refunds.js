/* Holdfast box office: the staff tab's pending refunds (API.md section 7).

   A payment the server could not honour (its hold lapsed and lost a seat, was released or paid
   already, or the amount differs) leaves a pending refund; staff pay it back with the
   provider, then mark it refunded here (POST /v1/refunds/{id}/complete). The list is the
   server's, not the event's: GET /v1/refunds has no event filter, and a refund for an unknown
   hold has no event at all, so the tab says so. Oldest first as the API pages them (the
   oldest is the most overdue), with More following `next`. Plain browser JavaScript, no build
   step. Exposes one global: HoldfastRefunds. */
"use strict";

(function () {
  // The staff's routes need the API key, never a buyer's token (API.md section 16).
  const { staffApi: api, h, money } = window.Holdfast;
  const PAGE = 50;

  // The reasons of API.md section 7, in words for staff.
  const REASONS = {
    hold_expired: "The hold had expired and some of its seats were taken since",
    hold_released: "The hold had been released",
    amount_mismatch: "The amount paid differs from the hold's total",
    hold_not_found: "No such hold",
    already_confirmed: "The hold was already paid by another payment",
    order_cancelled: "The paid order was cancelled",
  };

  let currency = "USD";
  let say = () => {};
  const list = { next: null, loading: false };
  const ages = new Set();              // {el, at} of listed refunds
  const $ = (id) => document.getElementById(id);

  function age(ms) {
    const s = Math.max(0, Math.floor(ms / 1000));
    if (s < 60) return "just now";
    if (s < 3600) return Math.floor(s / 60) + " min ago";
    if (s < 86400) return Math.floor(s / 3600) + " h ago";
    const days = Math.floor(s / 86400);
    return days + (days === 1 ? " day ago" : " days ago");
  }

  function tick() {
    const now = Date.now();
    for (const a of ages) {
      if (!a.el.isConnected) { ages.delete(a); continue; }
      a.el.textContent = age(now - a.at);
    }
  }

  function showEmpty() {
    $("staff-refunds-empty").hidden = $("staff-refunds-body").children.length > 0;
  }

  async function complete(refund, row, button) {
    button.disabled = true;
    try {
      const done = await api("POST", `/v1/refunds/${encodeURIComponent(refund.refund_id)}/complete`);
      // No longer pending: it leaves the list. The pages after it still follow, since `after`
      // names any refund whatever its status.
      row.remove();
      showEmpty();
      say(`Refund ${done.refund_id} of ${money(done.amount, currency)} marked refunded.`, "success");
    } catch (err) {
      button.disabled = false;
      say("Could not mark refund " + refund.refund_id + " refunded: " + err.message, "error");
    }
  }

  function refundRow(x) {
    const created = Date.parse(x.created_at);
    const when = h("td", { class: "staff-age", title: x.created_at });
    const button = h("button", { type: "button", class: "btn secondary small staff-refund-complete",
                                 text: "Mark refunded" });
    const row = h("tr", { dataset: { refund: x.refund_id, status: x.status } },
      h("td", { class: "mono", text: x.refund_id }),
      // A cancelled booking's refund names no hold: its order instead.
      h("td", { class: "mono staff-reservation", text: x.reservation_id || x.order_id || "" }),
      h("td", { class: "num staff-amount", text: money(x.amount, currency) }),
      h("td", { class: "staff-reason", dataset: { reason: x.reason },
                text: REASONS[x.reason] || x.reason }),
      when,
      h("td", {}, button));
    const a = { el: when, at: created };
    when.textContent = age(Date.now() - created);
    ages.add(a);
    button.addEventListener("click", () => complete(x, row, button));
    return row;
  }

  /* Loads the next page (or the first, when fresh), appending its rows. */
  async function load(fresh) {
    if (list.loading) return;
    const body = $("staff-refunds-body"), more = $("staff-refunds-more");
    let path = `/v1/refunds?status=pending&limit=${PAGE}`;
    if (!fresh && list.next) path += "&after=" + encodeURIComponent(list.next);
    list.loading = true;
    more.disabled = true;
    try {
      const page = await api("GET", path);
      if (fresh) body.replaceChildren();
      for (const x of page.refunds) body.append(refundRow(x));
      list.next = page.next;
      more.hidden = !page.next;
      showEmpty();
    } catch (err) {
      say("Could not read the refunds: " + err.message, "error");
    } finally {
      list.loading = false;
      more.disabled = false;
    }
  }

  /* Called by the staff tab once: the event's currency and its notice line. */
  function start(eventCurrency, notice) {
    currency = eventCurrency || "USD";
    say = notice;
    $("staff-refunds-more").addEventListener("click", () => load(false));
    setInterval(tick, 10000);
  }

  window.HoldfastRefunds = { start, refresh: () => load(true) };
})();
