// Browser test of the box-office page (API.md section 10), with Debian's chromium driven by
// playwright-core. Starts its own server:
//   HOLDFAST_BINARY (default build/holdfast) serve --listen 127.0.0.1:PORT --data TMPDIR
// Run from the repository root:  node --test tests/browser/
// (once: cd tests/browser && npm install; apt-get install chromium)
// HOLDFAST_BASE_URL=http://host:port runs against a server that is already up instead.
// Saves a screenshot of the seat map to build/seatmap.png (HOLDFAST_SCREENSHOT to choose).

import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { createHmac } from "node:crypto";
import path from "node:path";
import { root, VIEWPORT, sleep, call as callAt, startServer, openSession, closeSession } from "./common.mjs";

// Under build/ (ignored by git): a test run leaves the tree as it found it. `make screenshots`
// copies it over docs/seatmap.png when the page's look changes.
const SCREENSHOT = process.env.HOLDFAST_SCREENSHOT || path.join(root, "build", "seatmap.png");
// The map while the stream is held back: every seat loading.
const SCREENSHOT_LOADING = path.join(path.dirname(SCREENSHOT), "seatmap-loading.png");

let base = "";
let session = null;
let browser = null;

/* ---------- helpers ---------- */

const call = (method, p, body) => callAt(base, method, p, body);

/* A deterministic pseudo-random sequence, so the screenshot looks the same every run. */
function rng(seed) {
  let s = seed >>> 0;
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 4294967296; };
}

const EVENT = "eras_n1";
const KEEP_FREE = new Set(["FLOOR-A-12", "FLOOR-A-13", "FLOOR-B-5", "FLOOR-B-6", "LOWER-A-3", "LOWER-A-4", "LOWER-B-16", "LOWER-B-17"]);

