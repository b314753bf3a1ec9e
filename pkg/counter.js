// counter: a sharded counter (docs at `key/<i>`, one added to at random, all summed), for hot
// counters past a store's per-key write limit. The core does the work; here are the JS names.

import { InvalidArgument, pinNames } from "./errors.js";
import { SIGNAL_ONLY, options, string } from "./options.js";
import { Lazy, run } from "./binding.js";

/**
 * `db.counter(key, {shards})`: the handle (its core counter made on first use).
 * @param {Lazy<import("./fencepost.js").Fencepost>} db @param {string} key @param {any} opts
 */
export function openCounter(db, key, opts) {
  string(key, "key");
  const { shards } = options(opts, { shards: "number" }, "counter options");
  return new Counter(key, () => db.get().counter(key, shards ?? undefined));
}

/** A counter sharded over docs: `add` touches one shard, `value` reads them all. */
export class Counter {
  /** @type {Lazy<import("./fencepost.js").Counter>} */
  #core;

  /** @internal */
  constructor(/** @type {string} */ key, /** @type {() => import("./fencepost.js").Counter} */ make) {
    if (make === undefined) throw new InvalidArgument("a Counter is made by db.counter(key)");
    /** @readonly */
    this.key = key;
    this.#core = new Lazy(make);
  }

  /** Add `n` (default 1; a whole number, negative to subtract) to one shard chosen at random. */
  async add(/** @type {number} */ n = 1, /** @type {any} */ opts) {
    if (typeof n !== "number") throw new InvalidArgument(`counter.add's n must be a number, got ${typeof n}`);
    const { signal } = options(opts, SIGNAL_ONLY, "add options");
    await run(() => this.#core.get().add(n, signal));
  }

  /** The sum of every shard (one read each, together). */
  async value(/** @type {any} */ opts) {
    const { signal } = options(opts, SIGNAL_ONLY, "value options");
    return /** @type {number} */ (await run(() => this.#core.get().value(signal)));
  }
}
pinNames({ Counter });
