// Events (`new Fencepost(store, {onEvent})`): the core reports each request, each call's end and
// each lease transition as an array; here it becomes the plain object the handler receives. The
// handler runs synchronously inside the call, so whatever it throws (or, async, rejects with) is
// caught and dropped: an event handler never changes a call's outcome.

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
    try {
      const returned = /** @type {unknown} */ (handler(JSON.parse(json)));
      // An async handler's rejection too: left unhandled, it would end a Node process.
      if (typeof (/** @type {any} */ (returned)?.then) === "function") Promise.resolve(returned).catch(ignore);
    } catch {
      // A failing handler is the application's bug to find in its own logs, not a failed call.
    }
  };
}

function ignore() {}