async function createShowcase() {
  const rows = (ids, from, step) => ids.map((id, i) => ({ id, seats: from + i * step }));
  const created = await call("POST", "/v1/events", {
    id: EVENT, name: "The Eras Tour, night 1", currency: "USD", hold_ttl_s: 300,
    max_seats_per_user: 8, max_seats_per_hold: 10,
    sections: [
      { id: "FLOOR", price: 45000, rows: rows(["A", "B", "C", "D", "E", "F"], 24, 1) },
      { id: "LOWER", price: 22000, rows: rows(["A", "B", "C", "D", "E", "F", "G"], 30, 2) },
      { id: "BALC", price: 12000, rows: rows(["A", "B", "C", "D"], 44, 0) },
    ],
    pools: [{ id: "GA", capacity: 500, price: 9900 }, { id: "BOX", capacity: 4, price: 90000 }],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const ev = created.body;
  // Alice bought two seats earlier (the page shows them as hers).
  const mine = await call("POST", `/v1/events/${EVENT}/holds`, { user_id: "alice", seats: ["BALC-B-21", "BALC-B-22"] });
  assert.equal(mine.status, 201, JSON.stringify(mine.body));
  assert.equal((await call("POST", `/v1/holds/${mine.body.reservation_id}/commit`, { user_id: "alice", payment_ref: "pi_alice_1" })).status, 200);
  // Some buyers before us: holds, most of them paid.
  const seats = [];
  for (const s of ev.sections) for (const r of s.rows) for (let n = 1; n <= r.seats; n++) seats.push(`${s.id}-${r.id}-${n}`);
  const rand = rng(20261121);
  for (let i = 0; i < 70; i++) {
    const start = Math.floor(rand() * seats.length);
    const group = seats.slice(start, start + 1 + Math.floor(rand() * 4)).filter((id) => !KEEP_FREE.has(id));
    if (!group.length) continue;
    const user = `fan${i}`;
    const hold = await call("POST", `/v1/events/${EVENT}/holds`, { user_id: user, seats: group });
    if (hold.status !== 201) continue;                  // overlapping a previous group: fine
    if (rand() < 0.7) {
      const order = await call("POST", `/v1/holds/${hold.body.reservation_id}/commit`, { user_id: user, payment_ref: `pi_${i}` });
      assert.equal(order.status, 200, JSON.stringify(order.body));
    }
  }
  assert.equal((await call("POST", `/v1/events/${EVENT}/holds`, { user_id: "gafan", pools: { GA: 6 } })).status, 201);
  const ga = await call("POST", `/v1/events/${EVENT}/holds`, { user_id: "gafan2", pools: { GA: 4 } });
  await call("POST", `/v1/holds/${ga.body.reservation_id}/commit`, { user_id: "gafan2" });
  return (await call("GET", `/v1/events/${EVENT}`)).body;
}

async function openMap(context, eventId = EVENT) {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.errors = errors;
  await page.goto(`${base}/ui/events/${encodeURIComponent(eventId)}`);
  await page.waitForSelector("#map[aria-busy='false']", { timeout: 30000 });
  return page;
}

const seat = (page, id) => page.locator(`[data-seat="${id}"]`).first();
const statusOf = (page, id) => seat(page, id).getAttribute("data-status");

async function waitStatus(page, id, status, timeout) {
  await page.waitForFunction(([id, status]) => {
    const el = document.querySelector(`#sections [data-seat="${id}"]`);
    return el && el.dataset.status === status;
  }, [id, status], { timeout, polling: 20 });
}

/* The seats' states on the server, read through the API. */
async function seatStates(eventId = EVENT) {
  const seats = (await call("GET", `/v1/events/${eventId}/seats?limit=10000`)).body.seats;
  const of = (status) => seats.filter((s) => s.status === status).map((s) => s.id);
  return { total: seats.length, available: of("available"), held: of("held"), sold: of("sold") };
}

/* In the page: how the seats are drawn (data-status, a "Loading" title, the available colour). */
function seatDrawing() {
  const green = getComputedStyle(document.querySelector('.swatch[data-k="available"]')).backgroundColor;
  const statuses = {};
  let titled = 0, greenCount = 0, total = 0;
  for (const el of document.querySelectorAll("#sections [data-seat]")) {
    total++;
    statuses[el.dataset.status] = (statuses[el.dataset.status] || 0) + 1;
    if (/^loading$/i.test(el.title)) titled++;
    if (getComputedStyle(el).backgroundColor === green) greenCount++;
  }
  return { total, statuses, titled, green: greenCount };
}

/* Before the page's scripts: note every seat ever drawn available, however briefly (an
   attribute's old value is kept by the observer even when it changed again meanwhile). */
function recordAvailableSeats() {
  window.drawnAvailable = new Set();
  const note = (el, status) => {
    if (el.dataset && el.dataset.seat && status === "available") window.drawnAvailable.add(el.dataset.seat);
  };
  new MutationObserver((list) => {
    for (const m of list) {
      if (m.type === "attributes") { note(m.target, m.oldValue); note(m.target, m.target.dataset.status); continue; }
      for (const n of m.addedNodes) {
        if (n.nodeType !== 1) continue;
        note(n, n.dataset.status);
        for (const el of n.querySelectorAll("[data-seat]")) note(el, el.dataset.status);
      }
    }
  }).observe(document, { subtree: true, childList: true, attributes: true,
                         attributeFilter: ["data-status"], attributeOldValue: true });
}

/* ---------- tests ---------- */

before(async () => {
  session = await openSession("seatmap");
  ({ base, browser } = session);
});

after(async () => {
  if (session) await closeSession(session);
});

describe("box-office page", () => {
  let summary;

  before(async () => { summary = await createShowcase(); });

  it("serves the pages and static files without a key", async () => {
    const index = await fetch(base + "/");
    assert.equal(index.status, 200);
    assert.match(index.headers.get("content-type"), /^text\/html/);
    const map = await fetch(`${base}/ui/events/${EVENT}`);
    assert.equal(map.status, 200, "GET /ui/events/{event} must serve ui/event.html");
    assert.match(map.headers.get("content-type"), /^text\/html/);
    assert.match(await map.text(), /id="sections"/);
    for (const [file, type] of [["app.css", /^text\/css/], ["event.js", /javascript/], ["index.js", /javascript/],
                                ["common.js", /javascript/], ["staff.js", /javascript/],
                                ["favicon.svg", /^image\/svg\+xml/]]) {
      const r = await fetch(`${base}/ui/${file}`);
      assert.equal(r.status, 200, `/ui/${file}`);
      assert.match(r.headers.get("content-type") || "", type, `/ui/${file} Content-Type`);
    }
  });

  it("draws every seat loading until the stream's snapshot, never available, then sold seats sold", async () => {
    const ctx = await browser.newContext({ viewport: VIEWPORT });
    // The stream is held back until the checks below are done (a slow stream).
    let releaseStream;
    const streamGate = new Promise((resolve) => { releaseStream = resolve; });
    let streamAsked = false;
    await ctx.route(`**/v1/events/${EVENT}/stream*`, async (route) => {
      streamAsked = true;
      await streamGate;
      await route.continue();
    });
    await ctx.addInitScript(recordAvailableSeats);
    const server = await seatStates();
    assert.ok(server.sold.length >= 5 && server.held.length >= 1, "the showcase has sold and held seats");
    const page = await ctx.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${base}/ui/events/${EVENT}`);
    await page.waitForFunction(() => document.querySelectorAll("#sections [data-seat]").length > 0);
    await sleep(1000);
    assert.ok(streamAsked, "the page asked for the stream");

    const drawn = await page.evaluate(seatDrawing);
    assert.equal(drawn.total, server.total);
    assert.deepEqual(drawn.statuses, { loading: server.total }, "every seat is drawn loading");
    assert.equal(drawn.titled, server.total, 'every seat has title "Loading"');
    assert.equal(drawn.green, 0, "no seat has the available colour");
    assert.equal(await page.getAttribute("#map", "aria-busy"), "true");
    // The counts wait too: a placeholder, no figure.
    assert.equal(await page.getAttribute("#event-counts", "data-state"), "loading");
    assert.deepEqual(await page.locator("#event-counts strong").allInnerTexts(), ["—", "—", "—"]);
    assert.match(await page.locator('.section-block[data-section="FLOOR"] .section-count').innerText(), /^Loading/);
    assert.equal(await page.getAttribute('.pool-card[data-pool="GA"]', "data-counts"), "loading");
    assert.match(await page.locator('.pool-card[data-pool="GA"] .counts').innerText(), /Available\s*—/);
    // A loading seat cannot be picked.
    await seat(page, server.available[0]).click();
    assert.doesNotMatch(await seat(page, server.available[0]).getAttribute("class"), /\bsel\b/);
    assert.match(await page.locator("#notice").innerText(), /still loading/);
    mkdirSync(path.dirname(SCREENSHOT_LOADING), { recursive: true });
    await page.screenshot({ path: SCREENSHOT_LOADING });

    releaseStream();
    await page.waitForSelector("#map[aria-busy='false']", { timeout: 10000 });
    await page.waitForSelector("#live[data-state='live']", { timeout: 5000 });
    const after = await page.evaluate(seatDrawing);
    assert.deepEqual(after.statuses, { available: server.available.length, held: server.held.length, sold: server.sold.length });
    assert.equal(after.titled, 0);
    for (const id of server.sold) assert.equal(await statusOf(page, id), "sold", id);
    for (const id of server.held) assert.equal(await statusOf(page, id), "held", id);
    // Never drawn available in between, not even for a moment.
    const everAvailable = new Set(await page.evaluate(() => [...window.drawnAvailable]));
    assert.deepEqual(server.sold.concat(server.held).filter((id) => everAvailable.has(id)), []);
    assert.equal(await page.getAttribute("#event-counts", "data-state"), "known");
    assert.match(await page.locator("#event-counts").innerText(), new RegExp(`${server.sold.length}\\s*sold`, "i"));
    assert.deepEqual(errors, []);
    await ctx.close();
  });

  it("draws the seats loading again while the stream reconnects, until they are read again", async () => {
    const ctx = await browser.newContext({ viewport: VIEWPORT });
    // The first stream ends right after its snapshot (a lost connection, retried after 200 ms);
    // the second is held back until the checks are done.
    const summaryNow = (await call("GET", `/v1/events/${EVENT}`)).body;
    let streams = 0, releaseStream;
    const streamGate = new Promise((resolve) => { releaseStream = resolve; });
    await ctx.route(`**/v1/events/${EVENT}/stream*`, async (route) => {
      streams++;
      if (streams === 1) {
        return route.fulfill({ status: 200, contentType: "text/event-stream",
                               body: `retry: 200\nevent: snapshot\ndata: ${JSON.stringify(summaryNow)}\n\n` });
      }
      await streamGate;
      return route.continue();
    });
    const page = await ctx.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${base}/ui/events/${EVENT}`);
    await page.waitForFunction(() => document.querySelector("#live").dataset.state === "connecting"
                                      && document.querySelector("#live").textContent === "Reconnecting…");
    const start = Date.now();
    while (streams < 2 && Date.now() - start < 5000) await sleep(50);
    assert.equal(streams, 2, "the page reconnects");
    // Meanwhile a seat is sold: the page must not show it available from before the loss.
    const server = await seatStates();
    const target = server.available.find((id) => id.startsWith("LOWER-"));
    const hold = await call("POST", `/v1/events/${EVENT}/holds`, { user_id: "ivan", seats: [target] });
    assert.equal(hold.status, 201);
    const bought = await call("POST", `/v1/holds/${hold.body.reservation_id}/commit`, { user_id: "ivan" });
    assert.equal(bought.status, 200);
    await sleep(300);
    const drawn = await page.evaluate(seatDrawing);
    assert.deepEqual(drawn.statuses, { loading: server.total }, "every seat is drawn loading while reconnecting");
    assert.equal(drawn.green, 0);
    assert.equal(await page.getAttribute("#map", "aria-busy"), "true");
    assert.equal(await page.getAttribute("#event-counts", "data-state"), "loading");

    releaseStream();
    await page.waitForSelector("#map[aria-busy='false']", { timeout: 10000 });
    await page.waitForSelector("#live[data-state='live']", { timeout: 5000 });
    assert.equal(await statusOf(page, target), "sold");
    for (const id of server.sold) assert.equal(await statusOf(page, id), "sold", id);
    const after = await page.evaluate(seatDrawing);
    assert.equal(after.statuses.loading, undefined);
    assert.equal(after.statuses.sold, server.sold.length + 1);
    assert.deepEqual(errors, []);
    await ctx.close();
    // The tests after this one count on the showcase as it was made.
    const cancelled = await call("POST", `/v1/orders/${bought.body.order_id}/cancel`, { user_id: "ivan" });
    assert.equal(cancelled.status, 200);
  });

  it("lists the events with their counts", async () => {
    const context = await browser.newContext({ viewport: VIEWPORT });
    const page = await context.newPage();
    await page.goto(base + "/");
    const card = page.locator(`[data-event="${EVENT}"]`);
    await card.waitFor({ timeout: 5000 });
    const text = await card.innerText();
    assert.match(text, /The Eras Tour, night 1/);
    assert.match(text, new RegExp(`Available\\s*${summary.counts.available}`));
    assert.match(text, new RegExp(`Sold\\s*${summary.counts.sold}`));
    await card.click();
    await page.waitForURL(`**/ui/events/${EVENT}`);
    await context.close();
  });

  it("holds a seat in one browser, shows it live in another, counts down, commits", async () => {
    const ctxA = await browser.newContext({ viewport: VIEWPORT });
    const ctxB = await browser.newContext({ viewport: VIEWPORT });
    const a = await openMap(ctxA);
    const b = await openMap(ctxB);

    // The map: every seat of the event, coloured from the server's state.
    const total = summary.counts.available + summary.counts.held + summary.counts.sold;
    assert.equal(await a.locator("#sections [data-seat]").count(), total);
    const sold = await call("GET", `/v1/events/${EVENT}/seats?status=sold&limit=1`);
    const soldId = sold.body.seats[0].id;
    assert.equal(await statusOf(a, soldId), "sold");
    assert.equal(await statusOf(a, "FLOOR-A-12"), "available");
    assert.equal(await a.locator('.pool-card[data-pool="GA"]').count(), 1);
    assert.match(await a.locator('.pool-card[data-pool="GA"]').innerText(), /Available\s*490[\s\S]*Held\s*6[\s\S]*Sold\s*4/);

    // Both pages follow the stream.
    await a.waitForSelector("#live[data-state='live']", { timeout: 5000 });
    await b.waitForSelector("#live[data-state='live']", { timeout: 5000 });

    // A picks two seats and holds them.
    await a.fill("#user-id", "alice");
    // Alice's earlier tickets are listed and marked on the map.
    await a.locator("#orders .order").first().waitFor({ timeout: 3000 });
    assert.match(await a.locator("#orders").innerText(), /BALC\s*Row B · Seat 21/);
    await a.waitForFunction(() => document.querySelector('[data-seat="BALC-B-21"]').classList.contains("owned"));
    await seat(a, "FLOOR-A-12").click();
    await seat(a, "FLOOR-A-13").click();
    assert.match(await seat(a, "FLOOR-A-12").getAttribute("class"), /\bsel\b/);
    assert.match(await a.locator("#sel-list").innerText(), /FLOOR\s*Row A · Seat 12/);
    assert.match(await a.locator("#sel-total").innerText(), /900\.00/);
    const held = a.waitForResponse((r) => r.url().endsWith(`/v1/events/${EVENT}/holds`) && r.request().method() === "POST");
    await a.click("#hold-btn");
    const holdResponse = await held;
    assert.equal(holdResponse.status(), 201);
    const answeredAt = Date.now();
    const hold = await holdResponse.json();
    assert.deepEqual([...hold.seats].sort(), ["FLOOR-A-12", "FLOOR-A-13"]);

    // B sees it held, live, not by reloading (the delay is logged: speed is measured, not asserted).
    await waitStatus(b, "FLOOR-A-12", "held", 15000);
    await waitStatus(b, "FLOOR-A-13", "held", 15000);
    console.log(`seat map: B saw the hold ${Date.now() - answeredAt} ms after its answer`);
    assert.doesNotMatch(await seat(b, "FLOOR-A-12").getAttribute("class"), /\bmine\b/);
    // A sees it as its own hold.
    assert.equal(await statusOf(a, "FLOOR-A-12"), "held");
    assert.match(await seat(a, "FLOOR-A-12").getAttribute("class"), /\bmine\b/);

    // The countdown, from expires_at, in mm:ss, going down.
    const countdown = a.locator(`.hold[data-hold="${hold.reservation_id}"] .countdown`);
    await countdown.waitFor();
    const first = await countdown.innerText();
    assert.match(first, /^0[45]:\d\d$/, `countdown shows ${first}`);
    await sleep(1300);
    const second = await countdown.innerText();
    assert.ok(second < first, `the countdown moved from ${first} to ${second}`);
    assert.doesNotMatch(await countdown.getAttribute("class"), /urgent/);

    // B clicking the held seat does not select it, and tells why.
    await seat(b, "FLOOR-A-12").click();
    assert.doesNotMatch(await seat(b, "FLOOR-A-12").getAttribute("class"), /\bsel\b/);
    assert.match(await b.locator("#notice").innerText(), /held by another buyer/);

    // The screenshot: a hold with its countdown, a selection in progress, sold and held seats.
    await seat(a, "LOWER-B-16").click();
    await seat(a, "LOWER-B-17").click();
    await a.fill('.hold[data-hold] .pay-ref', "pi_demo_4242");
    await a.mouse.move(0, 0);
    await sleep(300);
    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await a.screenshot({ path: SCREENSHOT });

    // Commit; both pages show the seats sold.
    const committed = a.waitForResponse((r) => r.url().includes(`/v1/holds/${hold.reservation_id}/commit`));
    await a.click(`.hold[data-hold="${hold.reservation_id}"] .commit-btn`);
    const order = await (await committed).json();
    assert.ok(order.order_id, JSON.stringify(order));
    assert.equal(order.payment_ref, "pi_demo_4242");
    await waitStatus(a, "FLOOR-A-12", "sold", 1000);
    await waitStatus(b, "FLOOR-A-12", "sold", 1000);
    await waitStatus(b, "FLOOR-A-13", "sold", 1000);
    assert.match(await seat(a, "FLOOR-A-12").getAttribute("class"), /\bowned\b/);
    assert.match(await a.locator(`[data-order="${order.order_id}"]`).innerText(), /confirmed/i);
    assert.equal(await a.locator(`.hold[data-hold="${hold.reservation_id}"]`).count(), 0);
    assert.match(await a.locator("#notice").innerText(), /confirmed/);
    // The counts follow.
    const after = (await call("GET", `/v1/events/${EVENT}`)).body;
    await a.waitForFunction((n) => document.querySelector("#event-counts").innerText.includes(n),
                            after.counts.sold.toLocaleString("en-US"), { timeout: 2000 });

    assert.deepEqual(a.errors, []);
    assert.deepEqual(b.errors, []);
    await ctxA.close();
    await ctxB.close();
  });

  it("releases a hold and shows an expiring hold as expired", async () => {
    const ctx = await browser.newContext({ viewport: VIEWPORT });
    const page = await openMap(ctx);
    await page.fill("#user-id", "carol");
    await seat(page, "FLOOR-B-5").click();
    await page.click("#hold-btn");
    const holdEl = page.locator(".hold[data-state='held']");
    await holdEl.waitFor();
    const extended = page.waitForResponse((r) => r.url().endsWith("/extend"));
    await page.click(".hold[data-state='held'] .extend-btn");
    assert.equal((await extended).status(), 200);
    await page.waitForFunction(() => /Extended/.test(document.querySelector("#notice").textContent));
    await page.click(".hold[data-state='held'] .release-btn");
    await waitStatus(page, "FLOOR-B-5", "available", 2000);
    await page.locator(".hold[data-state='released']").waitFor();

    // General admission: a quantity, held from the page; the pool's counts follow the stream.
    const ga = page.locator('.pool-card[data-pool="GA"]');
    const before = (await call("GET", `/v1/events/${EVENT}`)).body.pools.find((p) => p.id === "GA");
    await page.click('.pool-card[data-pool="GA"] .step[aria-label="One more"]');
    await page.click('.pool-card[data-pool="GA"] .step[aria-label="One more"]');
    assert.equal(await page.inputValue("#pool-qty-GA"), "2");
    assert.match(await page.locator("#sel-list").innerText(), /GA\s*× 2/);
    await page.click("#hold-btn");
    await page.locator(".hold[data-state='held']", { hasText: "GA" }).waitFor();
    await page.waitForFunction(([held]) => new RegExp("Held\\s*" + held).test(
      document.querySelector('.pool-card[data-pool="GA"]').innerText), [before.held + 2], { timeout: 2000 });
    assert.match(await ga.innerText(), new RegExp(`Available\\s*${before.available - 2}`));
    await page.click(".hold[data-state='held'] .release-btn");
    await page.waitForFunction(([held]) => new RegExp("Held\\s*" + held).test(
      document.querySelector('.pool-card[data-pool="GA"]').innerText), [before.held], { timeout: 2000 });

    // A hold that lapses: made with a 4 s ttl_s through the API, then picked up by the page from
    // its saved holds (as after a reload); it turns urgent, then expired, and the seat comes back.
    const short = await call("POST", `/v1/events/${EVENT}/holds`, { user_id: "carol", seats: ["FLOOR-B-6"], ttl_s: 4 });
    assert.equal(short.status, 201);
    await page.evaluate((id) => {
      localStorage.setItem("holdfast.holds.eras_n1", JSON.stringify([{ id, user_id: "carol" }]));
    }, short.body.reservation_id);
    await page.reload();
    await page.waitForSelector("#map[aria-busy='false']");
    const restored = page.locator(`.hold[data-hold="${short.body.reservation_id}"]`);
    await restored.waitFor({ timeout: 3000 });
    assert.match(await restored.locator(".countdown").getAttribute("class"), /urgent/);
    // Up to the hold's own deadline plus slack: a fixed 4 s from here was shorter than what was
    // left of the 4 s ttl whenever the reload above took under a quarter second.
    const untilExpiry = Math.max(0, Date.parse(short.body.expires_at) - Date.now());
    await page.locator(`.hold[data-hold="${short.body.reservation_id}"][data-state="expired"]`)
      .waitFor({ timeout: untilExpiry + 3000 });
    await waitStatus(page, "FLOOR-B-6", "available", 2000);
    assert.deepEqual(page.errors, []);
    await ctx.close();
  });

  it("explains errors in sentences and flags the seats", async () => {
    const ctx = await browser.newContext({ viewport: VIEWPORT });
    // No stream for this page, so a seat taken meanwhile reaches it only through the error.
    await ctx.route("**/stream*", (route) => route.abort());
    const page = await openMap(ctx);
    await page.fill("#user-id", "dave");

    // Pool quantity above what is left.
    await page.fill("#pool-qty-BOX", "5");
    await page.click("#hold-btn");
    await page.waitForFunction(() => !document.querySelector("#notice").hidden);
    assert.match(await page.locator("#notice").innerText(), /Only 4 BOX tickets are left/);
    await page.fill("#pool-qty-BOX", "0");

    // A seat taken by someone else between the click and the hold.
    await seat(page, "LOWER-A-3").click();
    const taken = await call("POST", `/v1/events/${EVENT}/holds`, { user_id: "eve", seats: ["LOWER-A-3"] });
    assert.equal(taken.status, 201);
    await page.click("#hold-btn");
    await page.waitForFunction(() => /took/.test(document.querySelector("#notice").textContent));
    assert.equal(await page.locator("#notice").innerText(), "Someone just took LOWER-A-3. Pick another seat.");
    assert.match(await seat(page, "LOWER-A-3").getAttribute("class"), /\berr\b/);
    assert.doesNotMatch(await seat(page, "LOWER-A-3").getAttribute("class"), /\bsel\b/);

    // No user id.
    await page.fill("#user-id", "");
    await seat(page, "LOWER-A-4").click();
    await page.click("#hold-btn");
    assert.match(await page.locator("#notice").innerText(), /Type a user id first/);
    assert.deepEqual(page.errors, []);
    await ctx.close();
  });

  it("takes a visitor through the waiting room before holding (queue answers mocked)", async () => {
    // The room is section 6 of the contract; here its answers are mocked in the browser so the
    // page's side is tested whatever the server implements: join, wait, admitted, hold with the
    // token, commit, complete.
    const ctx = await browser.newContext({ viewport: VIEWPORT });
    const seen = { holds: [], polls: 0, completed: false };
    const expires = new Date(Date.now() + 15 * 60000).toISOString();
    await ctx.route(`**/v1/events/${EVENT}/queue`, (route) => route.fulfill({
      status: 201, contentType: "application/json",
      body: JSON.stringify({ ticket: "q_test", position: 3, status: "waiting", estimated_wait_s: 2 }) }));
    await ctx.route(`**/v1/events/${EVENT}/queue/q_test`, (route) => {
      seen.polls++;
      const body = seen.polls < 2 ? { ticket: "q_test", status: "waiting", position: 1, estimated_wait_s: 1 }
                                  : { ticket: "q_test", status: "admitted", admission_token: "tok.en.x", expires_at: expires };
      return route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify(body) });
    });
    await ctx.route(`**/v1/events/${EVENT}/queue/q_test/complete`, (route) => {
      seen.completed = true;
      return route.fulfill({ status: 200, contentType: "application/json", body: "{}" });
    });
    await ctx.route(`**/v1/events/${EVENT}/holds`, (route) => {
      const body = JSON.parse(route.request().postData() || "{}");
      seen.holds.push(body);
      if (body.admission_token !== "tok.en.x") {
        return route.fulfill({ status: 403, contentType: "application/json",
          body: JSON.stringify({ error: { code: "admission_required", message: "admission token required" } }) });
      }
      return route.continue();
    });
    const page = await openMap(ctx);
    await page.fill("#user-id", "hank");
    await seat(page, "FLOOR-B-5").click();
    await page.click("#hold-btn");
    await page.waitForSelector("#queue-card:not([hidden]) #queue-join");
    assert.match(await page.locator("#notice").innerText(), /waiting room/);
    await page.click("#queue-join");
    // The card shows "…" until the join's answer arrives: wait for a number, then check it.
    await page.waitForFunction(() => /#\d/.test(document.querySelector("#queue-position")?.textContent || ""));
    assert.match(await page.locator("#queue-card").innerText(), /#[13]/);
    // The user-id field reloads the queue 600 ms after the last keystroke. For the visitor who
    // has just joined, that must not forget the place shown (it showed "…" until the next poll,
    // and this test once read the card then).
    await page.evaluate(() => {
      window.positionLost = false;
      new MutationObserver(() => {
        if (document.querySelector("#queue-position")?.textContent === "…") window.positionLost = true;
      }).observe(document.querySelector("#queue-card"), { subtree: true, childList: true, characterData: true });
    });
    await page.fill("#user-id", "hank");
    await page.waitForTimeout(900);
    assert.equal(await page.evaluate(() => window.positionLost), false);
    await page.waitForSelector("#queue-card[data-state='admitted'] #queue-left", { timeout: 8000 });
    assert.match(await page.locator("#queue-left").innerText(), /^1[45]:\d\d$/);
    await page.click("#hold-btn");
    const hold = page.locator(".hold[data-state='held']");
    await hold.waitFor();
    assert.equal(seen.holds.at(-1).admission_token, "tok.en.x");
    await page.click(".hold[data-state='held'] .commit-btn");
    await page.waitForFunction(() => /confirmed/.test(document.querySelector("#notice").textContent));
    await page.waitForFunction(() => document.querySelector("#queue-card").dataset.state === "none");
    assert.ok(seen.completed, "the ticket was completed after buying");
    assert.deepEqual(page.errors, []);
    await ctx.close();
  });

  it("says Buy with the hold's total, in the event's currency, and shows the order after buying", async () => {
    const ctx = await browser.newContext({ viewport: VIEWPORT, locale: "en-US" });
    const page = await openMap(ctx);
    await page.fill("#user-id", "judy");
    // Two seats of different sections: 450.00 + 120.00.
    const server = await seatStates();
    const floor = server.available.find((id) => id.startsWith("FLOOR-") && !KEEP_FREE.has(id));
    const balc = server.available.find((id) => id.startsWith("BALC-") && !KEEP_FREE.has(id));
    await seat(page, floor).click();
    await seat(page, balc).click();
    await page.click("#hold-btn");
    const seatsHold = page.locator(".hold[data-state='held']", { has: page.locator(`[data-seat="${floor}"]`) });
    await seatsHold.waitFor();
    const seatsHoldId = await seatsHold.getAttribute("data-hold");
    assert.equal((await call("GET", `/v1/holds/${seatsHoldId}`)).body.total, 57000);
    assert.equal(await seatsHold.locator(".commit-btn").innerText(), "Buy · $570.00");
    assert.equal(await seatsHold.locator(".release-btn").innerText(), "Cancel hold");

    // A pool line: 3 × GA at 99.00.
    await page.fill("#pool-qty-GA", "3");
    await page.click("#hold-btn");
    const poolHold = page.locator(".hold[data-state='held']", { hasText: "GA" });
    await poolHold.waitFor();
    assert.equal(await poolHold.locator(".commit-btn").innerText(), "Buy · $297.00");

    // Buying: the order, its id and its seats, in the notice and under "Your tickets".
    const committed = page.waitForResponse((r) => r.url().includes(`/v1/holds/${seatsHoldId}/commit`));
    await seatsHold.locator(".commit-btn").click();
    const order = await (await committed).json();
    assert.match(order.order_id, /^ord_/);
    const card = page.locator(`#orders [data-order="${order.order_id}"]`);
    await card.waitFor({ timeout: 3000 });
    const cardText = await card.innerText();
    assert.match(cardText, new RegExp(`Order ${order.order_id}`));
    for (const id of [floor, balc]) {
      const [sec, row, num] = id.split("-");
      assert.match(cardText, new RegExp(`${sec}\\s*Row ${row} · Seat ${num}`));
    }
    assert.match(cardText, /\$570\.00/);
    const notice = await page.locator("#notice").innerText();
    assert.ok(notice.includes(order.order_id) && notice.includes(floor) && notice.includes(balc), notice);
    await poolHold.locator(".release-btn").click();
    const cancelled = page.locator(".hold[data-state='released']", { hasText: "GA" });
    await cancelled.waitFor();
    assert.match(await cancelled.locator(".hold-state").innerText(), /^cancelled$/i);
    assert.deepEqual(page.errors, []);
    await ctx.close();
  });

  it("shows a currency without minor units without decimals (JPY)", async () => {
    const created = await call("POST", "/v1/events", { id: "tokyo_1", name: "Tokyo Dome", currency: "JPY",
      sections: [{ id: "ARENA", price: 12500, rows: [{ id: "A", seats: 4 }] }] });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const ctx = await browser.newContext({ viewport: VIEWPORT, locale: "en-US" });
    const page = await openMap(ctx, "tokyo_1");
    await page.fill("#user-id", "kenji");
    await seat(page, "ARENA-A-1").click();
    await seat(page, "ARENA-A-2").click();
    await page.click("#hold-btn");
    const hold = page.locator(".hold[data-state='held']");
    await hold.waitFor();
    assert.equal(await hold.locator(".commit-btn").innerText(), "Buy · ¥25,000");
    assert.deepEqual(page.errors, []);
    await ctx.close();
  });

  it("holds the best available seats", async () => {
    const ctx = await browser.newContext({ viewport: VIEWPORT });
    const page = await openMap(ctx);
    await page.fill("#user-id", "frank");
    await page.fill("#best-count", "3");
    await page.selectOption("#best-section", "BALC");
    const answer = page.waitForResponse((r) => r.url().endsWith("/holds") && r.request().method() === "POST");
    await page.click("#best-btn");
    const res = await answer;
    const body = await res.json();
    assert.equal(res.status(), 201, "best_available: " + JSON.stringify(body));
    assert.equal(body.seats.length, 3);
    for (const id of body.seats) {
      assert.match(id, /^BALC-/);
      assert.match(await seat(page, id).getAttribute("class"), /\bmine\b/);
    }
    // Nothing that large together: a sentence, not a code.
    await page.fill("#best-count", "10");
    await page.selectOption("#best-section", "FLOOR");
    await page.fill("#user-id", "grace");
    await page.click("#best-btn");
    await page.waitForFunction(() => !document.querySelector("#notice").hidden && document.querySelector("#notice").dataset.kind !== "success");
    assert.ok((await page.locator("#notice").innerText()).length > 20);
    await ctx.close();
  });
});

describe("a 60,000-seat event", () => {
  it("loads, stays responsive and updates live", async () => {
    const sections = ["S1", "S2", "S3", "S4", "S5", "S6"].map((id, i) => ({
      id, price: 20000 - i * 2000,
      rows: Array.from({ length: 50 }, (_, r) => ({ id: "R" + (r + 1), seats: 200 })),
    }));
    const created = await call("POST", "/v1/events", { id: "arena60k", name: "Arena, 60,000 seats", sections });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const ctx = await browser.newContext({ viewport: VIEWPORT });
    const started = Date.now();
    const page = await openMap(ctx, "arena60k");
    const loadMs = Date.now() - started;
    assert.equal(await page.locator("#sections [data-seat]").count(), 60000);
    await page.waitForSelector("#live[data-state='live']", { timeout: 5000 });
    const hold = await call("POST", "/v1/events/arena60k/holds", { user_id: "zed", seats: ["S6-R50-200", "S1-R1-100"] });
    assert.equal(hold.status, 201);
    const t0 = Date.now();
    await waitStatus(page, "S6-R50-200", "held", 15000);
    await waitStatus(page, "S1-R1-100", "held", 15000);
    const liveMs = Date.now() - t0;
    // A click on a seat selects it. The times are logged, not asserted: speed is measured.
    await seat(page, "S3-R10-50").click();
    await page.waitForFunction(() => document.querySelector('[data-seat="S3-R10-50"]').classList.contains("sel"));
    const clickMs = await page.evaluate(() => new Promise((resolve) => {
      const el = document.querySelector('[data-seat="S1-R2-60"]');
      const t = performance.now();
      el.click();
      requestAnimationFrame(() => setTimeout(() => resolve(Math.round(performance.now() - t))));
    }));
    assert.match(await seat(page, "S1-R2-60").getAttribute("class"), /\bsel\b/);
    console.log(`60,000 seats: map ready in ${loadMs} ms, live update in ${liveMs} ms, click in ${clickMs} ms`);
    assert.deepEqual(page.errors, []);
    await ctx.close();
  });
});

describe("with an API key", () => {
  let keyed = null, keyedBase = "";

  before(async () => {
    if (process.env.HOLDFAST_BASE_URL) return;
    keyed = await startServer("key", ["--api-key", "s3cret-key"]);
    keyedBase = keyed.base;
    const r = await callAt(keyedBase, "POST", "/v1/events",
      { id: "locked", name: "Members only", sections: [{ id: "CLUB", price: 5000, rows: [{ id: "A", seats: 12 }] }] },
      { "Authorization": "Bearer s3cret-key" });
    assert.equal(r.status, 201);
  });

  after(async () => {
    if (keyed) await keyed.stop();
  });

  it("asks for the key, then lists, streams and holds with it", { skip: !!process.env.HOLDFAST_BASE_URL }, async () => {
    const ctx = await browser.newContext({ viewport: VIEWPORT });
    const page = await ctx.newPage();
    await page.goto(keyedBase + "/");
    await page.waitForSelector("#key-dialog");
    await page.fill("#api-key", "wrong-key");
    await page.click("#key-dialog button[type=submit]");
    await page.waitForSelector("#key-dialog");
    assert.match(await page.locator("#key-dialog p").innerText(), /refused/);
    await page.fill("#api-key", "s3cret-key");
    await page.click("#key-dialog button[type=submit]");
    await page.click('[data-event="locked"]');
    await page.waitForSelector("#map[aria-busy='false']");
    await page.waitForSelector("#live[data-state='live']", { timeout: 5000 });   // ?access_token= on the stream
    await page.fill("#user-id", "member1");
    await seat(page, "CLUB-A-6").click();
    await page.click("#hold-btn");
    await page.locator(".hold .countdown").waitFor();
    assert.equal(await statusOf(page, "CLUB-A-6"), "held");
    await ctx.close();
  });

  it("shows the staff tab once the key is given: holds, orders, More, closing sales", { skip: !!process.env.HOLDFAST_BASE_URL }, async () => {
    const keyedCall = (method, p, body) => callAt(keyedBase, method, p, body, { "Authorization": "Bearer s3cret-key" });
    const created = await keyedCall("POST", "/v1/events", {
      id: "staffed", name: "Staffed night", sections: [{ id: "CLUB", price: 5000, rows: [{ id: "A", seats: 12 }] }],
      pools: [{ id: "GA", capacity: 100, price: 1000 }],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    // 54 live pool holds, a paid seat and one more live seat hold: 55 live holds, more than a page.
    for (let i = 0; i < 54; i++)
      assert.equal((await keyedCall("POST", "/v1/events/staffed/holds", { user_id: `fan${i}`, pools: { GA: 1 } })).status, 201);
    const vip = await keyedCall("POST", "/v1/events/staffed/holds", { user_id: "vip", seats: ["CLUB-A-1"] });
    const order = await keyedCall("POST", `/v1/holds/${vip.body.reservation_id}/commit`, { user_id: "vip", payment_ref: "pi_vip" });
    assert.equal(order.status, 200);
    const walkin = await keyedCall("POST", "/v1/events/staffed/holds", { user_id: "walkin", seats: ["CLUB-A-2", "CLUB-A-3"] });
    assert.equal(walkin.status, 201);

    const ctx = await browser.newContext({ viewport: VIEWPORT });
    const page = await ctx.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(keyedBase + "/ui/events/staffed");
    await page.waitForSelector("#key-dialog");
    assert.equal(await page.locator("#staff-tabs").isVisible(), false, "no staff tab before the key");
    await page.fill("#api-key", "s3cret-key");
    await page.click("#key-dialog button[type=submit]");
    await page.waitForSelector("#map[aria-busy='false']");
    await page.click("#tab-staff");
    await page.waitForSelector("#staff-panel:not([hidden])");
    assert.equal(await page.locator("main.event-layout").isVisible(), false);
    assert.equal(await page.locator("#staff-sales-state").innerText(), "Sales are open");

    // Live holds, a page of 50, then More for the rest.
    const holdRows = page.locator("#staff-holds-body tr");
    await page.waitForFunction(() => document.querySelectorAll("#staff-holds-body tr").length === 50);
    assert.equal(await page.locator("#staff-holds-more").isVisible(), true);
    assert.equal(await page.locator(`[data-hold="${walkin.body.reservation_id}"]`).count(), 0, "the newest is on the next page");
    await page.click("#staff-holds-more");
    await page.waitForFunction(() => document.querySelectorAll("#staff-holds-body tr").length === 55);
    assert.equal(await holdRows.count(), 55);
    assert.equal(await page.locator("#staff-holds-more").isVisible(), false, "no More on the last page");
    const row = page.locator(`[data-hold="${walkin.body.reservation_id}"]`);
    assert.equal(await row.locator(".staff-user").innerText(), "walkin");
    assert.equal(await row.locator(".staff-items").innerText(), "CLUB-A-2, CLUB-A-3");
    assert.match(await row.locator(".staff-expiry").innerText(), /^\d+:\d\d left$/);
    assert.equal(await page.locator("#staff-holds-body .staff-user", { hasText: "fan0" }).count(), 1);
    assert.equal(await page.locator(`[data-hold="${vip.body.reservation_id}"]`).count(), 0, "a confirmed hold is no live hold");

    // The order, with its buyer.
    const orderRow = page.locator(`[data-order="${order.body.order_id}"]`);
    await orderRow.waitFor();
    assert.equal(await orderRow.locator(".staff-user").innerText(), "vip");
    assert.equal(await orderRow.locator(".staff-status").innerText(), "confirmed");

    // Closing sales: the switch shows it, the API says it, and a hold from the page is refused.
    await page.click("#staff-sales-toggle");
    await page.waitForSelector("#staff-sales-state[data-open='false']");
    assert.equal(await page.locator("#staff-sales-toggle").innerText(), "Reopen sales");
    assert.equal((await keyedCall("GET", "/v1/events/staffed")).body.sales_open, false);
    assert.equal(await page.locator("#sales-badge").isVisible(), true);
    await page.click("#tab-map");
    await page.fill("#user-id", "latecomer");
    await seat(page, "CLUB-A-8").click();
    await page.click("#hold-btn");
    await page.waitForFunction(() => !document.querySelector("#notice").hidden && /closed/.test(document.querySelector("#notice").textContent));
    assert.match(await page.locator("#notice").innerText(), /Sales for this event are closed/);
    assert.equal(await statusOf(page, "CLUB-A-8"), "available");

    // Reopened: the page holds again.
    await page.click("#tab-staff");
    await page.click("#staff-sales-toggle");
    await page.waitForSelector("#staff-sales-state[data-open='true']");
    assert.equal((await keyedCall("GET", "/v1/events/staffed")).body.sales_open, true);
    await page.click("#tab-map");
    await page.click("#hold-btn");
    await page.locator(".hold .countdown").waitFor();
    await waitStatus(page, "CLUB-A-8", "held", 5000);
    assert.deepEqual(errors, []);
    await ctx.close();
  });
});

describe("staff refunds and history", () => {
  const KEY = "refund-key", SECRET = "whsec_browser";
  let server2 = null, base2 = "";

  const keyedCall = (method, p, body, headers) =>
    callAt(base2, method, p, body, Object.assign({ "Authorization": "Bearer " + KEY }, headers || {}));

  /* A payment webhook signed as the provider does: HMAC-SHA256 of "t.body" (API.md section 7). */
  const webhook = (delivery) => {
    const body = JSON.stringify(delivery);
    const t = Math.floor(Date.now() / 1000);
    const v1 = createHmac("sha256", SECRET).update(t + "." + body).digest("hex");
    return keyedCall("POST", "/v1/webhooks/payments", body, { "Holdfast-Signature": `t=${t},v1=${v1}` });
  };

  before(async () => {
    if (process.env.HOLDFAST_BASE_URL) return;
    server2 = await startServer("refunds", ["--api-key", KEY, "--webhook-secret", SECRET]);
    base2 = server2.base;
  });

  after(async () => {
    if (server2) await server2.stop();
  });

  it("lists a pending refund, marks it refunded, and pages the history back with Older", { skip: !!process.env.HOLDFAST_BASE_URL }, async () => {
    const created = await keyedCall("POST", "/v1/events", {
      id: "refunded", name: "Refund night", sections: [{ id: "CLUB", price: 5000, rows: [{ id: "A", seats: 12 }] }],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    // Three entries: the hold, its extension, and a payment of the wrong amount (a refund owed).
    const hold = await keyedCall("POST", "/v1/events/refunded/holds", { user_id: "payer", seats: ["CLUB-A-1", "CLUB-A-2"] });
    assert.equal(hold.status, 201, JSON.stringify(hold.body));
    const id = hold.body.reservation_id;
    assert.equal((await keyedCall("POST", `/v1/holds/${id}/extend`, { user_id: "payer", ttl_s: 900 })).status, 200);
    const paid = await webhook({ id: "evt_browser_1", type: "payment.succeeded", payment_intent_id: "pi_browser_1",
                                 reservation_id: id, amount: 10001 });
    assert.equal(paid.status, 200, JSON.stringify(paid.body));
    assert.equal(paid.body.result, "refund_required");
    assert.equal(paid.body.reason, "amount_mismatch");
    const refundId = paid.body.refund_id;

    const ctx = await browser.newContext({ viewport: VIEWPORT });
    const page = await ctx.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(base2 + "/ui/events/refunded?history_page=1");
    await page.waitForSelector("#key-dialog");
    await page.fill("#api-key", KEY);
    await page.click("#key-dialog button[type=submit]");
    await page.waitForSelector("#map[aria-busy='false']");
    await page.click("#tab-staff");
    await page.waitForSelector("#staff-panel:not([hidden])");
    assert.match(await page.locator("#staff-refunds-scope").innerText(), /every event on this server/);

    // The pending refund: its reservation, the amount paid in the event's currency, the reason in words, its age.
    const refundRow = page.locator(`#staff-refunds-body tr[data-refund="${refundId}"]`);
    await refundRow.waitFor();
    assert.equal(await page.locator("#staff-refunds-body tr").count(), 1);
    assert.equal(await refundRow.locator(".staff-reservation").innerText(), id);
    assert.equal(await refundRow.locator(".staff-amount").innerText(), "$100.01");
    assert.equal(await refundRow.locator(".staff-reason").innerText(), "The amount paid differs from the hold's total");
    assert.equal(await refundRow.locator(".staff-age").innerText(), "just now");
    assert.equal(await page.locator("#staff-refunds-empty").isVisible(), false);
    assert.equal(await page.locator("#staff-refunds-more").isVisible(), false);

    // Mark refunded: it leaves the pending list, and the API says completed.
    await refundRow.locator("button", { hasText: "Mark refunded" }).click();
    await refundRow.waitFor({ state: "detached" });
    await page.locator("#staff-refunds-empty").waitFor();
    assert.match(await page.locator("#staff-notice").innerText(), new RegExp(`Refund ${refundId} of \\$100\\.01 marked refunded`));
    const completed = await keyedCall("GET", "/v1/refunds?status=completed");
    assert.deepEqual(completed.body.refunds.map((r) => [r.refund_id, r.status]), [[refundId, "completed"]]);
    assert.deepEqual((await keyedCall("GET", "/v1/refunds?status=pending")).body.refunds, []);

    // The history, newest first, one entry a page: the payment, then Older for the extension and the hold.
    const historyRows = page.locator("#staff-history-body tr");
    const shown = () => historyRows.evaluateAll((rows) => rows.map((r) => [r.dataset.seq, r.dataset.type]));
    await page.waitForFunction(() => document.querySelectorAll("#staff-history-body tr").length === 1);
    assert.deepEqual(await shown(), [["3", "payment"]]);
    const payment = page.locator('#staff-history-body tr[data-type="payment"]');
    assert.match(await payment.locator(".staff-what").innerText(), new RegExp(`pi_browser_1 of \\$100\\.01 for ${id}: refund ${refundId} owed \\(amount mismatch\\)`));
    assert.equal(await payment.locator(".staff-type").innerText(), "payment");
    // Every entry names its hold's user (API.md section 7), a payment's too.
    assert.equal(await payment.locator(".staff-user").innerText(), "payer", "a payment names its hold's user");
    assert.equal(await page.locator("#staff-history-older").isVisible(), true);
    await page.click("#staff-history-older");
    await page.waitForFunction(() => document.querySelectorAll("#staff-history-body tr").length === 2);
    assert.deepEqual(await shown(), [["3", "payment"], ["2", "extend"]]);
    assert.equal(await page.locator('#staff-history-body tr[data-type="extend"] .staff-user').innerText(), "payer");
    await page.click("#staff-history-older");
    await page.waitForFunction(() => document.querySelectorAll("#staff-history-body tr").length === 3);
    assert.deepEqual(await shown(), [["3", "payment"], ["2", "extend"], ["1", "hold"]]);
    const holdRow = page.locator('#staff-history-body tr[data-seq="1"]');
    assert.equal(await holdRow.locator(".staff-type").innerText(), "hold");
    assert.equal(await holdRow.locator(".staff-user").innerText(), "payer");
    assert.match(await holdRow.locator(".staff-what").innerText(), new RegExp(`^Held CLUB-A-1, CLUB-A-2 \\(\\$100\\.00\\) in ${id} until `));
    assert.equal(await page.locator("#staff-history-older").isVisible(), false, "no Older past the first entry");
    // The filter box: a seat's entries, oldest first, one a page with More; a user with none.
    await page.fill("#staff-history-seat", "CLUB-A-2");
    await page.click("#staff-history-filters button[type=submit]");
    await page.waitForFunction(() => document.querySelector("#staff-history-body tr")?.dataset.seq === "1");
    assert.deepEqual(await shown(), [["1", "hold"]]);
    assert.equal(await page.locator("#staff-history-older").innerText(), "More");
    await page.click("#staff-history-older");
    await page.waitForFunction(() => document.querySelectorAll("#staff-history-body tr").length === 2);
    await page.click("#staff-history-older");
    await page.waitForFunction(() => document.querySelectorAll("#staff-history-body tr").length === 3);
    assert.deepEqual(await shown(), [["1", "hold"], ["2", "extend"], ["3", "payment"]]);
    assert.equal(await page.locator("#staff-history-older").isVisible(), false, "no More after the last");
    await page.fill("#staff-history-user", "nobody");
    await page.click("#staff-history-filters button[type=submit]");
    await page.locator("#staff-history-empty").waitFor();
    assert.equal(await page.locator("#staff-history-body tr").count(), 0);
    assert.deepEqual(errors, []);
    await ctx.close();
  });
  it("draws allocated seats in a colour of their own, the allocation's name on hover", async () => {
    const id = "alloc_page";
    const created = await call("POST", "/v1/events", {
      id, sections: [{ id: "S", price: 100, rows: [{ id: "A", seats: 6 }] }] });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const made = await call("POST", `/v1/events/${id}/allocations`, { id: "guests", seats: ["S-A-1", "S-A-2"] });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const ctx = await browser.newContext({ viewport: VIEWPORT });
    const page = await ctx.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${base}/ui/events/${id}`);
    const seat = (seatId) => `#sections [data-seat="${seatId}"]`;
    await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.status === "allocated", seat("S-A-1"));
    assert.match(await page.getAttribute(seat("S-A-1"), "title"), /guests/, "the allocation's name on hover");
    const look = (sel) => page.$eval(sel, (el) => getComputedStyle(el).backgroundImage + " " + getComputedStyle(el).backgroundColor);
    const allocatedLook = await look(seat("S-A-1"));
    assert.match(allocatedLook, /rgb\(47, 127, 158\)/, "the allocated colour: " + allocatedLook);
    assert.notEqual(allocatedLook, await look(seat("S-A-3")), "not the colour of a seat on sale");
    assert.equal(await page.locator('.legend .swatch[data-k="allocated"]').count(), 1, "the legend has it");
    // Live: a new allocation's seat turns allocated with its name; a release puts seats on sale.
    const press = await call("POST", `/v1/events/${id}/allocations`, { id: "press", seats: ["S-A-5"] });
    assert.equal(press.status, 201, JSON.stringify(press.body));
    await page.waitForFunction((sel) => /press/.test(document.querySelector(sel)?.title || ""), seat("S-A-5"));
    const released = await call("POST", `/v1/events/${id}/allocations/guests/release`, {});
    assert.equal(released.status, 200, JSON.stringify(released.body));
    await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.status === "available", seat("S-A-1"));
    assert.equal(await page.getAttribute(seat("S-A-1"), "title"), null, "no name once released");
    assert.deepEqual(errors, []);
    await ctx.close();
  });
});
