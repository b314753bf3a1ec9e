// counter: a sharded counter (docs at `key/<i>`, one added to at random, all summed), for hot
// counters past a store's per-key write limit. The core does the work; here are the JS names.

import { InvalidArgument } from "./errors.js";
import { SIGNAL_ONLY, finite, options, string } from "./options.js";
import { fixedFields, handleClasses, isReady, run, runSync } from "./binding.js";
import { checked } from "./events.js";

/**
 * `db.counter(key, {shards})`: the handle (plain data: no request, nothing held). The core judges
 * the key and `shards` here where the wasm is loaded (else on the first call).
 * @param {import("./binding.js").Recipe} db @param {string} key @param {any} opts
 */
export function openCounter(db, key, opts) {
  // A refusal is reported as a call's is (one event, no requests), though nothing is sent.
  return checked(db, "counter", key, () => {
    string(key, "key");
    const { shards } = options(opts, { shards: "number" }, "counter options");
    if (isReady()) runSync("counter.open", db, { args: { key, shards: shards ?? undefined } });
    return new Counter(db, key, shards ?? undefined);
  });
}

/** A counter sharded over docs: `add` touches one shard, `value` reads them all. */
export class Counter {
  #db;
  #shards;

  /** @internal */
  constructor(/** @type {import("./binding.js").Recipe} */ db, /** @type {string} */ key, /** @type {number | undefined} */ shards) {
    if (key === undefined) throw new InvalidArgument("a Counter is made by db.counter(key)");
    this.#db = db;
    /** @readonly @type {string} */
    this.key;
    fixedFields(this, { key });
    this.#shards = shards;
  }

  /** Add `n` (default 1; a whole number, negative to subtract) to one shard chosen at random. */
  async add(/** @type {number} */ n = 1, /** @type {any} */ opts) {
    const { signal } = checked(this.#db, "counter.add", this.key, () => {
      finite(n, "counter.add's n");
      return options(opts, SIGNAL_ONLY, "add options");
    });
    await run("counter.add", this.#db, { args: { key: this.key, shards: this.#shards, n }, signal });
  }

  /** The sum of every shard (one read each, together). */
  async value(/** @type {any} */ opts) {
    const { signal } = checked(this.#db, "counter.value", this.key, () => options(opts, SIGNAL_ONLY, "value options"));
    return /** @type {number} */ ((await run("counter.value", this.#db, { args: { key: this.key, shards: this.#shards }, signal })).json);
  }
}
handleClasses({ Counter });
