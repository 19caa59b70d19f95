// What the browser tests (seatmap.test.mjs, waitingroom.test.mjs) share: chromium launched
// with the tests' settings, a free port, a server of our own (started, waited for, stopped)
// and a JSON call to it. Not a test file itself (node --test runs only *.test.mjs here).
//   HOLDFAST_BINARY    the server (default build/holdfast, from the repository root)
//   HOLDFAST_CHROMIUM  the browser (default /usr/bin/chromium)
//   HOLDFAST_BASE_URL  a server that is already up, used instead of one of our own

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const { chromium } = createRequire(import.meta.url)("playwright-core");

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

export const CHROMIUM = process.env.HOLDFAST_CHROMIUM || "/usr/bin/chromium";
export const LAUNCH = {
  executablePath: CHROMIUM,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
};
export const VIEWPORT = { width: 1440, height: 900 };

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* A JSON request to the server at base, with the extra headers given (a key, a signature); a
   body given as a string is sent as it is (the text a signature was made of). Returns the
   status, the body (parsed when it is JSON, the text when not) and the headers. */
export async function call(base, method, p, body, headers = {}) {
  const res = await fetch(base + p, {
    method,
    headers: Object.assign(body === undefined ? {} : { "Content-Type": "application/json" }, headers),
    body: body === undefined || typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { json = text; }
  return { status: res.status, body: json, headers: res.headers };
}

/* Starts `HOLDFAST_BINARY serve` on a free port with a fresh data directory named after
   `name` (holdfast-browser-NAME-XXXXXX under the system's temporary directory) and the extra
   arguments `args` (an API key, a webhook secret), and waits for /healthz. Without a key of
   its own the page is tested without one: HOLDFAST_API_KEY is not passed on. The server's
   output is kept in `log`, which the error says when it exits or does not answer within 15 s.
   Returns { base, log, stop() }; stop() ends it (SIGTERM, SIGKILL after 5 s) and removes its
   data directory. */
export async function startServer(name, args = []) {
  const binary = path.resolve(root, process.env.HOLDFAST_BINARY || "build/holdfast");
  assert.ok(existsSync(binary), `no server binary at ${binary}: run make first`);
  const dataDir = mkdtempSync(path.join(tmpdir(), `holdfast-browser-${name}-`));
  const port = await freePort();
  const env = { ...process.env };
  delete env.HOLDFAST_API_KEY;
  const child = spawn(binary, ["serve", "--listen", `127.0.0.1:${port}`, "--data", dataDir, ...args],
                      { env, stdio: ["ignore", "pipe", "pipe"] });
  const server = {
    base: `http://127.0.0.1:${port}`,
    log: "",
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await Promise.race([exited, sleep(5000)]);
        if (child.exitCode === null) child.kill("SIGKILL");
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  child.stdout.on("data", (d) => { server.log += d; });
  child.stderr.on("data", (d) => { server.log += d; });
  const deadline = Date.now() + 15000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await server.stop();
      throw new Error("the server exited at start:\n" + server.log);
    }
    try {
      if ((await fetch(server.base + "/healthz")).status === 200) return server;
    } catch { /* not yet */ }
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error("the server did not answer /healthz within 15 s:\n" + server.log);
    }
    await sleep(50);
  }
}

/* Chromium, and a server of our own named `name` unless HOLDFAST_BASE_URL names one that is
   already up: { base, server (null then), browser }. closeSession ends both. */
export async function openSession(name) {
  assert.ok(existsSync(CHROMIUM), `no browser at ${CHROMIUM}: apt-get install -y chromium`);
  const session = { base: process.env.HOLDFAST_BASE_URL || "", server: null, browser: null };
  if (!session.base) {
    session.server = await startServer(name);
    session.base = session.server.base;
  }
  try {
    session.browser = await chromium.launch(LAUNCH);
  } catch (e) {
    await closeSession(session);
    throw e;
  }
  return session;
}

export async function closeSession(session) {
  if (session.browser) await session.browser.close();
  if (session.server) await session.server.stop();
}
