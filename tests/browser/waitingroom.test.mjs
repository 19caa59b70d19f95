// Browser test of the waiting room on the box-office page (API.md sections 6 and 10), against
// the REAL server: no answer is mocked. Debian's chromium is driven by playwright-core; the test
// starts its own server:
//   HOLDFAST_BINARY (default build/holdfast) serve --listen 127.0.0.1:PORT --data TMPDIR
// Run from the repository root:  node --test tests/browser/
// HOLDFAST_BASE_URL=http://host:port runs against a server that is already up instead.
// Saves a screenshot of the waiting card to build/waiting-room.png (beside HOLDFAST_SCREENSHOT
// when that is set); `make screenshots` copies it to docs/.

import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { rmSync, statSync } from "node:fs";
import path from "node:path";
import { root, VIEWPORT, sleep, call as callAt, openSession, closeSession } from "./common.mjs";

// Under build/ (ignored by git), so a test run leaves the tree as it found it.
const SHOTS = process.env.HOLDFAST_SCREENSHOT ? path.dirname(process.env.HOLDFAST_SCREENSHOT) : path.join(root, "build");
const SCREENSHOT = path.join(SHOTS, "waiting-room.png");

// The room of the main test: two admissions a second, so the people who joined ahead of the
// visitor go in over a few seconds while the page polls (every 2 s) and the place visibly falls.
const ADMIT_PER_S = 2;
const AHEAD = 10;
// A run against a server that is already up may find the events of an earlier run.
const SUFFIX = process.env.HOLDFAST_BASE_URL ? "_" + Date.now().toString(36) : "";

let base = "";
let session = null;
let browser = null;

/* ---------- helpers ---------- */

/* Wait until fn() gives something (the page's answers are noted as they arrive). */
async function until(fn, what, ms = 10000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    assert.ok(Date.now() < deadline, "timed out waiting for " + what);
    await sleep(20);
  }
}

const call = (method, p, body) => callAt(base, method, p, body);

