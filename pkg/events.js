// Events (`new Fencepost(store, {onEvent})`): the core reports each request, each call's end and
// each lease transition as an array; here it becomes the plain object the handler receives. The
// handler runs synchronously inside the call, so whatever it throws is caught and dropped: an
// event handler never changes a call's outcome.

/**
 * @typedef {{type: "request", op: "get" | "put" | "delete" | "list", key: string, status: number | null,
 *   attempt: number, ms: number, outcome: string}} RequestEvent
 * @typedef {{type: "call", method: string, key: string, requests: number, ms: number, outcome: string}} CallEvent
 * @typedef {{type: "lease", key: string, epoch: number, action: "acquired" | "renewed" | "released" | "lost" | "broken",
 *   reason?: "released" | "expired" | "stolen" | "deleted"}} LeaseEvent
 * @typedef {RequestEvent | CallEvent | LeaseEvent} FencepostEvent
 */

/**
 * The listener the core calls with an event's fields, for the user's `handler`.
 * @param {(event: FencepostEvent) => void} handler
 * @returns {(fields: any[]) => void}
 */
export function listener(handler) {
  return (f) => {
    /** @type {FencepostEvent} */
    let event;
    if (f[0] === "request") event = { type: "request", op: f[1], key: f[2], status: f[3], attempt: f[4], ms: f[5], outcome: f[6] };
    else if (f[0] === "call") event = { type: "call", method: f[1], key: f[2], requests: f[3], ms: f[4], outcome: f[5] };
    else event = f[4] === undefined
      ? { type: "lease", key: f[1], epoch: f[2], action: f[3] }
      : { type: "lease", key: f[1], epoch: f[2], action: f[3], reason: f[4] };
    try {
      handler(event);
    } catch {
      // A failing handler is the application's bug to find in its own logs, not a failed call.
    }
  };
}
