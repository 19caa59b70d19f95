// Browser test of the calendar page (/ui/calendars/{cal}, API.md section 12), with Debian's
// chromium driven by playwright-core against a server it starts itself (common.mjs).
// Run from the repository root:  node --test tests/browser/calendar.test.mjs
// Saves a screenshot of a night calendar with a hold to build/calendar.png (beside
// HOLDFAST_SCREENSHOT when that is set); `make screenshots` copies it to docs/.

import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { root, VIEWPORT, sleep, call as callAt, openSession, closeSession } from "./common.mjs";

const SHOTS = process.env.HOLDFAST_SCREENSHOT ? path.dirname(process.env.HOLDFAST_SCREENSHOT) : path.join(root, "build");
const SCREENSHOT = path.join(SHOTS, "calendar.png");
const DAY_MS = 86400000;

let base = "";
let session = null;
let browser = null;
const call = (method, p, body) => callAt(base, method, p, body);

/* ---------- dates: the page opens on the current UTC month; the tests use the next one, whose
   every date is within the horizon and none in the past ---------- */
const now = new Date();
const NEXT_MONTH = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
const date = (day) => new Date(NEXT_MONTH + (day - 1) * DAY_MS).toISOString().slice(0, 10);
const TOMORROW = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString().slice(0, 10);

const HOTEL = "lisboa";
const CLINIC = "clinic";

