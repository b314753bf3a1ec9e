// Events (`new Fencepost(store, {onEvent})`): the core reports each request, each call's end and
// each lease transition as an array; here it becomes the plain object the handler receives. The
// handler runs synchronously inside the call, so whatever it throws (or, async, rejects with) is
// caught and dropped: an event handler never changes a call's outcome. A call the JS layer refuses
// before it reaches the core is reported here in the same shape (`refused`).

import { FencepostError, InvalidArgument } from "./errors.js";

/**
 * @typedef {{type: "request", op: "get" | "put" | "delete" | "list", key: string, status: number | null,
 *   attempt: number, ms: number, outcome: string}} RequestEvent
 * @typedef {{type: "call", method: string, key: string, requests: number, ms: number, outcome: string}} CallEvent
 * @typedef {{type: "lease", key: string, epoch: number, action: "acquired" | "renewed" | "released" | "lost" | "broken",
 *   reason?: "released" | "expired" | "stolen" | "deleted"}} LeaseEvent
 * @typedef {RequestEvent | CallEvent | LeaseEvent} FencepostEvent
 */

/**
 * The listener the core calls with each event as JSON text (the fields named as above), for the
 * user's `handler`.
 * @param {(event: FencepostEvent) => void} handler
 * @returns {(json: string) => void}
 */
export function listener(handler) {
  return (json) => {
    const event = JSON.parse(json);
    if (event.type === "call") callEvents++;
    try {
      const returned = /** @type {unknown} */ (handler(event));
      // An async handler's rejection too: left unhandled, it would end a Node process.
      if (typeof (/** @type {any} */ (returned)?.then) === "function") Promise.resolve(returned).catch(ignore);
    } catch {
      // A failing handler is the application's bug to find in its own logs, not a failed call.
    }
  };
}

function ignore() {}

/** Call events heard so far, by every listener (see `callEventsHeard`). */
let callEvents = 0;

/**
 * How many call events the core has reported so far: a call that fails synchronously without one
 * was refused before it reached the core's API (by the binding's own reading of its arguments),
 * so the JS layer reports it (`refused`). Synchronous, so no other call's events come between.
 */
export function callEventsHeard() {
  return callEvents;
}

/**
 * A call the JS layer refuses before anything reaches the core (an unknown option, a value of the
 * wrong type or that JSON cannot hold, a handle whose period is over), reported as the core reports
 * the calls it refuses itself: one call event, no requests, the error's code. An `InvalidArgument`
 * also gets the call's key, as the core's carry it. Returns `e`, for the caller to throw.
 * @param {{onEvent?: Function}} db @param {string} method @param {unknown} key @param {unknown} e
 */
export function refused(db, method, key, e) {
  if (!(e instanceof FencepostError)) return e;
  const k = typeof key === "string" ? key : "";
  if (e instanceof InvalidArgument && e.key === undefined && k !== "") e.key = k;
  /** @type {CallEvent} */
  const event = { type: "call", method, key: k, requests: 0, ms: 0, outcome: e.code };
  db.onEvent?.(JSON.stringify(event));
  return e;
}

/**
 * `check()` — the JS layer's checks of a call's arguments, run before the call reaches the core —
 * with what it refuses reported (`refused`).
 * @template T
 * @param {{onEvent?: Function}} db @param {string} method @param {unknown} key @param {() => T} check
 * @returns {T}
 */
export function checked(db, method, key, check) {
  try {
    return check();
  } catch (e) {
    throw refused(db, method, key, e);
  }
}
