// The browser side of the conformance run: loads the installed package through the import map,
// runs tests/js/suite.js against memoryStore() and every configured S3 store (through fetch, so
// through CORS), renders the results, and leaves them in window.__results for run.mjs.
import { cases } from "../suite.js";
import { runCases } from "../harness.js";
import { s3Factories } from "../../../js/support/servers.js";

const $ = (sel) => document.querySelector(sel);
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...children);
  return node;
};

const pageErrors = [];
addEventListener("error", (e) => pageErrors.push(`error: ${e.message} (${e.filename}:${e.lineno})`));
addEventListener("unhandledrejection", (e) => pageErrors.push(`unhandled rejection: ${e.reason?.stack ?? e.reason}`));

window.__progress = { done: 0, total: 0, current: null, results: [] };

// ------------------------------------------------------------------ settings
async function loadSettings(params) {
  let settings = {};
  const explicit = params.get("settings");
  try {
    const res = await fetch(explicit ?? "/settings.json", { cache: "no-store" });
    if (res.ok) settings = await res.json();
    else if (explicit) throw new Error(`${explicit}: HTTP ${res.status}`);
  } catch (e) {
    if (explicit) throw e;
  }
  for (const [k, v] of params) if (k.startsWith("FENCEPOST_")) settings[k] = v;
  return settings;
}

function s3Names(settings) {
  return Object.keys(settings)
    .map((k) => /^FENCEPOST_([A-Z0-9]+)_ENDPOINT$/.exec(k)?.[1])
    .filter((n) => n && settings[`FENCEPOST_${n}_ENDPOINT`]);
}

// ------------------------------------------------------------------ CORS observation
// The store calls the global fetch; wrap it to see which S3 response headers page JS can read.
const observed = new Map(); // origin → stats
function watchFetch(origins) {
  const original = globalThis.fetch;
  for (const o of origins) {
    observed.set(o, { requests: 0, transportErrors: 0, getOk: 0, getEtag: 0, getToken: 0, getHistory: 0, putOk: 0, putEtag: 0, lastGetHeaders: null });
  }
  globalThis.fetch = async function fetch(input, init) {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const stats = observed.get(new URL(url, location.href).origin);
    if (!stats) return original(input, init);
    stats.requests++;
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
    let res;
    try {
      res = await original(input, init);
    } catch (e) {
      stats.transportErrors++;
      throw e;
    }
    if (method === "GET" && res.status === 200 && !new URL(url, location.href).searchParams.has("list-type")) {
      stats.getOk++;
      if (res.headers.get("etag")) stats.getEtag++;
      if (res.headers.get("x-amz-meta-fencepost-token") !== null) stats.getToken++;
      if (res.headers.get("x-amz-meta-fencepost-history") !== null) stats.getHistory++;
      stats.lastGetHeaders = [...res.headers.keys()].sort();
    } else if (method === "PUT" && res.status === 200) {
      stats.putOk++;
      if (res.headers.get("etag")) stats.putEtag++;
    }
    return res;
  };
}

// ------------------------------------------------------------------ rendering
function envRow(term, value) {
  $("#env").append(el("dt", {}, term), el("dd", {}, value));
}

function storeSection(store, list) {
  const count = el("span", { class: "count" }, `${list.length} cases`);
  const ol = el("ol", { class: "cases", id: `cases-${store}` });
  const items = list.map((c) => {
    const li = el("li", { class: "pending" }, el("span", { class: "mark" }, "·"), el("span", { class: "name" }, c.name), el("span", { class: "ms" }, ""));
    ol.append(li);
    return li;
  });
  $("#stores").append(el("section", { id: `store-${store}` }, el("h2", {}, store, count), ol));
  return { items, count };
}

function mark(li, state, ms, error) {
  li.className = state;
  li.querySelector(".mark").textContent = state === "ok" ? "✓" : state === "fail" ? "✗" : "…";
  li.querySelector(".ms").textContent = ms === undefined ? "" : `${ms} ms`;
  if (error) {
    // The message in full, the stack folded away (open it by hand).
    const at = error.search(/\n\s+at /);
    const message = at < 0 ? error : error.slice(0, at);
    li.append(el("pre", {}, message));
    if (at >= 0) li.append(el("details", {}, el("summary", {}, "stack"), el("pre", {}, error.slice(at + 1))));
  }
}

