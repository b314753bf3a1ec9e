// The async iterators fencepost hands out (`watch`, `objects.entries`), written as plain objects
// rather than async generators: an error thrown by a step is built in the `next()` the caller
// awaits, so its stack keeps the caller's frame in every engine (JavaScriptCore, Bun's engine,
// drops it across an async generator's resumption). They answer as an async generator does:
// `next`, `return`, `throw`, and `await using` ending them.

import { ASYNC_DISPOSE } from "./binding.js";

/**
 * An async iterator whose `next()` calls run `step` one after another, as an async generator
 * queues them; a step that throws ends it. `finish` runs on `return()` (leaving a `for await`).
 * @template T
 * @param {() => Promise<IteratorResult<T, undefined>>} step
 * @param {() => void} [finish]
 * @returns {AsyncGenerator<T, undefined, undefined>}
 */
export function queuedIterator(step, finish = () => {}) {
  let done = false;
  let queue = Promise.resolve();
  return {
    async next() {
      const previous = queue;
      /** @type {() => void} */
      let finished = () => {};
      queue = new Promise((resolve) => (finished = resolve));
      try {
        await previous;
        if (done) return { done: true, value: undefined };
        // Awaited here, not chained with `then`: engines follow awaits for the caller's frame.
        const r = await step();
        if (r.done) done = true;
        return r;
      } catch (e) {
        done = true;
        throw e;
      } finally {
        finished();
      }
    },
    async return() {
      done = true;
      finish();
      return { done: true, value: undefined };
    },
    /** As a generator suspended at a `yield` without a `catch`: it ends, rejecting with `e`. */
    async throw(/** @type {unknown} */ e) {
      await this.return(undefined);
      throw e;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
    [ASYNC_DISPOSE]() {
      return this.return(undefined).then(() => {});
    },
  };
}