/* An event with a waiting room; fails clearly when the server has none (section 6). */
async function createRoomEvent(id, room) {
  const created = await call("POST", "/v1/events", {
    id, name: "Midnight flash sale", currency: "USD", hold_ttl_s: 300,
    sections: [{ id: "FLOOR", price: 45000, rows: [{ id: "A", seats: 16 }, { id: "B", seats: 16 }] }],
    waiting_room: Object.assign({ enabled: true, token_ttl_s: 600, abandon_after_s: 120 }, room),
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const summary = (await call("GET", `/v1/events/${id}`)).body;
  assert.equal(summary.waiting_room && summary.waiting_room.enabled, true,
               "the server shows no waiting room on an event created with one (API.md section 6): " + JSON.stringify(summary.waiting_room));
  return summary;
}

/* One user joins through the API and is let in (an idle room admits the first at once; the
   admission follows the join's answer, which says waiting): the next to join waits. */
async function joinAndEnter(eventId, user) {
  const joined = await call("POST", `/v1/events/${eventId}/queue`, { user_id: user });
  assert.equal(joined.status, 201, JSON.stringify(joined.body));
  const deadline = Date.now() + 5000;
  for (;;) {
    const t = await call("GET", `/v1/events/${eventId}/queue/${joined.body.ticket}`);
    if (t.body.status === "admitted") return t.body;
    assert.equal(t.body.status, "waiting", JSON.stringify(t.body));
    assert.ok(Date.now() < deadline, `${user} was not let into an idle room within 5 s`);
    await sleep(20);
  }
}

async function openMap(context, eventId, user) {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.errors = errors;
  // Every answer of the room's routes and every hold the page sends, as the server gave them.
  page.queueAnswers = [];
  page.holdBodies = [];
  page.on("response", async (res) => {
    const url = new URL(res.url());
    if (!url.pathname.startsWith(`/v1/events/${eventId}/`)) return;
    const req = res.request();
    if (/\/queue(\/[^/]+(\/complete)?)?$/.test(url.pathname)) {
      let body = null;
      try { body = await res.json(); } catch { /* empty */ }
      page.queueAnswers.push({ method: req.method(), path: url.pathname, status: res.status(), body, at: Date.now() });
    } else if (/\/holds$/.test(url.pathname) && req.method() === "POST") {
      page.holdBodies.push({ body: JSON.parse(req.postData() || "{}"), status: res.status() });
    }
  });
  await page.goto(`${base}/ui/events/${encodeURIComponent(eventId)}`);
  await page.waitForSelector("#map[aria-busy='false']", { timeout: 30000 });
  if (user) {
    await page.fill("#user-id", user);
    // The page reads the user's saved place 600 ms after the last keystroke.
    await page.waitForTimeout(800);
  }
  return page;
}

/* The server's answer to the next hold the page sends. */
const holdAnswer = (page) => page.waitForResponse((res) => /\/holds$/.test(new URL(res.url()).pathname) && res.request().method() === "POST");
const seat = (page, id) => page.locator(`[data-seat="${id}"]`).first();
const notice = (page) => page.locator("#notice").innerText();

/* The JWT's parts, decoded (API.md section 6: HS256, claims sub, evt, iat, exp, jti). */
function decodeToken(token) {
  const parts = token.split(".");
  assert.equal(parts.length, 3, "a JWT has three parts: " + token);
  const part = (s) => JSON.parse(Buffer.from(s, "base64url").toString("utf8"));
  return { header: part(parts[0]), claims: part(parts[1]) };
}

/* In the page: note every change of the waiting card (place, bar, expected wait), so the test
   sees each step the visitor saw, however briefly it was shown. */
function recordQueueCard() {
  window.queueSeen = [];
  const note = () => {
    const pos = document.querySelector("#queue-position");
    const bar = document.querySelector("#queue-progress");
    const fill = document.querySelector("#queue-progress-fill");
    const wait = document.querySelector("#queue-wait");
    const card = document.querySelector("#queue-card");
    const entry = {
      state: card.dataset.state,
      position: pos ? pos.textContent : null,
      progress: bar ? Number(bar.getAttribute("aria-valuenow")) : null,
      width: fill ? fill.style.width : null,
      wait: wait ? wait.textContent : null,
    };
    const last = window.queueSeen[window.queueSeen.length - 1];
    if (!last || JSON.stringify(last) !== JSON.stringify(entry)) window.queueSeen.push(entry);
  };
  new MutationObserver(note).observe(document.querySelector("#queue-card"),
    { subtree: true, childList: true, characterData: true, attributes: true });
}

/* ---------- tests ---------- */

before(async () => {
  session = await openSession("queue");
  ({ base, browser } = session);
});

after(async () => {
  if (session) await closeSession(session);
});

describe("the waiting room on the box-office page (real server)", () => {
  it("a visitor waits in line, moves up, is let in, buys with the token, and the ticket is completed", async () => {
    const EVENT = "flash" + SUFFIX, USER = "visitor";
    rmSync(SCREENSHOT, { force: true });
    await createRoomEvent(EVENT, { admit_per_s: ADMIT_PER_S });
    const ctx = await browser.newContext({ viewport: VIEWPORT, locale: "en-US" });
    const page = await openMap(ctx, EVENT, USER);

    // An event with a room: the card invites the visitor into the line before any hold.
    await page.waitForSelector("#queue-card:not([hidden])[data-state='none'] #queue-join");
    assert.match(await page.locator("#queue-card").innerText(), /Join the queue to hold seats/);

    // Others joined just before (through the API), so the visitor really waits.
    const ahead = [];
    for (let i = 1; i <= AHEAD; i++) {
      const joined = await call("POST", `/v1/events/${EVENT}/queue`, { user_id: `early${i}` });
      assert.equal(joined.status, 201, JSON.stringify(joined.body));
      assert.match(joined.body.ticket, /^q_/);
      assert.ok(["waiting", "admitted"].includes(joined.body.status), JSON.stringify(joined.body));
      ahead.push(joined.body);
    }
    await page.evaluate(recordQueueCard);
    await page.click("#queue-join");

    // The join's answer is what the card shows first.
    await page.waitForFunction(() => /#\d/.test(document.querySelector("#queue-position")?.textContent || ""));
    const join = await until(() => page.queueAnswers.find((a) => a.method === "POST" && a.path === `/v1/events/${EVENT}/queue`),
                             "the page's join");
    assert.equal(join.status, 201, JSON.stringify(join.body));
    assert.equal(join.body.status, "waiting", "the visitor joined behind " + AHEAD + " others: " + JSON.stringify(join.body));
    assert.ok(join.body.position >= 3, "several people ahead when the visitor joined: " + JSON.stringify(join.body));
    assert.equal(typeof join.body.estimated_wait_s, "number");
    const ticket = join.body.ticket;
    assert.match(ticket, /^q_/);
    assert.ok(!ahead.some((t) => t.ticket === ticket), "a ticket of its own");

    // Once the place has fallen at least once, the card is photographed: the place, the bar
    // part of the way, the expected wait.
    await page.waitForFunction((first) => {
      const text = document.querySelector("#queue-position")?.textContent || "";
      const n = Number(text.replace(/[^\d]/g, ""));
      return n > 0 && n < first;
    }, join.body.position, { timeout: 20000 });
    await page.waitForTimeout(900);              // the bar's slide (0.8 s) has ended
    const card = page.locator("#queue-card");
    if (await card.getAttribute("data-state") === "waiting") {
      const [place, ahead] = await page.evaluate(() => [document.querySelector("#queue-position").textContent,
                                                          document.querySelector("#queue-ahead").textContent]);
      const n = Number(place.replace(/[^\d]/g, ""));
      assert.equal(ahead, n === 1 ? "You are next." : n === 2 ? "1 person ahead of you" : `${n - 1} people ahead of you`);
      const box = await card.boundingBox();
      const margin = 12;
      await page.screenshot({ path: SCREENSHOT, clip: { x: box.x - margin, y: box.y - margin,
                                                        width: box.width + 2 * margin, height: box.height + 2 * margin } });
    }

    // Admitted: the card says so and shows how long the pass lasts.
    await page.waitForSelector("#queue-card[data-state='admitted'] #queue-left", { timeout: 30000 });
    assert.match(await page.locator("#queue-left").innerText(), /^(10|09):\d\d$/, "token_ttl_s 600 → about 10:00 left");
    assert.match(await notice(page), /You're in/);

    // What the visitor saw: the place only fell, the bar only grew (and moved), the expected
    // wait only fell (and moved), and every place shown was one the server answered.
    const seen = await page.evaluate(() => window.queueSeen);
    const waiting = seen.filter((e) => e.state === "waiting" && /#\d/.test(e.position || ""));
    const places = [...new Set(waiting.map((e) => Number(e.position.replace(/[^\d]/g, ""))))];
    assert.ok(places.length >= 2, "the place was seen falling: " + JSON.stringify(seen));
    for (let i = 1; i < places.length; i++) assert.ok(places[i] < places[i - 1], "the place never grows: " + places.join(" → "));
    assert.equal(places[0], join.body.position);
    const answered = new Set(page.queueAnswers.filter((a) => a.body && a.body.ticket === ticket && typeof a.body.position === "number")
                                              .map((a) => a.body.position));
    for (const p of places) assert.ok(answered.has(p), `#${p} was answered by the server (${[...answered].join(", ")})`);
    const progress = waiting.map((e) => e.progress);
    for (let i = 1; i < progress.length; i++) assert.ok(progress[i] >= progress[i - 1], "the bar never goes back: " + progress.join(", "));
    assert.equal(progress[0], 0, "the bar starts empty where the visitor joined");
    assert.ok(progress.at(-1) > 0, "the bar moved: " + progress.join(", "));
    assert.equal(waiting.at(-1).width, progress.at(-1) + "%", "the bar is drawn as wide as it says");
    const waits = waiting.map((e) => e.wait).filter((w) => /Estimated wait/.test(w || ""));
    assert.ok(waits.length >= 2, "the expected wait is shown: " + JSON.stringify(waits));
    const secondsOf = (w) => (/any moment/.test(w) ? 0 : /min/.test(w) ? 60 * Number(w.match(/(\d+)/)[1])
                            : /h\.$/.test(w) ? 3600 * Number(w.match(/([\d.]+)/)[1]) : Number(w.match(/(\d+)/)[1]));
    const waitSeconds = [...new Set(waits)].map(secondsOf);
    for (let i = 1; i < waitSeconds.length; i++) assert.ok(waitSeconds[i] <= waitSeconds[i - 1], "the expected wait falls: " + waits.join(" / "));
    assert.ok(waitSeconds.at(-1) < waitSeconds[0], "the expected wait fell: " + waits.join(" / "));
    const admittedSeen = seen.find((e) => e.state === "admitted" && e.progress === 100);
    assert.ok(admittedSeen, "the bar is full once admitted");

    // Polled every couple of seconds, well inside abandon_after_s.
    const polls = page.queueAnswers.filter((a) => a.method === "GET" && a.path.endsWith("/queue/" + ticket));
    assert.ok(polls.length >= 2, "the page polled the ticket: " + polls.length);
    for (let i = 1; i < polls.length; i++) {
      const gap = polls[i].at - polls[i - 1].at;
      assert.ok(gap >= 1000 && gap <= 6000, "a poll every couple of seconds: " + gap + " ms");
    }

    // The token: the one the server answered, a JWT for this user, event and ticket.
    const admitted = polls.map((p) => p.body).find((b) => b && b.status === "admitted");
    assert.ok(admitted && admitted.admission_token, "admitted with a token: " + JSON.stringify(polls.at(-1)));
    const token = admitted.admission_token;
    const { header, claims } = decodeToken(token);
    assert.equal(header.alg, "HS256");
    assert.equal(claims.sub, USER);
    assert.equal(claims.evt, EVENT);
    assert.equal(claims.jti, ticket);
    assert.equal(new Date(claims.exp * 1000).toISOString(), new Date(Date.parse(admitted.expires_at)).toISOString());

    // A hold without the token is refused by the server (through the API) ...
    const bare = await call("POST", `/v1/events/${EVENT}/holds`, { user_id: USER, seats: ["FLOOR-B-1"] });
    assert.equal(bare.status, 403, JSON.stringify(bare.body));
    assert.equal(bare.body.error.code, "admission_required");
    // ... and so is the token for another user.
    const other = await call("POST", `/v1/events/${EVENT}/holds`, { user_id: "someone_else", seats: ["FLOOR-B-1"], admission_token: token });
    assert.equal(other.status, 403, JSON.stringify(other.body));
    assert.equal(other.body.error.code, "admission_invalid");

    // The visitor holds two seats on the page: the hold carries the token and succeeds.
    await seat(page, "FLOOR-A-8").click();
    await seat(page, "FLOOR-A-9").click();
    await page.click("#hold-btn");
    const hold = page.locator(".hold[data-state='held']");
    await hold.waitFor({ timeout: 10000 });
    assert.equal(page.holdBodies.length, 1);
    assert.equal(page.holdBodies[0].status, 201);
    assert.equal(page.holdBodies[0].body.admission_token, token);
    const holdId = await hold.getAttribute("data-hold");
    const held = await call("GET", `/v1/holds/${holdId}`);
    assert.equal(held.body.status, "held");
    assert.deepEqual(held.body.seats, ["FLOOR-A-8", "FLOOR-A-9"]);
    assert.equal(held.body.user_id, USER);

    // Buying: the commit, then the page completes the ticket.
    const completed = page.waitForResponse((res) => res.url().endsWith(`/queue/${ticket}/complete`) && res.request().method() === "POST");
    await hold.locator(".commit-btn").click();
    await page.waitForFunction(() => /confirmed/.test(document.querySelector("#notice").textContent));
    assert.equal((await completed).status(), 200);
    await page.waitForSelector("#queue-card[data-state='none']");
    assert.match(await page.locator("#queue-card").innerText(), /Your purchase is done/);
    assert.equal((await call("GET", `/v1/holds/${holdId}`)).body.status, "confirmed");
    // The completed ticket's token stops working at once.
    const after = await call("POST", `/v1/events/${EVENT}/holds`, { user_id: USER, seats: ["FLOOR-B-2"], admission_token: token });
    assert.equal(after.status, 403, JSON.stringify(after.body));
    assert.equal(after.body.error.code, "admission_invalid");
    assert.deepEqual(page.errors, []);
    await ctx.close();
    assert.ok(statSync(SCREENSHOT).size > 1000, "the waiting card's screenshot was written");
  });

  it("counts the pass down on the server's clock when the browser's is 20 minutes off", async () => {
    // The pass's expires_at is the server's instant: the page takes its clock's skew from the
    // Date of the room's answers (API.md section 1), so a browser clock 20 minutes ahead
    // neither sees a fresh pass as expired nor withholds it from a hold, and one 20 minutes
    // behind does not count 30 minutes down for a 10-minute pass.
    const SHIFT_MS = 20 * 60 * 1000;
    for (const [shift, name] of [[SHIFT_MS, "ahead"], [-SHIFT_MS, "behind"]]) {
      const EVENT = "skewed_" + name + SUFFIX, USER = "skewed_" + name;
      await createRoomEvent(EVENT, { admit_per_s: 20, token_ttl_s: 600 });
      const ctx = await browser.newContext({ viewport: VIEWPORT });
      await ctx.addInitScript((offset) => {
        const RealDate = Date;
        class ShiftedDate extends RealDate {
          constructor(...args) { if (args.length === 0) super(RealDate.now() + offset); else super(...args); }
          static now() { return RealDate.now() + offset; }
        }
        window.Date = ShiftedDate;
      }, shift);
      const page = await openMap(ctx, EVENT, USER);
      const pageSkew = await page.evaluate(() => Date.now()) - Date.now();
      assert.ok(Math.abs(pageSkew - shift) < 5000, `the page's clock is ${name} by ${pageSkew} ms`);
      await page.click("#queue-join");
      await page.waitForSelector("#queue-card[data-state='admitted'] #queue-left", { timeout: 15000 });
      const left = await page.locator("#queue-left").innerText();
      const [m, sec] = left.split(":").map(Number);
      assert.ok(m * 60 + sec >= 590 && m * 60 + sec <= 600,
                `a clock ${name} by 20 min: ${left} left of a 10-minute pass, expected about 10:00`);
      await seat(page, "FLOOR-A-3").click();
      const answer = holdAnswer(page);
      await page.click("#hold-btn");
      assert.equal((await answer).status(), 201, `a clock ${name}: the hold with the pass`);
      assert.match(page.holdBodies.at(-1).body.admission_token || "", /^[\w-]+\.[\w-]+\.[\w-]+$/,
                   `a clock ${name}: the hold carried the pass`);
      assert.equal(await page.locator("#queue-card").getAttribute("data-state"), "admitted");
      assert.deepEqual(page.errors, []);
      await ctx.close();
    }
  });

  it("a visitor outside the line is refused a hold, and can leave the line", async () => {
    const EVENT = "walkin" + SUFFIX, USER = "walk_in";
    // One admission every 20 s: the line stands still while the visitor is in it.
    await createRoomEvent(EVENT, { admit_per_s: 0.05 });
    await joinAndEnter(EVENT, "first");
    assert.equal((await call("POST", `/v1/events/${EVENT}/queue`, { user_id: "second" })).status, 201);
    const ctx = await browser.newContext({ viewport: VIEWPORT });
    const page = await openMap(ctx, EVENT, USER);
    // Holding without joining: the server refuses (403 admission_required), the page says why.
    await seat(page, "FLOOR-A-3").click();
    const refused = holdAnswer(page);
    await page.click("#hold-btn");
    assert.equal((await refused).status(), 403);
    await page.waitForFunction(() => !document.querySelector("#notice").hidden);
    assert.equal(await notice(page), "This event has a waiting room: join the queue, and hold seats when it is your turn.");
    assert.equal(page.holdBodies.length, 1);
    assert.equal(page.holdBodies[0].status, 403);
    assert.equal(page.holdBodies[0].body.admission_token, undefined);
    await page.waitForSelector("#queue-card:not([hidden]) #queue-join");
    assert.equal((await call("GET", `/v1/events/${EVENT}/seats/FLOOR-A-3`)).body.status, "available");

    // Joining; holding while waiting is refused with a sentence that says so.
    await page.click("#queue-join");
    await page.waitForSelector("#queue-card[data-state='waiting'] #queue-leave");
    const join = await until(() => page.queueAnswers.find((a) => a.method === "POST"), "the page's join");
    assert.equal(join.status, 201);
    assert.equal(join.body.status, "waiting");
    assert.ok(join.body.position >= 1);
    const answer = holdAnswer(page);
    await page.click("#hold-btn");
    assert.equal((await answer).status(), 403);
    await page.waitForFunction(() => /still in the waiting room/.test(document.querySelector("#notice").textContent));

    // A reload keeps the place: the same ticket, polled again at once, no second join.
    page.queueAnswers.length = 0;
    await page.reload();
    await page.waitForSelector("#map[aria-busy='false']");
    await page.waitForSelector("#queue-card[data-state='waiting'] #queue-leave");
    const again = await until(() => page.queueAnswers.find((a) => a.method === "GET"), "a poll after the reload");
    assert.equal(again.path, `/v1/events/${EVENT}/queue/${join.body.ticket}`);
    assert.equal(again.body.position, join.body.position);
    assert.equal(await page.locator("#queue-position").innerText(), "#" + join.body.position);
    assert.equal(page.queueAnswers.filter((a) => a.method === "POST").length, 0, "no second join");

    // Leaving the line completes the ticket: the server drops it from the line.
    const left = page.waitForResponse((res) => res.url().endsWith(`/queue/${join.body.ticket}/complete`));
    await page.click("#queue-leave");
    assert.equal((await left).status(), 200);
    await page.waitForSelector("#queue-card[data-state='none']");
    assert.match(await page.locator("#queue-card").innerText(), /You left the line/);
    const polled = await call("GET", `/v1/events/${EVENT}/queue/${join.body.ticket}`);
    assert.ok(polled.status === 404 || polled.body.status !== "waiting", "no longer waiting: " + JSON.stringify(polled.body));
    // The place the visitor left is taken by the next one to join: nobody counts them any more.
    const joinedAgain = await call("POST", `/v1/events/${EVENT}/queue`, { user_id: "another" });
    assert.equal(joinedAgain.status, 201, JSON.stringify(joinedAgain.body));
    assert.equal(joinedAgain.body.position, join.body.position, JSON.stringify(joinedAgain.body));
    assert.deepEqual(page.errors, []);
    await ctx.close();
  });

  it("polls often enough to keep the place in a room that drops tickets after 2 s", async () => {
    const EVENT = "brisk" + SUFFIX;
    await createRoomEvent(EVENT, { admit_per_s: 0.05, abandon_after_s: 2 });
    // The first to join an idle room goes in at once; the second waits and is never polled.
    await joinAndEnter(EVENT, "first");
    const joined = await call("POST", `/v1/events/${EVENT}/queue`, { user_id: "silent" });
    assert.equal(joined.status, 201);
    assert.equal(joined.body.status, "waiting", JSON.stringify(joined.body));
    const silent = joined.body;
    const ctx = await browser.newContext({ viewport: VIEWPORT });
    const page = await openMap(ctx, EVENT, "keeper");
    await page.click("#queue-join");
    const join = await until(() => page.queueAnswers.find((a) => a.method === "POST"), "the page's join");
    assert.equal(join.body.status, "waiting", JSON.stringify(join.body));
    await page.waitForTimeout(5000);
    // The silent one was dropped (not polled for 2 s) and the visitor moved up; the visitor,
    // polled every half second, is still waiting.
    const dropped = await call("GET", `/v1/events/${EVENT}/queue/${silent.ticket}`);
    assert.equal(dropped.body.status, "abandoned", JSON.stringify(dropped.body));
    const polls = page.queueAnswers.filter((a) => a.method === "GET");
    assert.ok(polls.length >= 6, "polled about twice a second: " + polls.length);
    for (let i = 1; i < polls.length; i++) assert.ok(polls[i].at - polls[i - 1].at <= 1000, "polls well inside abandon_after_s");
    assert.ok(polls.every((a) => a.status === 200 && a.body.status === "waiting"), JSON.stringify(polls.map((a) => a.body)));
    assert.equal(polls.at(-1).body.position, 1);
    assert.equal(await page.locator("#queue-card").getAttribute("data-state"), "waiting");
    assert.equal(await page.locator("#queue-position").innerText(), "#1");
    assert.deepEqual(page.errors, []);
    await ctx.close();
  });

  it("says so when the line is full (429 waiting_room_full)", async () => {
    const EVENT = "full" + SUFFIX;
    // One waiting user at most: the first to join an idle room goes in at once, the second
    // waits, and the line is full.
    await createRoomEvent(EVENT, { admit_per_s: 0.05, max_waiting: 1 });
    await joinAndEnter(EVENT, "first");
    assert.equal((await call("POST", `/v1/events/${EVENT}/queue`, { user_id: "second" })).status, 201);
    const ctx = await browser.newContext({ viewport: VIEWPORT });
    const page = await openMap(ctx, EVENT, "third");
    const answer = page.waitForResponse((res) => new URL(res.url()).pathname === `/v1/events/${EVENT}/queue`);
    await page.click("#queue-join");
    const full = await answer;
    assert.equal(full.status(), 429);
    assert.equal((await full.json()).error.code, "waiting_room_full");
    await page.waitForFunction(() => /full/.test(document.querySelector("#notice").textContent));
    assert.equal(await notice(page), "The waiting room is full right now. Try to join again in a few minutes.");
    assert.equal(await page.locator("#queue-card").getAttribute("data-state"), "none");
    assert.equal(await page.locator("#queue-join").isVisible(), true, "the visitor may try again");
    assert.deepEqual(page.errors, []);
    await ctx.close();
  });

  it("explains a pass the server refuses (invalid, expired) and joins again", async () => {
    const EVENT = "passes" + SUFFIX, USER = "pass_holder";
    // Passes of 5 s: the page polls every 2 s, so it shows the pass for a few seconds before it runs out.
    await createRoomEvent(EVENT, { admit_per_s: 20, token_ttl_s: 5 });
    const ctx = await browser.newContext({ viewport: VIEWPORT });
    const page = await openMap(ctx, EVENT, USER);
    await page.click("#queue-join");
    await page.waitForSelector("#queue-card[data-state='admitted'] #queue-left", { timeout: 15000 });
    const first = (await until(() => page.queueAnswers.find((a) => a.method === "POST"), "the page's join")).body.ticket;

    // The pass runs out on the page's clock: the card says so, and a hold then says why.
    await page.waitForSelector("#queue-card[data-state='expired'] #queue-join", { timeout: 10000 });
    assert.match(await page.locator("#queue-card").innerText(), /Your pass has expired/);
    await seat(page, "FLOOR-A-1").click();
    let answer = holdAnswer(page);
    await page.click("#hold-btn");
    assert.equal((await answer).status(), 403);
    await page.waitForFunction(() => /Join the queue again\.$/.test(document.querySelector("#notice").textContent));
    assert.equal(await notice(page), "Your waiting-room pass has expired. Join the queue again.");
    assert.equal(page.holdBodies.at(-1).body.admission_token, undefined, "no expired pass is sent");

    // A clock behind the server's: the page still believes in the pass and sends it; the
    // server answers 403 admission_expired, and the page says the pass expired.
    const key = `holdfast.queue.${EVENT}.${USER}`;
    const expiredToken = page.queueAnswers.map((a) => a.body).find((b) => b && b.admission_token).admission_token;
    await page.evaluate(([key, token]) => {
      sessionStorage.setItem(key, JSON.stringify({ ticket: "kept", token, expiresAt: new Date(Date.now() + 600000).toISOString(), status: "admitted" }));
    }, [key, expiredToken]);
    await page.reload();
    await page.waitForSelector("#map[aria-busy='false']");
    await page.waitForSelector("#queue-card[data-state='admitted'] #queue-left");
    page.holdBodies.length = 0;
    await seat(page, "FLOOR-A-1").click();
    answer = holdAnswer(page);
    await page.click("#hold-btn");
    assert.equal((await answer).status(), 403);
    await page.waitForFunction(() => !document.querySelector("#notice").hidden && /expired/.test(document.querySelector("#notice").textContent));
    assert.equal(page.holdBodies.length, 1);
    assert.equal(page.holdBodies[0].body.admission_token, expiredToken);
    assert.equal(page.holdBodies[0].status, 403);
    assert.equal(await notice(page), "Your waiting-room pass has expired. Join the queue again.");
    await page.waitForSelector("#queue-card[data-state='expired'] #queue-join");

    // Joining again after the pass expired: a new ticket at the back, admitted again.
    page.queueAnswers.length = 0;
    await page.click("#queue-join");
    await page.waitForSelector("#queue-card[data-state='admitted'] #queue-left", { timeout: 15000 });
    const second = await until(() => page.queueAnswers.find((a) => a.method === "POST"), "the page's second join");
    assert.equal(second.status, 201, JSON.stringify(second.body));
    assert.notEqual(second.body.ticket, first, "a new ticket after the pass expired");

    // A tampered pass (its signature changed): 403 admission_invalid, in words, and the card
    // offers to join again.
    const live = (await until(() => page.queueAnswers.map((a) => a.body).find((b) => b && b.admission_token), "the new pass")).admission_token;
    const tampered = live.slice(0, -2) + (live.slice(-2) === "AA" ? "BB" : "AA");
    await page.evaluate(([key, token, ticket]) => {
      sessionStorage.setItem(key, JSON.stringify({ ticket, token, expiresAt: new Date(Date.now() + 600000).toISOString(), status: "admitted" }));
    }, [key, tampered, second.body.ticket]);
    await page.reload();
    await page.waitForSelector("#map[aria-busy='false']");
    await page.waitForSelector("#queue-card[data-state='admitted'] #queue-left");
    page.holdBodies.length = 0;
    await seat(page, "FLOOR-A-2").click();
    answer = holdAnswer(page);
    await page.click("#hold-btn");
    assert.equal((await answer).status(), 403);
    await page.waitForFunction(() => /not valid/.test(document.querySelector("#notice").textContent));
    assert.equal(page.holdBodies[0].body.admission_token, tampered);
    assert.equal(page.holdBodies[0].status, 403);
    await page.waitForSelector("#queue-card[data-state='none'] #queue-join");
    assert.match(await page.locator("#queue-card").innerText(), /Your pass was not accepted/);
    assert.equal((await call("GET", `/v1/events/${EVENT}/seats/FLOOR-A-2`)).body.status, "available");
    assert.deepEqual(page.errors, []);
    await ctx.close();
  });
});