async function createHotel() {
  const created = await call("POST", "/v1/calendars", {
    id: HOTEL, name: "Hotel Lisboa", currency: "EUR", unit: "night", hold_ttl_s: 300,
    resources: [
      { id: "DBL", name: "Double room", capacity: 12, price: 15000, min_length: 1, max_length: 30 },
      { id: "SUITE", name: "Suite", capacity: 1, price: 60000, min_length: 2 },
      { id: "PARKING", name: "Parking", capacity: 40, price: 1500 },
    ],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  // Guests before us: a booking of three double rooms, the suite held, parking mostly taken.
  const booked = await call("POST", `/v1/calendars/${HOTEL}/bookings`, {
    user_id: "group", payment_ref: "pi_group", items: [{ resource: "DBL", from: date(5), to: date(8), quantity: 3 }] });
  assert.equal(booked.status, 201, JSON.stringify(booked.body));
  const suite = await call("POST", `/v1/calendars/${HOTEL}/holds`, {
    user_id: "vip", items: [{ resource: "SUITE", from: date(14), to: date(17) }] });
  assert.equal(suite.status, 201, JSON.stringify(suite.body));
  const parking = await call("POST", `/v1/calendars/${HOTEL}/bookings`, {
    user_id: "fleet", items: [{ resource: "PARKING", from: date(1), to: date(28), quantity: 34 }] });
  assert.equal(parking.status, 201, JSON.stringify(parking.body));
}

async function createClinic() {
  const created = await call("POST", "/v1/calendars", {
    id: CLINIC, name: "Clinic", unit: "minute", granularity_min: 15, currency: "EUR",
    resources: [
      { id: "dr_smith", name: "Dr Smith", capacity: 1, price: 2000, min_length: 15, max_length: 60, buffer_after_min: 10 },
      { id: "yoga", name: "Yoga", capacity: 20, price: 1500, min_length: 60, max_length: 60 },
    ],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
}

/* The free count the server has for one night of a resource. */
async function serverFree(cal, resource, day) {
  const next = new Date(Date.parse(day + "T00:00:00Z") + DAY_MS).toISOString().slice(0, 10);
  const r = await call("GET", `/v1/calendars/${cal}/availability?resource=${resource}&from=${day}&to=${next}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.segments[0].available;
}

async function openCalendar(context, cal) {
  const page = await context.newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(e.message));
  await page.goto(`${base}/ui/calendars/${encodeURIComponent(cal)}`);
  await page.waitForSelector("#grids[aria-busy='false']", { timeout: 15000 });
  await page.waitForSelector("#live[data-state='live']", { timeout: 5000 });
  return page;
}

/* Shows the next month and waits for its counts. */
async function nextMonth(page) {
  await page.click("#month-next");
  await page.waitForSelector(`.cal-day[data-resource="DBL"][data-date="${date(1)}"]:not([data-level="unknown"])`, { timeout: 5000 });
}

const night = (page, resource, day) => page.locator(`.cal-day[data-resource="${resource}"][data-date="${day}"]`);
const shownFree = async (page, resource, day) => (await night(page, resource, day).locator(".cal-free").innerText()).trim();

/* How long a live update may take before the test calls it lost: a liveness bound, not a
 * speed one (tests assert behaviour; how fast updates arrive is measured, and logged). */
const LIVE_WAIT_MS = 15000;

async function waitFree(page, resource, day, expected, timeout) {
  await page.waitForFunction(([resource, day, expected]) => {
    const el = document.querySelector(`.cal-day[data-resource="${resource}"][data-date="${day}"] .cal-free`);
    return el && el.textContent.trim() === String(expected);
  }, [resource, day, expected], { timeout, polling: 20 });
}

before(async () => {
  session = await openSession("calendar");
  ({ base, browser } = session);
});

after(async () => {
  if (session) await closeSession(session);
});

describe("calendar page", () => {
  before(async () => { await createHotel(); await createClinic(); });

  it("serves the page without a key, and says so for an unknown calendar", async () => {
    const r = await fetch(`${base}/ui/calendars/${HOTEL}`);
    assert.equal(r.status, 200, "GET /ui/calendars/{cal} must serve ui/calendar.html");
    assert.match(r.headers.get("content-type"), /^text\/html/);
    assert.match(await r.text(), /id="grids"/);
    const js = await fetch(`${base}/ui/calendar.js`);
    assert.equal(js.status, 200);
    assert.match(js.headers.get("content-type") || "", /javascript/);

    const context = await browser.newContext({ viewport: VIEWPORT });
    const page = await context.newPage();
    await page.goto(`${base}/ui/calendars/nowhere`);
    await page.waitForSelector("#missing:not([hidden])", { timeout: 5000 });
    assert.match(await page.locator("#missing").innerText(), /No such calendar[\s\S]*nowhere/);
    assert.equal(await page.locator("main.calendar-layout").isHidden(), true);
    await context.close();
  });

  it("shows the counts per night, holds two picked dates, counts down, commits; another browser sees it live", async () => {
    const ctxA = await browser.newContext({ viewport: VIEWPORT });
    const ctxB = await browser.newContext({ viewport: VIEWPORT });
    const a = await openCalendar(ctxA, HOTEL);
    const b = await openCalendar(ctxB, HOTEL);
    await nextMonth(a);
    await nextMonth(b);

    assert.equal(await a.locator("#month-label").innerText(),
      new Date(NEXT_MONTH).toLocaleDateString("en-US", { month: "long", year: "numeric", timeZone: "UTC" }));
    // One month grid per resource, each date with the server's free count.
    assert.equal(await a.locator(".cal-block").count(), 3);
    for (const [resource, day] of [["DBL", date(6)], ["DBL", date(10)], ["SUITE", date(15)], ["PARKING", date(3)]])
      assert.equal(await shownFree(a, resource, day), String(await serverFree(HOTEL, resource, day)), `${resource} ${day}`);
    assert.equal(await shownFree(a, "DBL", date(6)), "9");
    assert.equal(await night(a, "SUITE", date(15)).getAttribute("data-level"), "full");
    assert.equal(await night(a, "PARKING", date(3)).getAttribute("data-level"), "few");
    assert.match(await night(a, "DBL", date(6)).getAttribute("aria-label"), /9 of 12 free/);

    // Check-in on the 10th, check-out on the 13th: three nights.
    await a.fill("#user-id", "alice");
    await night(a, "DBL", date(10)).click();
    assert.match(await a.locator("#sel-list").innerText(), /now pick the check-out date/);
    assert.equal(await a.locator("#hold-btn").isDisabled(), true);
    await night(a, "DBL", date(13)).click();
    assert.equal(await night(a, "DBL", date(10)).getAttribute("data-pick"), "check-in");
    assert.equal(await night(a, "DBL", date(11)).getAttribute("data-pick"), "night");
    assert.equal(await night(a, "DBL", date(13)).getAttribute("data-pick"), "check-out");
    assert.match(await a.locator("#sel-list").innerText(), /Double room[\s\S]*3 nights/);
    assert.match(await a.locator("#sel-total").innerText(), /450\.00/);

    const held = a.waitForResponse((r) => r.url().endsWith(`/v1/calendars/${HOTEL}/holds`) && r.request().method() === "POST");
    await a.click("#hold-btn");
    const holdResponse = await held;
    assert.equal(holdResponse.status(), 201);
    const answeredAt = Date.now();
    const hold = await holdResponse.json();
    assert.deepEqual(hold.items.map((i) => [i.resource, i.from, i.to]), [["DBL", date(10), date(13)]]);

    // B sees the three nights drop, from the stream; the check-out date not.
    await waitFree(b, "DBL", date(10), 11, LIVE_WAIT_MS);
    await waitFree(b, "DBL", date(12), 11, LIVE_WAIT_MS);
    console.log(`calendar: B saw the hold ${Date.now() - answeredAt} ms after its answer`);
    assert.equal(await shownFree(b, "DBL", date(13)), "12");
    assert.equal(await shownFree(b, "DBL", date(9)), "12");
    await waitFree(a, "DBL", date(11), 11, LIVE_WAIT_MS);

    // The countdown, from expires_at, in mm:ss, going down.
    const countdown = a.locator(`.hold[data-hold="${hold.reservation_id}"] .countdown`);
    await countdown.waitFor();
    const first = await countdown.innerText();
    assert.match(first, /^0[45]:\d\d$/, `countdown shows ${first}`);
    await sleep(1300);
    const second = await countdown.innerText();
    assert.ok(second < first, `the countdown moved from ${first} to ${second}`);
    assert.match(await a.locator(`.hold[data-hold="${hold.reservation_id}"] .commit-btn`).innerText(), /Book · €450\.00/);

    // The screenshot: the hold with its countdown, a pick in progress on the parking.
    await night(a, "PARKING", date(10)).click();
    await a.fill(`.hold[data-hold="${hold.reservation_id}"] .pay-ref`, "pi_demo_4242");
    await a.mouse.move(0, 0);
    await sleep(300);
    mkdirSync(SHOTS, { recursive: true });
    rmSync(SCREENSHOT, { force: true });
    await a.screenshot({ path: SCREENSHOT });
    assert.ok(statSync(SCREENSHOT).size > 1000, "the calendar's screenshot was written");

    // Commit: the order is listed, the nights stay taken.
    const committed = a.waitForResponse((r) => r.url().includes(`/v1/holds/${hold.reservation_id}/commit`));
    await a.click(`.hold[data-hold="${hold.reservation_id}"] .commit-btn`);
    const order = await (await committed).json();
    assert.ok(order.order_id, JSON.stringify(order));
    assert.equal(order.calendar, HOTEL);
    assert.equal(order.payment_ref, "pi_demo_4242");
    await a.locator(`#orders .order[data-order="${order.order_id}"]`).waitFor({ timeout: 2000 });
    assert.equal(await a.locator(`.hold[data-hold="${hold.reservation_id}"]`).count(), 0);
    await sleep(300);
    assert.equal(await shownFree(b, "DBL", date(11)), "11");
    assert.equal(await serverFree(HOTEL, "DBL", date(11)), 11);

    // A third hold, released: B sees the nights given back.
    await night(a, "DBL", date(20)).click();
    await night(a, "DBL", date(22)).click();
    await a.fill("#cal-quantity", "2");
    assert.match(await a.locator("#sel-total").innerText(), /600\.00/);
    const third = a.waitForResponse((r) => r.url().endsWith(`/v1/calendars/${HOTEL}/holds`) && r.request().method() === "POST");
    await a.click("#hold-btn");
    const thirdHold = await (await third).json();
    assert.equal(thirdHold.status, "held", JSON.stringify(thirdHold));
    await waitFree(b, "DBL", date(20), 10, LIVE_WAIT_MS);
    await waitFree(b, "DBL", date(21), 10, LIVE_WAIT_MS);
    await a.click(`.hold[data-hold="${thirdHold.reservation_id}"] .release-btn`);
    await waitFree(b, "DBL", date(20), 12, LIVE_WAIT_MS);
    await waitFree(b, "DBL", date(21), 12, LIVE_WAIT_MS);
    // The other browser may see the stream's change before this page has read its release's
    // answer: wait for the card rather than reading it once.
    await a.waitForSelector(`.hold[data-hold="${thirdHold.reservation_id}"][data-state="released"]`, { timeout: 5000 });
    assert.equal(await serverFree(HOTEL, "DBL", date(20)), 12);

    // The keyboard moves between dates (a week down) and picks one.
    await night(a, "SUITE", date(15)).focus();
    await a.keyboard.press("ArrowRight");
    assert.equal(await a.evaluate(() => document.activeElement.dataset.date), date(16));
    await a.keyboard.press("ArrowDown");
    assert.equal(await a.evaluate(() => document.activeElement.dataset.date), date(23));
    await a.keyboard.press("Enter");
    assert.equal(await night(a, "SUITE", date(23)).getAttribute("data-pick"), "check-in");

    assert.deepEqual(a.errors, []);
    assert.deepEqual(b.errors, []);
    await ctxA.close();
    await ctxB.close();
  });

  it("shows a minute calendar's slots, holds one and commits; the other browser sees it taken", async () => {
    const ctxA = await browser.newContext({ viewport: VIEWPORT });
    const ctxB = await browser.newContext({ viewport: VIEWPORT });
    const pages = [await openCalendar(ctxA, CLINIC), await openCalendar(ctxB, CLINIC)];
    for (const page of pages) {
      assert.equal(await page.locator("#month-nav").isHidden(), true);
      await page.selectOption("#cal-resource", "dr_smith");
      await page.selectOption("#cal-length", "30");
      await page.fill("#cal-day", TOMORROW);
      await page.dispatchEvent("#cal-day", "change");
    }
    const [a, b] = pages;
    const start = `${TOMORROW}T09:00:00.000Z`;
    const slot = (page, at) => page.locator(`.cal-slot[data-resource="dr_smith"][data-start="${at}"]`);
    await a.waitForSelector(`.cal-slot[data-start="${start}"]:not(:disabled)`, { timeout: 5000 });
    await b.waitForSelector(`.cal-slot[data-start="${start}"]:not(:disabled)`, { timeout: 5000 });

    // Every start of the day on the 15-minute grid is drawn; the ones /slots gives are enabled.
    assert.equal(await a.locator(".cal-slot").count(), 96);
    const slots = await call("GET", `/v1/calendars/${CLINIC}/slots?resource=dr_smith&length=30` +
      `&from=${TOMORROW}T00:00:00Z&to=${TOMORROW}T23:59:00Z&limit=1000`);
    assert.equal(slots.status, 200, JSON.stringify(slots.body));
    assert.equal(await a.locator(".cal-slot:not(:disabled)").count(), slots.body.slots.length);

    await a.fill("#user-id", "patient1");
    await slot(a, start).click();
    assert.equal(await slot(a, start).getAttribute("data-pick"), "in");
    assert.match(await a.locator("#sel-list").innerText(), /Dr Smith[\s\S]*09:00–09:30 UTC[\s\S]*30 min/);
    assert.match(await a.locator("#sel-total").innerText(), /40\.00/);
    const held = a.waitForResponse((r) => r.url().endsWith(`/v1/calendars/${CLINIC}/holds`) && r.request().method() === "POST");
    await a.click("#hold-btn");
    const holdResponse = await held;
    assert.equal(holdResponse.status(), 201);
    const hold = await holdResponse.json();
    assert.equal(hold.items[0].from, start);

    // B: the slot and, with the 10-minute buffer after, the ones that would overlap it close.
    await b.waitForSelector(`.cal-slot[data-start="${start}"]:disabled`, { timeout: 1500 });
    // 09:30 would end at 10:00 and overlap 09:00-09:40; 08:30 would block until 09:10.
    assert.equal(await slot(b, `${TOMORROW}T09:30:00.000Z`).isDisabled(), true);
    assert.equal(await slot(b, `${TOMORROW}T08:30:00.000Z`).isDisabled(), true);
    assert.equal(await slot(b, `${TOMORROW}T08:15:00.000Z`).isDisabled(), false);
    assert.equal(await slot(b, `${TOMORROW}T09:45:00.000Z`).isDisabled(), false);

    // Arrow down goes to the start below in the grid (as many a row as the width holds).
    await slot(b, `${TOMORROW}T08:15:00.000Z`).focus();
    await b.keyboard.press("ArrowDown");
    const moved = await b.evaluate((from) => {
      const a = document.querySelector(`.cal-slot[data-start="${from}"]`), now = document.activeElement;
      return { start: now.dataset.start, same: now.offsetLeft === a.offsetLeft, below: now.offsetTop > a.offsetTop };
    }, `${TOMORROW}T08:15:00.000Z`);
    assert.ok(moved.same && moved.below && moved.start > `${TOMORROW}T08:15`, JSON.stringify(moved));

    const countdown = a.locator(`.hold[data-hold="${hold.reservation_id}"] .countdown`);
    await countdown.waitFor();
    assert.match(await countdown.innerText(), /^\d\d:\d\d$/);
    const committed = a.waitForResponse((r) => r.url().includes(`/v1/holds/${hold.reservation_id}/commit`));
    await a.click(`.hold[data-hold="${hold.reservation_id}"] .commit-btn`);
    const order = await (await committed).json();
    assert.ok(order.order_id, JSON.stringify(order));
    await a.locator(`#orders .order[data-order="${order.order_id}"]`).waitFor({ timeout: 2000 });
    assert.equal(await slot(a, start).isDisabled(), true);

    assert.deepEqual(a.errors, []);
    assert.deepEqual(b.errors, []);
    await ctxA.close();
    await ctxB.close();
  });
});
