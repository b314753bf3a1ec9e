// Option objects, checked the way a JS developer expects: an unknown name (a typo such as
// `stealIfExpire`) is an InvalidArgument naming it and the nearest valid name; a value of the wrong
// type names the option and the type. `undefined` and `null` mean "not given". Only names and types
// are checked here (and that a number is finite: NaN and ±Infinity cross to the core as JSON null,
// which is "not given", so `{ttl: NaN}` would silently take the default); what a value means
// (ttl > 0, a valid key…) is the core's to judge.

import { InvalidArgument } from "./errors.js";

/**
 * @typedef {"number" | "string" | "boolean" | "function" | "object" | "signal" | "any"} Kind
 * @typedef {Readonly<Record<string, Kind>>} Shape
 * @typedef {{number: number, string: string, boolean: boolean, function: Function, object: any, signal: AbortSignal,
 *   any: any}} KindTypes
 */

/**
 * What `options(value, shape)` hands back: every option of the shape, typed by its kind (so the
 * checker sees what each core call is given), `null` or `undefined` when not given.
 * @template {Shape} S
 * @typedef {{ -readonly [K in keyof S]: KindTypes[S[K]] | null | undefined }} Given
 */

/** The options of a call that takes nothing but an AbortSignal. */
export const SIGNAL_ONLY = Object.freeze({ signal: "signal" });

/**
 * The options object `value` checked against `shape`; returns it (or `{}` when not given).
 * @template {Shape} S
 * @param {unknown} value
 * @param {S} shape
 * @param {string} what e.g. "lease options"
 * @returns {Given<S>}
 */
export function options(value, shape, what) {
  if (value === undefined || value === null) return /** @type {Given<S>} */ (EMPTY);
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidArgument(`${what} must be an object, got ${describe(value)}`);
  }
  for (const name in value) {
    if (!Object.hasOwn(shape, name)) throw unknown(name, shape, what);
    const v = /** @type {any} */ (value)[name];
    if (v === undefined || v === null) continue;
    if (!is(v, shape[name])) {
      throw new InvalidArgument(`${what}.${name} must be ${article(shape[name])}, got ${describe(v)}`);
    }
    if (typeof v === "string") string(v, `${what}.${name}`);
    else if (shape[name] === "number") finite(v, `${what}.${name}`);
  }
  return /** @type {Given<S>} */ (value);
}

const EMPTY = Object.freeze({});

/** @param {unknown} v @param {Kind} kind */
function is(v, kind) {
  switch (kind) {
    case "any":
      return true;
    case "object":
      return typeof v === "object";
    case "signal": {
      // An AbortSignal, or an object that behaves as one (a polyfill's): the core listens to it
      // and lets go of it when the call settles, so it needs both listener methods.
      const s = /** @type {any} */ (v);
      return typeof v === "object" && v !== null && typeof s.aborted === "boolean" &&
        typeof s.addEventListener === "function" && typeof s.removeEventListener === "function";
    }
    default:
      return typeof v === kind;
  }
}

/** @param {Kind} kind */
function article(kind) {
  return { number: "a number", string: "a string", boolean: "a boolean", function: "a function", object: "an object",
    signal: "an AbortSignal", any: "a value" }[kind];
}

/** @param {unknown} v */
function describe(v) {
  if (v === null || v === undefined) return String(v);
  if (Array.isArray(v)) return "an array";
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + "…" : v)}`;
  return typeof v === "object" ? `${v.constructor?.name ?? "an object"}` : `${typeof v} ${String(v)}`;
}

/** @param {string} name @param {Shape} shape @param {string} what */
function unknown(name, shape, what) {
  const valid = Object.keys(shape);
  const near = nearest(name, valid);
  const hint = near ? ` (did you mean "${near}"?)` : valid.length ? ` (valid: ${valid.join(", ")})` : " (it takes none)";
  return new InvalidArgument(`unknown option "${name}" in ${what}${hint}`);
}

/** The valid name closest to `name` by edit distance, if close enough to be a typo ("" otherwise); the CLI's "did you mean" too. */
export function nearest(/** @type {string} */ name, /** @type {string[]} */ valid) {
  let best = "", bestDistance = Infinity;
  for (const v of valid) {
    const d = distance(name.toLowerCase(), v.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [v, d];
  }
  return bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? best : "";
}

/** Levenshtein distance (names are short: a two-row table is plenty). */
function distance(/** @type {string} */ a, /** @type {string} */ b) {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length];
}

/**
 * Whether `v` is an `ArrayBuffer` or a `Date` of any realm (`instanceof` answers for this realm's
 * only: a value from `node:vm`, an iframe or a test environment's globals would be refused).
 * @param {unknown} v @param {"ArrayBuffer" | "Date"} tag
 */
export function isA(v, tag) {
  return Object.prototype.toString.call(v) === `[object ${tag}]`;
}

/**
 * A key or other string argument: a string of well-formed Unicode (a lone surrogate would be
 * silently replaced on its way into the core, so two different keys could become one).
 * @param {unknown} v @param {string} what
 * @returns {string}
 */
export function string(v, what) {
  if (typeof v !== "string") throw new InvalidArgument(`${what} must be a string, got ${describe(v)}`);
  if (!v.isWellFormed()) throw new InvalidArgument(`${what} contains a lone surrogate (not valid Unicode)`);
  return v;
}

/**
 * A number argument: finite (JSON, which calls cross to the core in, has no NaN or ±Infinity; they
 * would arrive as null, "not given").
 * @param {unknown} v @param {string} what
 * @returns {number}
 */
export function finite(v, what) {
  if (typeof v !== "number" || !Number.isFinite(v)) throw new InvalidArgument(`${what} must be a finite number, got ${describe(v)}`);
  return v;
}

/** @param {unknown} v @param {string} what @returns {Function} */
export function func(v, what) {
  if (typeof v !== "function") throw new InvalidArgument(`${what} must be a function, got ${describe(v)}`);
  return v;
}

/**
 * A signal that aborts when `a` or `b` does (with its reason), and `unlink()` to let go of them
 * once the call is over: a listener on each, removed by `unlink`, so a long-lived caller's signal
 * (a process-wide shutdown signal) does not collect one per call. Not `AbortSignal.any`: it keeps
 * every signal it made for as long as a long-lived source lives (Node 20 to 22 and Deno: 100,000
 * calls with one such source held 340 MB of heap in Node 20), and Vercel's Edge Runtime lacks it.
 * @param {AbortSignal} a @param {AbortSignal} b
 * @returns {{signal: AbortSignal, unlink(): void}}
 */
export function eitherSignal(a, b) {
  const both = new AbortController();
  const follow = (/** @type {AbortSignal} */ s) => () => both.abort(s.reason);
  const [fromA, fromB] = [follow(a), follow(b)];
  const unlink = () => {
    a.removeEventListener("abort", fromA);
    b.removeEventListener("abort", fromB);
  };
  if (a.aborted) both.abort(a.reason);
  else if (b.aborted) both.abort(b.reason);
  else {
    a.addEventListener("abort", fromA, { once: true });
    b.addEventListener("abort", fromB, { once: true });
  }
  return { signal: both.signal, unlink };
}
