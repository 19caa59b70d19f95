// Browser test of the event page's look at a laptop's and a phone's width (issue 27 point 16,
// API.md section 10): the staff tab's menus show their whole text, a 50-seat and a 100-seat
// row are drawn with readable seat numbers (scrolling sideways on a phone rather than
// shrinking to dots), and an unknown event says so plainly, with no booking form and no
// "Offline" badge while the server is up ("Offline" only when it cannot be reached).
// Run from the repository root:  node --test tests/browser/
// Screenshots at 1280 and 390 px wide go to build/screenshots/ (HOLDFAST_SCREENSHOT_DIR to
// choose): seatmap-wide-W.png, staff-W.png, unknown-event-W.png.

import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { root, sleep, call as callAt, startServer, openSession, closeSession } from "./common.mjs";

const SHOTS = process.env.HOLDFAST_SCREENSHOT_DIR || path.join(root, "build", "screenshots");
const WIDTHS = [1280, 390];
const EVENT = "wide_rows";

let base = "";
let session = null;
let browser = null;

const call = (method, p, body) => callAt(base, method, p, body);

async function shot(page, name) {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, name), fullPage: true });
}

async function openPage(width, address) {
  const ctx = await browser.newContext({ viewport: { width, height: 900 }, locale: "en-US" });
  const page = await ctx.newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(e.message));
  await page.goto(base + address);
  return page;
}

async function openMap(width) {
  const page = await openPage(width, `/ui/events/${EVENT}`);
  await page.waitForSelector("#map[aria-busy='false']", { timeout: 15000 });
  return page;
}

/* In the page: where each menu (select) of `scope` shows its text. For every option, the width
   of its text in the menu's font against the room the menu has for it (its inner width less its
   padding), and the menu's box against the window and every ancestor that clips (a card that
   scrolls sideways hides what sticks out of it). */
function menusFit(scope) {
  const canvas = document.createElement("canvas").getContext("2d");
  const out = [];
  for (const sel of document.querySelectorAll(scope + " select")) {
    const cs = getComputedStyle(sel);
    canvas.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
    const room = sel.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    const box = sel.getBoundingClientRect();
    let left = 0, right = window.innerWidth;
    for (let a = sel.parentElement; a; a = a.parentElement) {
      const o = getComputedStyle(a);
      if (o.overflowX === "visible") continue;
      const r = a.getBoundingClientRect();
      left = Math.max(left, r.left + a.clientLeft);
      right = Math.min(right, r.left + a.clientLeft + a.clientWidth);
    }
    out.push({
      id: sel.id, visible: box.width > 0, scrollWidth: sel.scrollWidth, clientWidth: sel.clientWidth,
      room, options: [...sel.options].map((o) => ({ text: o.text, width: canvas.measureText(o.text).width })),
      shown: sel.options[sel.selectedIndex] ? sel.options[sel.selectedIndex].text : "",
      box: { left: box.left, right: box.right }, clip: { left, right },
    });
  }
  return out;
}

function assertMenusWhole(menus, where, count = 2) {
  assert.equal(menus.length, count, `${where}: the menus are there`);
  for (const m of menus) {
    assert.ok(m.visible, `${where}: #${m.id} is shown`);
    assert.ok(m.scrollWidth <= m.clientWidth, `${where}: #${m.id} overflows (${m.scrollWidth} > ${m.clientWidth})`);
    for (const o of m.options)
      assert.ok(o.width <= m.room + 0.5, `${where}: #${m.id}'s "${o.text}" needs ${o.width.toFixed(1)} px, has ${m.room.toFixed(1)}`);
    assert.ok(m.box.left >= m.clip.left - 0.5 && m.box.right <= m.clip.right + 0.5,
              `${where}: #${m.id} (${m.box.left}..${m.box.right}) is cut off by ${m.clip.left}..${m.clip.right}`);
  }
}

/* In the page: every seat of the rows named, as drawn. The text's width is measured in the
   seat's own font; its colour must not be transparent. */
function seatsDrawn(rows) {
  const canvas = document.createElement("canvas").getContext("2d");
  const out = [];
  for (const row of rows) {
    for (const el of document.querySelectorAll(`#sections [data-seat^="${row}-"]`)) {
      const cs = getComputedStyle(el);
      canvas.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
      const r = el.getBoundingClientRect();
      out.push({
        id: el.dataset.seat, status: el.dataset.status, text: el.textContent,
        width: r.width, height: r.height, fontSize: parseFloat(cs.fontSize),
        textWidth: canvas.measureText(el.textContent).width,
        scrollWidth: el.scrollWidth, clientWidth: el.clientWidth,
        transparent: /^transparent$|rgba\(.*,\s*0\)$/.test(cs.color),
      });
    }
  }
  return out;
}

