// watch: a key's changes as an async iterable, polled by the core with conditional reads (a 304
// without the body while nothing changed). What the watch last saw is plain data here, passed in
// with each poll: nothing is held in the core between polls.

import { eitherSignal, options, string } from "./options.js";
import { run } from "./binding.js";
import { inspection } from "./inspect.js";
import { checked } from "./events.js";

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
  let done = false;
  /** One poll after another, as an async generator queues its `next()` calls: two made at once get
   * the current state, then the change after it. */
  let queue = Promise.resolve();
  const step = async () => {
    if (done) return { done: true, value: undefined };
    // The caller's signal is followed only while a poll is on its way, so a watch dropped between
    // polls leaves nothing on it (an abort meanwhile stops the next poll at once).
    const { signal, unlink } = o.signal ? eitherSignal(stop.signal, o.signal) : { signal: stop.signal, unlink() {} };
    try {
      const change = inspection(key, await run("watch.next", db, { args: { key, interval, ...seen }, signal }));
      seen = change === null ? { absent: true } : { etag: change.etag };
      return { done: false, value: change };
    } catch (e) {
      done = true;
      if (stop.signal.aborted) return { done: true, value: undefined };
      throw e;
    } finally {
      unlink();
    }
  };
  return {
    // Awaited here, not chained with `then`: an error thrown by a poll keeps the caller's frame in
    // its stack (V8 follows awaits, not `then` callbacks).
    async next() {
      const previous = queue;
      /** @type {() => void} */
      let finished = () => {};
      queue = new Promise((resolve) => (finished = resolve));
      try {
        await previous;
        return await step();
      } finally {
        finished();
      }
    },
    async return() {
      done = true;
      stop.abort();
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
