/* Holdfast box office: helpers shared by the events list and the seat map.
   Plain browser JavaScript, no build step. Exposes one global: Holdfast. */
"use strict";

(function () {
  const KEY_STORE = "holdfast.apiKey";     // sessionStorage: the API key, when the server needs one
  const USER_STORE = "holdfast.userId";    // localStorage: the visitor's user id
  const TOKEN_STORE = "holdfast.userToken"; // sessionStorage: a buyer's user token (API.md 16)

  function storageGet(store, name) {
    try { return store.getItem(name) || ""; } catch (_) { return ""; }
  }
  function storageSet(store, name, value) {
    try {
      if (value) store.setItem(name, value); else store.removeItem(name);
    } catch (_) { /* private mode: keep going without storage */ }
  }

  /* A buyer's page is opened as /ui/events/E#token=TOKEN: the platform signed the token for the
     user it logged in (API.md section 16). The token is kept in this tab and taken out of the
     address at once, so it is neither bookmarked nor shared with a copied link. With it the
     page acts as that user only, and never asks for the API key. */
  (function takeToken() {
    const found = /(?:^#|&)token=([^&]*)/.exec(window.location.hash || "");
    if (!found) return;
    storageSet(window.sessionStorage, TOKEN_STORE, decodeURIComponent(found[1]));
    const rest = window.location.hash.replace(found[0], "").replace(/^#?&?/, "");
    history.replaceState(null, "", window.location.pathname + window.location.search +
                                   (rest ? "#" + rest : ""));
  })();
  const userToken = () => storageGet(window.sessionStorage, TOKEN_STORE);
  /* The user the token names (its sub), read without checking it: the server checks it. */
  function tokenUser() {
    const part = userToken().split(".")[1] || "";
    try {
      const text = atob(part.replace(/-/g, "+").replace(/_/g, "/"));
      const bytes = Uint8Array.from(text, (c) => c.charCodeAt(0));
      const sub = JSON.parse(new TextDecoder().decode(bytes)).sub;
      return typeof sub === "string" ? sub : "";
    } catch (_) {
      return "";
    }
  }

  const apiKey = () => storageGet(window.sessionStorage, KEY_STORE);
  const setApiKey = (k) => storageSet(window.sessionStorage, KEY_STORE, k);
  const userId = () => storageGet(window.localStorage, USER_STORE);
  const setUserId = (u) => storageSet(window.localStorage, USER_STORE, u);

  /* An error answered by the API (or the network), with the contract's fields. */
  class ApiError extends Error {
    constructor(status, body) {
      const e = (body && body.error) || {};
      super(e.message || ("HTTP " + status));
      this.status = status;
      this.code = e.code || (status === 0 ? "network" : "http_" + status);
      this.detail = e;
    }
  }

  /* fetch() a /v1/ route: JSON in, JSON out, Authorization with the buyer's user token when
     the page has one, else the API key when one is set. A 401 calls the registered handler
     (the key prompt, or the buyer's notice) before throwing. `received`, when given, gets the
     answer's Date (the server's clock) and the browser's clock at its arrival. */
  let onUnauthorized = null;
  function api(method, path, body, extraHeaders, received) {
    return call(userToken() || apiKey(), true, method, path, body, extraHeaders, received);
  }

  /* A staff route (the staff views: lists, refunds, history, sales): always the API key, never
     a buyer's token, asked for when it is missing or refused, then tried once more. */
  async function staffApi(method, path, body) {
    try {
      return await call(apiKey(), false, method, path, body);
    } catch (err) {
      if (err.status !== 401) throw err;
      await askForKey(apiKey() ? "That key was refused. Enter the right API key." :
                                 "The staff views need the API key.");
      return call(apiKey(), false, method, path, body);
    }
  }

  /* notify: a 401 calls the page's handler (staffApi asks for the key itself). */
  async function call(credential, notify, method, path, body, extraHeaders, received) {
    const headers = Object.assign({ "Accept": "application/json" }, extraHeaders || {});
    if (credential) headers["Authorization"] = "Bearer " + credential;
    const init = { method, headers, cache: "no-store" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(path, init);
    } catch (err) {
      throw new ApiError(0, { error: { code: "network", message: "The server cannot be reached." } });
    }
    if (received) Object.assign(received, { date: res.headers.get("Date"), at: Date.now() });
    let data = null;
    const text = await res.text();
    if (text) {
      try { data = JSON.parse(text); } catch (_) { data = null; }
    }
    if (!res.ok) {
      if (res.status === 401 && notify && onUnauthorized) onUnauthorized();
      throw new ApiError(res.status, data);
    }
    return data;
  }

  /* URL of an event's stream; EventSource cannot send headers, so the credential (the buyer's
     token, else the key) rides in the query. */
  function streamUrl(eventId) {
    let url = "/v1/events/" + encodeURIComponent(eventId) + "/stream";
    const key = userToken() || apiKey();
    if (key) url += "?access_token=" + encodeURIComponent(key);
    return url;
  }

  /* Money in minor units, formatted for the event's currency. A minor unit is the ISO 4217 one
     (cents for USD; JPY has none, so its amounts are whole yen; KWD has fils, a thousandth).
     Intl's own digits are CLDR's display habit, which differs for a few currencies (IQD: 3 in
     ISO 4217, 0 in CLDR), and would scale or round an amount the buyer pays: the exponent comes
     from this table, and Intl shows exactly that many digits. Every code not listed has 2. */
  const MINOR_DIGITS = {
    BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0,
    UYI: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
    BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
    CLF: 4, UYW: 4,
  };
  const minorDigits = (currency) => (currency in MINOR_DIGITS ? MINOR_DIGITS[currency] : 2);
  const formatters = new Map();
  function money(minor, currency) {
    currency = currency || "USD";
    const digits = minorDigits(currency);
    let f = formatters.get(currency);
    if (!f) {
      const options = { minimumFractionDigits: digits, maximumFractionDigits: digits };
      try {
        f = new Intl.NumberFormat(undefined, Object.assign({ style: "currency", currency }, options));
      } catch (_) {
        f = new Intl.NumberFormat(undefined, options);    // a code Intl refuses: the number alone
      }
      formatters.set(currency, f);
    }
    return f.format(minor / Math.pow(10, digits));
  }

  const integer = new Intl.NumberFormat();
  const count = (n) => integer.format(n || 0);

  /* A small element builder: h("div", {class: "x"}, child, "text"). */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v === null || v === undefined || v === false) continue;
        if (k === "class") el.className = v;
        else if (k === "text") el.textContent = v;
        else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
        else if (k === "dataset") Object.assign(el.dataset, v);
        else if (v === true) el.setAttribute(k, "");
        else el.setAttribute(k, String(v));
      }
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }

  /* A proportional bar of available / held / sold. */
  function countsBar(counts) {
    const a = counts.available || 0, hl = counts.held || 0, s = counts.sold || 0;
    const total = a + hl + s || 1;
    const pct = (n) => (100 * n / total).toFixed(3) + "%";
    return h("div", { class: "bar", role: "img",
                      "aria-label": `${count(a)} available, ${count(hl)} held, ${count(s)} sold` },
      h("span", { class: "bar-sold", style: "width:" + pct(s) }),
      h("span", { class: "bar-held", style: "width:" + pct(hl) }),
      h("span", { class: "bar-available", style: "width:" + pct(a) }));
  }

  /* The API-key prompt: a modal form. Resolves when a key was entered. */
  function askForKey(reason) {
    return new Promise((resolve) => {
      const existing = document.getElementById("key-dialog");
      if (existing) existing.remove();
      const input = h("input", { type: "password", id: "api-key", name: "api-key",
                                 autocomplete: "current-password", required: true,
                                 placeholder: "API key", spellcheck: "false" });
      const form = h("form", { class: "key-form" },
        h("h2", { text: "This box office is locked" }),
        h("p", { text: reason || "Enter the API key to continue. It is kept in this tab only." }),
        h("label", { for: "api-key", class: "field-label", text: "API key" }),
        input,
        h("div", { class: "actions" }, h("button", { type: "submit", class: "btn primary", text: "Unlock" })));
      const dialog = h("div", { id: "key-dialog", class: "modal", role: "dialog", "aria-modal": "true",
                                "aria-labelledby": "key-title" }, form);
      form.querySelector("h2").id = "key-title";
      form.addEventListener("submit", (ev) => {
        ev.preventDefault();
        const k = input.value.trim();
        if (!k) return;
        setApiKey(k);
        dialog.remove();
        resolve(k);
      });
      document.body.append(dialog);
      input.focus();
    });
  }

  window.Holdfast = {
    api, staffApi, ApiError, streamUrl, money, count, h, countsBar, askForKey,
    apiKey, setApiKey, userId, setUserId, userToken, tokenUser,
    set onUnauthorized(fn) { onUnauthorized = fn; },
  };
})();