/* ---------- tests ---------- */

before(async () => {
  session = await openSession("pages");
  ({ base, browser } = session);
  const created = await call("POST", "/v1/events", {
    id: EVENT, name: "Wide rows", currency: "USD",
    sections: [
      { id: "FLOOR", price: 6500, rows: [{ id: "A", seats: 50 }, { id: "B", seats: 100 }, { id: "C", seats: 16 }] },
      { id: "BALC", price: 3000, rows: [{ id: "A", seats: 24 }] },
    ],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  // A held and a sold seat in each wide row (their numbers must show too), and a few holds and
  // orders for the staff tab to list.
  for (const [user, seats, buy] of [["ana", ["FLOOR-A-1", "FLOOR-A-2"], false], ["ben", ["FLOOR-A-49", "FLOOR-A-50"], true],
                                    ["cleo", ["FLOOR-B-99", "FLOOR-B-100"], false], ["dev", ["FLOOR-B-1"], true]]) {
    const hold = await call("POST", `/v1/events/${EVENT}/holds`, { user_id: user, seats });
    assert.equal(hold.status, 201, JSON.stringify(hold.body));
    if (buy) assert.equal((await call("POST", `/v1/holds/${hold.body.reservation_id}/commit`, { user_id: user, payment_ref: `pi_${user}` })).status, 200);
  }
});

after(async () => {
  if (session) await closeSession(session);
});

describe("the staff tab at 1280 and 390 px", () => {
  for (const width of WIDTHS) {
    it(`shows every menu's text whole at ${width} px`, async () => {
      const page = await openMap(width);
      await page.click("#tab-staff");
      await page.waitForSelector("#staff-panel:not([hidden])");
      await page.waitForFunction(() => document.querySelectorAll("#staff-holds-body tr").length === 2
                                        && document.querySelectorAll("#staff-orders-body tr").length === 2, null, { timeout: 10000 });
      const where = `${width} px`;
      assertMenusWhole(await page.evaluate(menusFit, "#staff-panel"), where);
      // Every choice, once chosen, shows whole too (the lists are read again for it).
      for (const id of ["staff-holds-status", "staff-orders-status"]) {
        for (const value of await page.locator(`#${id} option`).evaluateAll((os) => os.map((o) => o.value))) {
          await page.selectOption(`#${id}`, value);
          const menu = (await page.evaluate(menusFit, "#staff-panel")).find((m) => m.id === id);
          const shown = menu.options.find((o) => o.text === menu.shown);
          assert.ok(shown.width <= menu.room + 0.5, `${where}: #${id} showing "${shown.text}" is cut`);
        }
      }
      await page.selectOption("#staff-holds-status", "held");
      await page.selectOption("#staff-orders-status", "");
      await page.waitForFunction(() => document.querySelectorAll("#staff-holds-body tr").length === 2, null, { timeout: 10000 });
      // The page itself never scrolls sideways: a wide table scrolls inside its card.
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
                `${where}: the staff tab is wider than the window`);
      // The menu of the map's side panel (best available's section), too.
      await page.click("#tab-map");
      assertMenusWhole(await page.evaluate(menusFit, ".side-panel"), `${where}, seat map`, 1);
      await page.click("#tab-staff");
      await page.waitForSelector("#staff-panel:not([hidden])");
      await shot(page, `staff-${width}.png`);
      assert.deepEqual(page.errors, []);
      await page.context().close();
    });
  }
});

describe("a 50-seat and a 100-seat row at 1280 and 390 px", () => {
  for (const width of WIDTHS) {
    it(`draws every seat with its number readable at ${width} px`, async () => {
      const page = await openMap(width);
      const seats = await page.evaluate(seatsDrawn, ["FLOOR-A", "FLOOR-B"]);
      assert.equal(seats.length, 150);
      const where = `${width} px`;
      for (const s of seats) {
        const number = s.id.split("-")[2];
        assert.equal(s.text, number, `${where}: ${s.id} shows its number`);
        assert.ok(s.width >= 16 && s.height >= 16, `${where}: ${s.id} is ${s.width}×${s.height} px`);
        assert.ok(s.fontSize >= 8, `${where}: ${s.id}'s number is ${s.fontSize} px`);
        assert.ok(s.textWidth <= s.clientWidth && s.scrollWidth <= s.clientWidth, `${where}: ${s.id}'s number is clipped`);
        assert.ok(!s.transparent, `${where}: ${s.id} (${s.status}) hides its number`);
      }
      assert.deepEqual(seats.filter((s) => s.status !== "available").map((s) => s.id).sort(),
                       ["FLOOR-A-1", "FLOOR-A-2", "FLOOR-A-49", "FLOOR-A-50", "FLOOR-B-1", "FLOOR-B-100", "FLOOR-B-99"].sort());
      // Too wide for the window: the rows scroll sideways inside the map, the page does not.
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
                `${where}: the page is wider than the window`);
      const scroll = await page.evaluate(() => {
        const block = document.querySelector('#sections [data-section="FLOOR"]');
        const scroller = [block, ...block.querySelectorAll("*")].find((el) => /auto|scroll/.test(getComputedStyle(el).overflowX));
        return scroller ? { scrollWidth: scroller.scrollWidth, clientWidth: scroller.clientWidth } : null;
      });
      assert.ok(scroll && scroll.scrollWidth > scroll.clientWidth, `${where}: the 100-seat row scrolls sideways`);
      // As it first shows: the middle of each wide section.
      await shot(page, `seatmap-wide-${width}.png`);
      // The seats at both ends of the widest row can be reached and picked.
      for (const id of ["FLOOR-B-2", "FLOOR-B-98"]) {
        const el = page.locator(`#sections [data-seat="${id}"]`);
        await el.click();
        assert.match(await el.getAttribute("class"), /\bsel\b/, `${where}: ${id} picked`);
      }
      await page.click("#clear-btn");
      assert.deepEqual(page.errors, []);
      await page.context().close();
    });
  }
});

