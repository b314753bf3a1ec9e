// JS values ↔ the JSON text the core reads and writes. Conversion follows `JSON.stringify` (it is
// a JS protocol: `toJSON` is honoured, so a Date becomes its ISO string; `undefined` properties are
// skipped), but refuses what it would silently mangle — BigInt, functions, symbols, NaN/±Infinity,
// `undefined` and holes in arrays and invalid Dates (all three written as null), cycles, Maps/Sets
// and other non-plain objects, lone surrogates — with an InvalidArgument naming where in the
// value it is. Nothing reaches the core (so nothing is written) unless the whole value is JSON.

import { InvalidArgument, invalidRecord } from "./errors.js";

/** A bound on what a hostile `length` can make `JSON.stringify` attempt. */
const MAX_ITEMS = 1_000_000;

/**
 * `value` as JSON text; `what` names it in messages ("value", "stateFn's result"…).
 * @param {unknown} value @param {string} what @returns {string}
 */
export function toJson(value, what) {
  /** Where each object met so far sits: its holder and key. Paths are spelled out only for a
   * message, so a good value costs no string building. */
  const at = new Map();
  /** @param {any} holder @param {string} key @returns {string} */
  const pathOf = (holder, key) => {
    const up = at.get(holder);
    if (up === undefined) return what; // the top-level value's wrapper
    const parent = pathOf(up[0], up[1]);
    return Array.isArray(holder) ? `${parent}[${key}]` : `${parent}.${key}`;
  };
  /** @param {any} holder @param {string} key @param {string} message */
  const bad = (holder, key, message) => badValue(pathOf(holder, key), message);
  /** @this {any} @param {string} key @param {unknown} v */
  function check(key, v) {
    switch (typeof v) {
      case "string":
        if (!v.isWellFormed()) throw bad(this, key, "contains a lone surrogate (not valid Unicode)");
        return v;
      case "number":
        if (!Number.isFinite(v)) throw bad(this, key, `is ${v}, which JSON cannot represent`);
        return v;
      case "bigint":
        throw bad(this, key, "is a BigInt, which JSON cannot represent (convert it to a string or number)");
      case "function":
      case "symbol":
        throw bad(this, key, "is a function or symbol, which JSON cannot represent");
      case "undefined":
        if (!at.has(this)) throw bad(this, key, "is undefined, which JSON cannot represent");
        if (Array.isArray(this)) throw bad(this, key, "is undefined (or a hole), which JSON would write as null");
        return v; // skipped in objects, as JSON.stringify does
      case "object":
        if (v === null) {
          // What `toJSON` made null: an invalid Date is the one JS itself writes so.
          if (Object.prototype.toString.call(this[key]) === "[object Date]") throw bad(this, key, "is an invalid Date, which JSON would write as null");
          return v;
        }
        if (Array.isArray(v)) {
          if (v.length > MAX_ITEMS) throw bad(this, key, `has more than ${MAX_ITEMS} items`);
        } else {
          // A plain object's prototype is its realm's `Object.prototype` (another realm's, from
          // node:vm, an iframe or a test environment, as much as this one's), whose own is null.
          const proto = Object.getPrototypeOf(v);
          if (proto !== Object.prototype && proto !== null && Object.getPrototypeOf(proto) !== null) {
            throw bad(this, key, `is a ${v.constructor?.name ?? "object"}, not a plain object; JSON would lose it`);
          }
          for (const k of Object.keys(v)) {
            if (!k.isWellFormed()) throw bad(this, key, "has a key that contains a lone surrogate (not valid Unicode)");
          }
        }
        at.set(v, [this, key]);
        return v;
      default:
        return v;
    }
  }
  let text;
  try {
    text = JSON.stringify(value, check);
  } catch (e) {
    if (e instanceof InvalidArgument) throw e;
    if (e instanceof TypeError && /circular|cyclic/i.test(e.message)) throw badValue(what, "contains a cycle");
    if (e instanceof RangeError) throw badValue(what, "is nested too deeply or too large for JSON", e);
    throw badValue(what, `could not be converted to JSON: ${/** @type {any} */ (e)?.message ?? e}`, e);
  }
  if (text === undefined) throw badValue(what, "is undefined, which JSON cannot represent");
  return text;
}

/** JSON text from the core as a fresh JS value (`null` stays null). */
export function fromJson(/** @type {string | null | undefined} */ text) {
  return text == null ? null : JSON.parse(text);
}

/**
 * A caller's callback as the core calls it: JSON text in, the callback (sync or async) called on
 * the value, its result as JSON text out — at once for a sync callback (the core then needs no
 * Promise round trip), as a Promise when it returns a thenable. Whatever the callback throws
 * reaches the caller unchanged; a result JSON cannot hold is refused as the core's own
 * `InvalidArgument` (`invalidRecord`), not as the callback's error.
 * @param {Function} fn @param {string} what @returns {(text: string) => string | Promise<string>}
 */
export function jsonCallback(fn, what) {
  const convert = (/** @type {unknown} */ v) => callbackJson(v, what);
  return (text) => {
    const out = fn(JSON.parse(text));
    return typeof out?.then === "function" ? Promise.resolve(out).then(convert) : convert(out);
  };
}

/**
 * What a callback resolved to, as JSON text for the core; a value JSON cannot hold is refused as
 * the core's own `InvalidArgument` (`invalidRecord`), so the call ends with it (its event says
 * `INVALID_ARGUMENT`, the error carries the call's key) rather than with the callback's error.
 * @param {unknown} v @param {string} what
 */
export function callbackJson(v, what) {
  try {
    return toJson(v, what);
  } catch (e) {
    throw e instanceof InvalidArgument ? invalidRecord(e.message) : e;
  }
}

/** @param {string} path @param {string} message @param {unknown} [cause] */
function badValue(path, message, cause) {
  // The base class keeps a `cause`; InvalidArgument's public details leave it out (it is internal here).
  return new InvalidArgument(`${path} ${message}`, cause === undefined ? undefined : /** @type {any} */ ({ cause }));
}
