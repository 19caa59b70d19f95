/* Holdfast box office: the list of events (GET /). */
"use strict";

(function () {
  const { api, h, money, count, countsBar, askForKey } = window.Holdfast;
  const grid = document.getElementById("events");
  const message = document.getElementById("message");
  const lockButton = document.getElementById("lock");
  const live = document.getElementById("live");
  let timer = null;
  let asking = false;

  function showMessage(text, kind) {
    message.hidden = !text;
    message.textContent = text || "";
    message.dataset.kind = kind || "info";
  }

  function eventCard(ev) {
    const seats = (ev.counts.available || 0) + (ev.counts.held || 0) + (ev.counts.sold || 0);
    const pools = ev.pools || [];
    const prices = [];
    for (const s of ev.sections || []) prices.push(s.price);
    for (const p of pools) prices.push(p.price);
    const from = prices.length ? Math.min(...prices) : null;
    const available = (ev.counts.available || 0) + pools.reduce((n, p) => n + (p.available || 0), 0);
    const soldOut = available === 0;
    const href = "/ui/events/" + encodeURIComponent(ev.id);
    return h("a", { class: "card event-card" + (soldOut ? " sold-out" : ""), href, "data-event": ev.id },
      h("div", { class: "event-card-head" },
        h("h2", { text: ev.name || ev.id }),
        soldOut ? h("span", { class: "pill pill-sold", text: "Sold out" })
                : h("span", { class: "pill", text: count(available) + " left" })),
      h("p", { class: "muted small" },
        ev.id, " · ", (ev.sections || []).length, " section", (ev.sections || []).length === 1 ? "" : "s",
        pools.length ? " · " + pools.length + " ticket pool" + (pools.length === 1 ? "" : "s") : "",
        from !== null ? " · from " + money(from, ev.currency) : ""),
      seats ? h("div", { class: "event-card-counts" },
        countsBar(ev.counts),
        h("dl", { class: "counts" },
          h("div", null, h("dt", { class: "k-available", text: "Available" }), h("dd", { text: count(ev.counts.available) })),
          h("div", null, h("dt", { class: "k-held", text: "Held" }), h("dd", { text: count(ev.counts.held) })),
          h("div", null, h("dt", { class: "k-sold", text: "Sold" }), h("dd", { text: count(ev.counts.sold) })))) : null,
      pools.length ? h("ul", { class: "pool-lines" }, pools.map((p) =>
        h("li", null, h("strong", { text: p.id }), " ",
          h("span", { class: "muted", text: `${count(p.available)} of ${count(p.capacity)} available · ${money(p.price, ev.currency)}` })))) : null,
      h("span", { class: "card-cta", text: soldOut ? "View seat map →" : "Choose seats →" }));
  }

  async function load() {
    try {
      // The list is paged (a thousand at most a page): every page, in creation order.
      const events = [];
      let after = null;
      do {
        const query = "?limit=1000" + (after ? "&after=" + encodeURIComponent(after) : "");
        const data = await api("GET", "/v1/events" + query);
        events.push(...((data && data.events) || []));
        after = data && data.next;
      } while (after);
      grid.replaceChildren(...(events.length ? events.map(eventCard) : [
        h("div", { class: "card empty" },
          h("h2", { text: "No events on sale yet" }),
          h("p", { class: "muted", text: "Events appear here as soon as they are created through the API:" }),
          h("pre", { text: 'curl -X POST /v1/events -d \'{"id":"show1","sections":[{"id":"FLOOR","price":4500,"rows":[{"id":"A","seats":20}]}]}\'' }))]));
      grid.setAttribute("aria-busy", "false");
      showMessage("");
      live.dataset.state = "live";
    } catch (err) {
      live.dataset.state = "down";
      if (err.status === 401) {
        grid.replaceChildren();
        if (!asking) {
          asking = true;
          showMessage("This box office needs an API key.", "warn");
          await askForKey(window.Holdfast.apiKey() ? "That key was refused. Enter the right API key." : undefined);
          asking = false;
          lockButton.hidden = false;
          return load();
        }
      } else if (err.code === "network") {
        showMessage("The box office server cannot be reached. Retrying…", "error");
      } else {
        showMessage("The events could not be loaded: " + err.message, "error");
      }
    }
  }

  lockButton.hidden = !window.Holdfast.apiKey();
  lockButton.addEventListener("click", async () => {
    await askForKey("Enter the API key to use.");
    load();
  });

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(async () => { if (!document.hidden) await load(); schedule(); }, 5000);
  }
  load().then(schedule);
})();