describe("an unknown event", () => {
  for (const width of WIDTHS) {
    it(`says there is no such event, with no booking form and no Offline badge, at ${width} px`, async () => {
      const page = await openPage(width, "/ui/events/nope");
      const message = page.locator("#missing");
      await message.waitFor({ state: "visible", timeout: 10000 });
      assert.match(await message.innerText(), /no such event/i);
      assert.match(await message.innerText(), /nope/);
      const back = message.locator('a[href="/"]');
      assert.equal(await back.count(), 1, "a link back to the list of events");
      assert.match(await back.innerText(), /events/i);
      // Nothing to book.
      for (const form of ["#map", "#hold-btn", "#best-form", "#user-id", ".side-panel", "#staff-tabs"])
        assert.equal(await page.locator(form).first().isVisible(), false, `${width} px: ${form} is shown`);
      // The server answered: the badge does not say Offline, now or a little later (no retry
      // turns it so).
      await sleep(1500);
      const live = page.locator("#live");
      assert.ok(!(await live.isVisible()) || !/offline/i.test(await live.innerText()), `${width} px: the badge says Offline`);
      assert.notEqual(await live.getAttribute("data-state"), "down");
      assert.equal(await page.title(), "No such event · Holdfast box office");
      await shot(page, `unknown-event-${width}.png`);
      assert.deepEqual(page.errors, []);
      await page.context().close();
    });
  }

  it("says Offline when the server cannot be reached, and not that the event is unknown", async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    await page.route("**/v1/events/gone", (route) => route.abort("connectionrefused"));
    await page.goto(base + "/ui/events/gone");
    await page.waitForSelector("#live[data-state='down']", { timeout: 10000 });
    assert.equal(await page.locator("#live").innerText(), "Offline");
    assert.match(await page.locator("#map-status").innerText(), /cannot be reached/);
    assert.equal(await page.locator("#missing").isVisible(), false);
    // It tries again: once the server answers, the event's 404 is said plainly.
    await page.unroute("**/v1/events/gone");
    await page.locator("#missing").waitFor({ state: "visible", timeout: 10000 });
    assert.notEqual(await page.locator("#live").getAttribute("data-state"), "down");
    await ctx.close();
  });
});

describe("a server that stops", () => {
  let own = null;
  after(async () => { if (own) await own.stop(); });

  it("turns a loaded map's badge to Offline", { skip: !!process.env.HOLDFAST_BASE_URL }, async () => {
    own = await startServer("pages-offline");
    const made = await callAt(own.base, "POST", "/v1/events",
      { id: "short", sections: [{ id: "A", price: 100, rows: [{ id: "1", seats: 8 }] }] });
    assert.equal(made.status, 201);
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    await page.goto(own.base + "/ui/events/short");
    await page.waitForSelector("#live[data-state='live']", { timeout: 10000 });
    await own.stop();
    own = null;
    // The stream is lost, the page waits 5 s for it, then reads the event and fails.
    await page.waitForSelector("#live[data-state='down']", { timeout: 20000 });
    assert.equal(await page.locator("#live").innerText(), "Offline");
    await ctx.close();
  });
});
