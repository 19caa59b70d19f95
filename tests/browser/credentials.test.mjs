// Browser test of the page's credentials (API.md section 16). A buyer's page, opened as
// /ui/events/E#token=TOKEN (a user token minted by `holdfast token mint`), sends the token as
// Bearer on every call and in the stream's query, takes it out of the address, acts as the
// token's user (the user id field is the token's sub, and a hold made without user_id is
// that user's), never asks for the API key, shows no staff tab, and cannot reach a staff route
// (403 forbidden). The staff's page (no token) asks for the API key, and its staff views send
// the key.
// Run from the repository root:  node --test tests/browser/

import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { createRequire } from "node:module";
import { root, call, startServer, LAUNCH } from "./common.mjs";

const { chromium } = createRequire(import.meta.url)("playwright-core");

const KEY = "browser-credentials-key-0123";
const SECRET = "browser-credentials-secret-0123456789";
const EVENT = "cred_page";
const BUYER = "buyer-7";

let server = null;
let browser = null;
const staff = { Authorization: "Bearer " + KEY };

function mint(user) {
  const binary = path.resolve(root, process.env.HOLDFAST_BINARY || "build/holdfast");
  const result = spawnSync(binary, ["token", "mint", "--user", user, "--ttl", "600",
                                    "--user-token-secret", SECRET], { encoding: "utf8" });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout.trim();
}

/* A page of its own, with every Authorization it sends to /v1/ recorded (the stream's query
   credential as "query:VALUE"). */
async function openPage(address) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  page.errors = [];
  page.sent = [];
  page.on("pageerror", (e) => page.errors.push(e.message));
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (!url.pathname.startsWith("/v1/")) return;
    const query = url.searchParams.get("access_token");
    page.sent.push({ path: url.pathname, credential: query !== null ? "query:" + query
                                                                    : request.headers().authorization || "" });
  });
  await page.goto(server.base + address);
  return page;
}

before(async () => {
  server = await startServer("credentials", ["--api-key", KEY, "--user-token-secret", SECRET]);
  browser = await chromium.launch(LAUNCH);
  const created = await call(server.base, "POST", "/v1/events", {
    id: EVENT, sections: [{ id: "A", price: 1000, rows: [{ id: "R", seats: 20 }] }] }, staff);
  assert.equal(created.status, 201, JSON.stringify(created.body));
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.stop();
});

describe("credentials on the box-office page", () => {
  it("a buyer's page acts as the token's user and never asks for the API key", async () => {
    const token = mint(BUYER);
    const page = await openPage(`/ui/events/${EVENT}#token=${token}`);
    await page.waitForSelector("#map[aria-busy='false']", { timeout: 15000 });
    assert.equal(await page.locator("#key-dialog").count(), 0, "no API key prompt");
    assert.ok(!page.url().includes(token), "the token left the address: " + page.url());
    assert.equal(await page.inputValue("#user-id"), BUYER, "the user is the token's sub");
    assert.ok(await page.locator("#user-id").evaluate((el) => el.readOnly), "and cannot be changed");
    assert.ok(await page.locator("#staff-tabs").evaluate((el) => el.hidden), "no staff tab");
    // A hold made by the page's own client, without user_id: the token's user's.
    const hold = await page.evaluate(async (event) =>
      window.Holdfast.api("POST", `/v1/events/${event}/holds`, { seats: ["A-R-1"] }), EVENT);
    assert.equal(hold.user_id, BUYER);
    // A staff route, through the page's client: refused for the token.
    const refused = await page.evaluate(async () => {
      try { await window.Holdfast.api("GET", "/v1/refunds"); return null; }
      catch (e) { return { status: e.status, code: e.code }; }
    });
    assert.deepEqual(refused, { status: 403, code: "forbidden" });
    // Every call carried the token, never the key; the stream took it in its query.
    assert.ok(page.sent.length >= 3, JSON.stringify(page.sent));
    for (const sent of page.sent)
      assert.ok(sent.credential === "Bearer " + token || sent.credential === "query:" + token,
                `${sent.path} sent ${sent.credential.slice(0, 20)}…`);
    assert.ok(page.sent.some((s) => s.path.endsWith("/stream")), "the stream was opened");
    assert.deepEqual(page.errors, []);
  });

  it("a buyer's calendar page acts as the token's user, its stream and holds with the token", async () => {
    const calendar = EVENT + "_cal";
    const created = await call(server.base, "POST", "/v1/calendars", {
      id: calendar, unit: "night", resources: [{ id: "DBL", capacity: 3, price: 100 }] }, staff);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const token = mint(BUYER);
    const page = await openPage(`/ui/calendars/${calendar}#token=${token}`);
    await page.waitForSelector("#grids[aria-busy='false']", { timeout: 15000 });
    await page.waitForSelector("#live[data-state='live']", { timeout: 5000 });
    assert.equal(await page.locator("#key-dialog").count(), 0, "no API key prompt");
    assert.ok(!page.url().includes(token), "the token left the address: " + page.url());
    assert.equal(await page.inputValue("#user-id"), BUYER, "the user is the token's sub");
    const day = (n) => new Date(Date.now() + n * 86400000).toISOString().slice(0, 10);
    const hold = await page.evaluate(async ([cal, from, to]) =>
      window.Holdfast.api("POST", `/v1/calendars/${cal}/holds`,
                          { items: [{ resource: "DBL", from, to }] }), [calendar, day(2), day(4)]);
    assert.equal(hold.user_id, BUYER);
    for (const sent of page.sent)
      assert.ok(sent.credential === "Bearer " + token || sent.credential === "query:" + token,
                `${sent.path} sent ${sent.credential.slice(0, 20)}…`);
    assert.ok(page.sent.some((s) => s.path.endsWith("/stream")), "the stream was opened");
    assert.deepEqual(page.errors, []);
  });

  it("a refused token is said plainly, without asking for the API key", async () => {
    const page = await openPage(`/ui/events/${EVENT}#token=${mint(BUYER)}x`);
    await page.waitForFunction(() => document.getElementById("event-name").textContent === "Sign-in needed",
                               null, { timeout: 15000 });
    assert.equal(await page.locator("#key-dialog").count(), 0, "no API key prompt");
    assert.deepEqual(page.errors, []);
  });

  it("the staff's page asks for the API key and its staff views send it", async () => {
    const page = await openPage(`/ui/events/${EVENT}`);
    await page.waitForSelector("#key-dialog", { timeout: 15000 });
    await page.fill("#api-key", KEY);
    await page.click("#key-dialog button[type=submit]");
    await page.waitForSelector("#map[aria-busy='false']", { timeout: 15000 });
    await page.waitForSelector("#staff-tabs:not([hidden])", { timeout: 15000 });
    await page.click("#tab-staff");
    const isStaff = (s) => /\/(holds|orders|history)$|^\/v1\/refunds/.test(s.path) &&
                           !s.path.startsWith("/v1/users/");
    for (const deadline = Date.now() + 15000; !page.sent.some(isStaff) && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 50));
    const staffCalls = page.sent.filter(isStaff);
    assert.ok(staffCalls.length >= 1, JSON.stringify(page.sent));
    for (const sent of staffCalls) assert.equal(sent.credential, "Bearer " + KEY, sent.path);
    assert.deepEqual(page.errors, []);
  });
});
