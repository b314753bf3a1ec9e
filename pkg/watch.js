// watch: a key's changes as an async iterable, polled by the core with conditional reads (a 304
// without the body while nothing changed). What the watch last saw is plain data here, passed in
// with each poll: nothing is held in the core between polls.

import { options, string } from "./options.js";
import { run } from "./binding.js";
import { inspection } from "./inspect.js";
import { checked } from "./events.js";
import { queuedIterator } from "./iterator.js";

const WATCH_OPTIONS = /** @type {const} */ ({ interval: "number", signal: "signal" });

/**
 * `db.watch(key, {interval = 1, signal}?)`: an async iterable of what `db.inspect(key)` answers
 * (null while absent): first the current state, then each change of etag (a deletion once).
 * Leaving the loop stops it; aborting `signal` stops it at once, the loop then throwing the
 * signal's reason (as every fencepost call does).
 * @param {import("./binding.js").Recipe} db @param {string} key @param {any} opts
 * @returns {AsyncIterableIterator<any>}
 */
export function watch(db, key, opts) {
  const o = checked(db, "watch", key, () => {
    string(key, "key");
    return options(opts, WATCH_OPTIONS, "watch options");
  });
  const interval = o.interval ?? undefined;
  /** Stops a poll in flight when the loop is left. */
  const stop = new AbortController();
  /** What the watch last reported: nothing yet, absent, or a version. */
  let seen = /** @type {{etag?: string, absent?: boolean}} */ ({});
  // Polls one after another: two `next()` calls made at once get the current state, then the
  // change after it.
  return queuedIterator(async () => {
    // The caller's signal is followed only while a poll is on its way (the core lets go of it when
    // the call settles), so a watch dropped between polls leaves nothing on it; an abort meanwhile
    // stops the next poll at once. Leaving the loop (`stop`) is told apart from an abort: the core
    // answers `{stopped: true}`, and its call event says "ok".
    if (stop.signal.aborted) return { done: true, value: undefined };
    const reply = await run("watch.next", db, { args: { key, interval, ...seen }, callbacks: { stop: stop.signal }, signal: o.signal });
    if (reply.json?.stopped === true) return { done: true, value: undefined };
    const change = inspection(key, reply);
    seen = change === null ? { absent: true } : { etag: change.etag };
    return { done: false, value: change };
  }, () => {
    try {
      stop.abort();
    } catch {
      // workerd: left from another request than the one that polled, whose poll went with it.
    }
  });
}