function withTimeout(promise, seconds, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result after ${seconds} s (case timeout)`)), seconds * 1000);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// ------------------------------------------------------------------ main
async function main() {
  const started = performance.now();
  const params = new URLSearchParams(location.search);
  const caseTimeout = Number(params.get("caseTimeout") ?? 90);
  const settings = await loadSettings(params);
  const available = ["memory", ...s3Names(settings).map((n) => n.toLowerCase())];
  const wanted = (params.get("stores") ?? settings.stores ?? available.join(",")).split(",").map((s) => s.trim()).filter(Boolean);
  const unknown = wanted.filter((s) => !available.includes(s));
  if (unknown.length) throw new Error(`stores without settings: ${unknown.join(", ")} (have: ${available.join(", ")})`);

  const s3 = wanted.filter((s) => s !== "memory");
  const origins = s3.map((s) => new URL(settings[`FENCEPOST_${s.toUpperCase()}_ENDPOINT`]).origin);
  watchFetch(origins);

  envRow("user agent", navigator.userAgent);
  envRow("page origin", location.origin);
  const lib = await import("fencepost");
  const testing = await import("fencepost/testing");
  await lib.initWasm(); // manualClock() needs the core instantiated (the browser entry loads it lazily)
  envRow("fencepost", "loaded (browser entry, wasm instantiated)");

  const schemas = {};
  for (const [name, spec] of [["zod", "zod"], ["valibot", "valibot"]]) {
    try {
      schemas[name] = await import(spec);
    } catch (e) {
      envRow(name, `not loadable unbundled, schema cases skipped: ${e}`);
    }
  }
  envRow("schemas", Object.keys(schemas).join(", ") || "none");
  envRow("stores", wanted.map((s) => (s === "memory" ? "memory" : `${s} (${settings[`FENCEPOST_${s.toUpperCase()}_ENDPOINT`]})`)).join(" · "));

  const factories = { memory: () => lib.memoryStore(), ...s3Factories(lib, settings, "browser", s3.map((s) => s.toUpperCase())) };
  const plan = wanted.map((store) => {
    const list = cases({ lib, makeStore: factories[store], schemas, testing });
    return { store, list, ui: storeSection(store, list) };
  });
  window.__progress.total = plan.reduce((n, p) => n + p.list.length, 0);

  const results = [];
  const stores = {};
  for (const { store, list, ui } of plan) {
    const t0 = performance.now();
    const wrapped = list.map((c, i) => ({
      name: c.name,
      fn: async () => {
        const li = ui.items[i];
        mark(li, "running");
        window.__progress.current = `${store} / ${c.name}`;
        const t = performance.now();
        const live = (ok, error) => {
          const ms = Math.round(performance.now() - t);
          mark(li, ok ? "ok" : "fail", ms, error);
          // Kept as it happens, so a run.mjs timeout can still report the cases that finished.
          window.__progress.results.push({ store, name: `${store} / ${c.name}`, ok, ms, ...(ok ? {} : { error }) });
          window.__progress.done++;
        };
        try {
          await withTimeout(Promise.resolve().then(c.fn), caseTimeout, c.name);
          live(true);
        } catch (e) {
          live(false, String(e?.stack ?? e));
          throw e;
        }
      },
    }));
    const run = await runCases(wrapped, { prefix: `${store} / ` });
    const ms = Math.round(performance.now() - t0);
    stores[store] = { passed: run.passed, failed: run.failed, ms };
    ui.count.textContent = `${run.passed} passed, ${run.failed} failed · ${(ms / 1000).toFixed(1)} s`;
    for (const r of run.results) results.push({ store, ...r });
  }

  // CORS: can page JS read what the S3 store needs? One explicit write+read per S3 store, plus
  // the tallies of every response the suite's own requests got.
  const cors = {};
  for (const store of s3) {
    const origin = new URL(settings[`FENCEPOST_${store.toUpperCase()}_ENDPOINT`]).origin;
    const stats = observed.get(origin);
    try {
      const objects = new lib.Fencepost(factories[store]()).objects;
      await objects.put("cors-probe", "probe");
      await objects.put("cors-probe", "probe-2", { ifMatch: (await objects.get("cors-probe")).etag });
      await objects.get("cors-probe");
      await objects.delete("cors-probe");
    } catch (e) {
      stats.probeError = String(e);
    }
    cors[store] = {
      ...stats,
      etagVisible: stats.getOk > 0 && stats.getEtag === stats.getOk && stats.putEtag === stats.putOk,
      tokenVisible: stats.getToken > 0,
      historyVisible: stats.getHistory > 0,
    };
    const c = cors[store];
    const warn = c.tokenVisible ? "" : " — not exposed (Access-Control-Expose-Headers): the write-token read-back after a lost response cannot see it";
    envRow(`CORS ${store}`, el("div", {},
      el("div", {}, `${c.requests} requests through fetch, ${c.transportErrors} transport errors${c.probeError ? `, probe error: ${c.probeError}` : ""}`),
      el("div", {}, `ETag readable on ${c.getEtag}/${c.getOk} GET and ${c.putEtag}/${c.putOk} PUT responses`),
      el("div", {}, `x-amz-meta-fencepost-token readable on ${c.getToken}/${c.getOk} GETs, -history on ${c.getHistory}${warn}`),
      el("div", {}, `response headers page JS sees on a GET: ${(c.lastGetHeaders ?? []).join(", ")}`)));
  }

  const passed = results.filter((r) => r.ok).length;
  const failed = results.length - passed;
  const ms = Math.round(performance.now() - started);
  const summary = $("#summary");
  summary.className = failed === 0 && results.length > 0 ? "ok" : "bad";
  summary.textContent = `${passed} passed, ${failed} failed — ` +
    Object.entries(stores).map(([s, v]) => `${s}: ${v.passed}/${v.passed + v.failed} in ${(v.ms / 1000).toFixed(1)} s`).join(" · ");
  if (pageErrors.length) envRow("page errors", pageErrors.join("\n"));
  return { passed, failed, ms, stores, results, cors, schemas: Object.keys(schemas), userAgent: navigator.userAgent, pageErrors };
}

main().then(
  (r) => { window.__results = r; },
  (e) => {
    const error = String(e?.stack ?? e);
    const summary = $("#summary");
    summary.className = "bad";
    summary.textContent = `harness error: ${e}`;
    $("#stores").append(el("pre", {}, error));
    const partial = window.__progress.results;
    window.__results = {
      passed: partial.filter((r) => r.ok).length,
      failed: partial.filter((r) => !r.ok).length + 1,
      fatal: error,
      stores: {},
      results: [...partial, { store: "harness", name: "harness", ok: false, ms: 0, error }],
      pageErrors,
    };
  },
);
