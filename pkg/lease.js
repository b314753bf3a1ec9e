// lease: expiring ownership with an epoch fence token — acquiring, re-attaching, cooperative writes
// from outside, and the `Lease` handle. Whether a handle's period is over, and why, is the core's
// to know (`Lease::ended`); the handle's `signal` follows it.

import { InvalidArgument, LeaseLost, fromFailure, pinNames } from "./errors.js";
import { SIGNAL_ONLY, eitherSignal, func, options, string } from "./options.js";
import { jsonCallback, toJson } from "./json.js";
import { ASYNC_DISPOSE, fixedFields, inspectable, run, runSync, start } from "./binding.js";
import { checked, refused } from "./events.js";

/** @typedef {import("./binding.js").Recipe} Db */
/**
 * A lease handle as plain data (the core's `Lease::snapshot`): what the core rebuilds the period
 * from when it no longer keeps it built (see `#naming`).
 * @typedef {{key: string, holder: string, epoch: number, ttl: number, etag: string | null, deadline: string,
 *   state: any, released: boolean, extra: object, meta: object}} Snapshot
 */

const LEASE_OPTIONS = /** @type {const} */ ({
  ttl: "number", holder: "string", stealIfExpired: "boolean", stateFn: "function", wait: "number", signal: "signal",
});
const WITH_LEASE_OPTIONS = /** @type {const} */ ({ ...LEASE_OPTIONS, every: "number" });
const ATTACH_OPTIONS = /** @type {const} */ ({ holder: "string", ttl: "number", signal: "signal" });

/** The named arguments of an acquisition. @param {string} key @param {any} o */
function leaseArgs(key, o) {
  return { key, ttl: o.ttl, holder: o.holder ?? undefined, stealIfExpired: o.stealIfExpired ?? undefined,
    wait: o.wait ?? undefined, every: o.every ?? undefined };
}

/** `db.lease(key, opts)`: a `Lease`, or null when held by someone else. @param {Db} db @param {string} key @param {any} opts */
export async function acquire(db, key, opts) {
  const c = checked(db, "lease", key, () => {
    string(key, "key");
    if (opts === undefined || opts === null) {
      throw new InvalidArgument("lease options {ttl, holder?, stealIfExpired?, stateFn?} are required");
    }
    const o = options(opts, LEASE_OPTIONS, "lease options");
    if (o.ttl === undefined || o.ttl === null) throw new InvalidArgument("lease options.ttl (seconds) is required");
    const callbacks = o.stateFn ? { stateFn: jsonCallback(o.stateFn, "stateFn's result") } : undefined;
    return { args: leaseArgs(key, o), callbacks, signal: o.signal };
  });
  return leaseHandle(db, await run("lease", db, c));
}

/** `db.attachLease(key, {holder, ttl})`: one read, no write. @param {Db} db @param {string} key @param {any} opts */
export async function attach(db, key, opts) {
  const c = checked(db, "attachLease", key, () => {
    string(key, "key");
    const { holder, ttl, signal } = options(opts, ATTACH_OPTIONS, "attachLease options");
    if (holder === undefined || holder === null) throw new InvalidArgument("attachLease options.holder is required");
    if (ttl === undefined || ttl === null) throw new InvalidArgument("attachLease options.ttl (seconds) is required");
    return { args: { key, holder, ttl }, signal };
  });
  return leaseHandle(db, await run("attachLease", db, c));
}

/** `db.cooperativeWrite(key, fn)`: the new state, or null. @param {Db} db @param {string} key @param {Function} fn @param {any} opts */
export async function cooperativeWrite(db, key, fn, opts) {
  const c = checked(db, "cooperativeWrite", key, () => {
    string(key, "key");
    func(fn, "cooperativeWrite's second argument");
    const { signal } = options(opts, SIGNAL_ONLY, "cooperativeWrite options");
    return { args: { key }, callbacks: { fn: jsonCallback(fn, "the callback's result") }, signal };
  });
  return (await run("cooperativeWrite", db, c)).json;
}

const BREAK_OPTIONS = /** @type {const} */ ({ state: "any", signal: "signal" });

/**
 * `db.breakLease(key, {state?})`: write the next epoch as released, so the stuck holder is fenced
 * (its next write rejects with `LeaseLost`, reason "stolen") and the next acquirer gets a higher
 * epoch. `null` without a lease document, else `{key, epoch, previous}`. Two requests.
 * @param {Db} db @param {string} key @param {any} opts
 */
export async function breakLease(db, key, opts) {
  const c = checked(db, "breakLease", key, () => {
    string(key, "key");
    const o = options(opts, BREAK_OPTIONS, "breakLease options");
    const state = opts != null && Object.hasOwn(opts, "state") && o.state !== undefined ? toJson(o.state, "breakLease options.state") : undefined;
    return { args: { key }, raw: { state }, signal: o.signal };
  });
  const broken = (await run("breakLease", db, c)).json;
  if (broken === null) return null;
  const { epoch: was, holder, deadlineAt, expired, released } = leaseView(broken.previous);
  return { key, epoch: broken.epoch, previous: { epoch: was, holder, deadlineAt, expired, released } };
}

/**
 * A judged lease period from the core (`inspect`'s lease, `breakLease`'s previous one) with its
 * deadline as a Date: `{epoch, holder, deadlineAt, expired, released, expiresIn, state}`.
 * @param {any} view
 */
export function leaseView(view) {
  const { epoch, holder, deadlineAt, expired, released, expiresIn, state } = view;
  return { epoch, holder, deadlineAt: deadlineAt === null ? null : new Date(deadlineAt), expired, released, expiresIn, state };
}

/** A reply's lease snapshot as a handle (null without one). @param {Db} db @param {import("./binding.js").Reply} r */
export function leaseHandle(db, r) {
  return r.lease === undefined ? null : new Lease(db, JSON.parse(r.lease), LEASE_TOKEN, undefined, r);
}

/**
 * `db.withLease(key, opts, fn)`: acquire (waiting up to `wait` seconds), keep the lease alive while
 * `fn(lease, signal)` runs, release it when `fn` settles (also when it throws). Resolves to `fn`'s
 * result, or `null` without calling `fn` when the lease could not be acquired. The core runs it
 * (`with_lease`), so Rust and JS behave the same: `signal` aborts when the lease is lost (or the
 * caller's `signal` aborts), `fn` runs on to its end, and then the call rejects with `fn`'s error,
 * else with the `LeaseLost` (its work was not fenced to the end); a failed release after `fn`
 * resolved rejects with that failure, while `fn`'s own error is never hidden by one.
 * @param {Db} db @param {string} key @param {any} opts @param {Function} fn
 */
export async function withLease(db, key, opts, fn) {
  const c = checked(db, "withLease", key, () => {
    func(fn, "withLease's third argument");
    if (opts === undefined || opts === null) throw new InvalidArgument("withLease options {ttl, ...} are required");
    const o = options(opts, WITH_LEASE_OPTIONS, "withLease options");
    if (o.ttl === undefined || o.ttl === null) throw new InvalidArgument("withLease options.ttl (seconds) is required");
    const stateFn = o.stateFn ? jsonCallback(o.stateFn, "stateFn's result") : undefined;
    return { args: leaseArgs(key, o), callbacks: { stateFn }, signal: o.signal };
  });
  return await withHeld(db, "withLease", c, fn); // awaited: see `updateState`
}

/**
 * `withLease` and `withPermit`: `fn(lease, signal)` under a held lease (`underLease`), resolving
 * to what `fn` resolved to, or null when the core could not acquire one (`fn` not called).
 * @param {Db} db @param {string} op @param {import("./binding.js").Call} c @param {Function} fn
 */
export async function withHeld(db, op, c, fn) {
  /** @type {any} */
  let result;
  const use = (/** @type {Lease} */ lease, /** @type {AbortSignal} */ signal) => Promise.resolve(fn(lease, signal)).then((r) => {
    result = r;
  });
  return (await underLease(db, op, c, use)) ? result : null;
}

/**
 * A core call that holds a lease while a JS function runs (`withLease`, `once`, `withPermit`):
 * the core acquires the lease and keeps it alive, then calls `use(lease, signal)` with the live
 * handle; `signal` aborts when the lease is lost or the caller's `signal` aborts. What `use`
 * resolves to is handed to the core. Resolves to the core's reply.
 * @param {Db} db @param {string} op @param {import("./binding.js").Call} c
 * @param {(lease: Lease, signal: AbortSignal) => Promise<unknown>} use
 */
export async function underLease(db, op, c, use) {
  /** @type {Lease | undefined} */
  let lease;
  let unlink = () => {};
  const body = (/** @type {string} */ json) => {
    const { live, lease: snapshot } = JSON.parse(json);
    lease = new Lease(db, snapshot, LEASE_TOKEN, live);
    let signal = lease.signal;
    if (c.signal) ({ signal, unlink } = eitherSignal(lease.signal, c.signal));
    // Keep-alive runs inside the core: the handle hears from it when the period ends.
    lease[FOLLOW_LIVE]();
    return use(lease, signal);
  };
  try {
    return (await run(op, db, { ...c, callbacks: { ...c.callbacks, fn: body } })).json;
  } catch (e) {
    // A lost lease rejects with the handle's own error for it, the one its `signal.reason` is.
    throw e instanceof LeaseLost && lease !== undefined && e.key === lease.key ? thrownHere(lease[DETACH](e)) : e;
  } finally {
    // The call is over: the core's entry for the lease goes, the handle keeps its last snapshot.
    lease?.[DETACH]();
    unlink();
  }
}


/** Package-private: the handle's period is followed in the core's live table (see `withLease`). */
const FOLLOW_LIVE = Symbol("fencepost.followLive");
/** Package-private: the core's live entry goes; the handle takes its snapshot back. */
const DETACH = Symbol("fencepost.detach");
/** Only this module makes handles. */
const LEASE_TOKEN = Symbol("fencepost.lease");

/** Package-private: the handle's period as it stands (see LIVE_FIELDS). */
const VIEW = Symbol("fencepost.view");

const live = (/** @type {(s: Snapshot) => unknown} */ read) => ({
  enumerable: true,
  get() {
    return read(/** @type {any} */ (this)[VIEW]());
  },
});
const LIVE_FIELDS = {
  // A fresh copy each time, as a value parsed from the store would be: the handle's own stays its own.
  state: live((s) => JSON.parse(JSON.stringify(s.state))),
  deadlineAt: live((s) => new Date(/** @type {any} */ (s).deadlineMs)),
  etag: live((s) => s.etag ?? undefined),
  released: live((s) => s.released),
};

/**
 * `e`, its stack taken again where it is thrown now. A period's `LeaseLost` is one object (every
 * call after the end rejects with it, and `signal.reason` is it), so that each caller still finds
 * its own frame in the stack, as every fencepost error carries it (one object: its stack is the
 * latest thrower's). Where the runtime has no
 * `Error.captureStackTrace`, the stack stays the one it was made with.
 * @template E @param {E} e @returns {E}
 */
function thrownHere(e) {
  // V8's (Node, Deno, workerd, Chromium) and Bun's; not in the standard library's types.
  const capture = /** @type {{captureStackTrace?: (e: object, above: Function) => void}} */ (/** @type {unknown} */ (Error));
  if (e instanceof Error) capture.captureStackTrace?.(e, thrownHere);
  return e;
}

/** The reason of a period that ended: a failure record from the core, made a `LeaseLost` when asked. */
function lostError(/** @type {unknown} */ ended) {
  return ended instanceof Error ? ended : fromFailure(ended);
}

/**
 * What each handle knows of its period, as the core wrote it (sent back as it is), and the same
 * parsed when a field is read. Kept here, not in the handle's private fields: a browser's console
 * lists those, and the snapshot holds the holder and the write tokens.
 * @typedef {{text: string | undefined, parsed: Snapshot | undefined}} SnapshotTexts
 * @type {WeakMap<Lease, SnapshotTexts>}
 */
const SNAPSHOTS = new WeakMap();

/** One ownership period `(key, epoch, holder)`. Every write is guarded; `LeaseLost` means stop. */
export class Lease {
  #db;
  /** The core's live entry while keep-alive runs there (calls go through it meanwhile). @type {number | undefined} */
  #live;
  /** Where the core keeps this period built since the last call, if it still does: the next call
   * names it, and sends the snapshot beside only to be read if the core no longer has it. @type {number | undefined} */
  #kept;
  /** Why the period is over (a failure record, or the `LeaseLost` met), once it is. @type {unknown} */
  #ended;
  /** Made when `signal` is first asked for (an AbortController per lease is not free). @type {AbortController | undefined} */
  #endedSignal;
  /** @type {{stop(): Promise<void>} | undefined} */
  #keeper;
  /** A keep-alive told to stop and still settling (see `keepAlive`). @type {Promise<unknown> | undefined} */
  #stopping;

  /** @internal */
  constructor(/** @type {Db} */ db, /** @type {Snapshot} */ snapshot, /** @type {symbol} */ token,
    /** @type {number | undefined} */ live = undefined, /** @type {import("./binding.js").Reply | undefined} */ reply = undefined) {
    if (token !== LEASE_TOKEN) throw new InvalidArgument("a Lease is made by db.lease() or db.attachLease()");
    this.#db = db;
    SNAPSHOTS.set(this, { text: reply?.lease, parsed: snapshot });
    this.#kept = reply?.kept;
    this.#live = live;
    /** @readonly @type {string} */
    this.key;
    /** The fence token: strictly increases with each acquisition. @readonly @type {number} */
    this.epoch;
    /** @readonly @type {number} */
    this.ttl;
    fixedFields(this, { key: snapshot.key, epoch: snapshot.epoch, ttl: snapshot.ttl });
    /** The state this handle last saw or wrote. @readonly @type {any} */
    this.state;
    /** @readonly @type {Date} */
    this.deadlineAt;
    /** @readonly @type {string | undefined} */
    this.etag;
    /** @readonly @type {boolean} */
    this.released;
    // What changes with each write — including keep-alive's renewals in the background — is read
    // when asked: own enumerable accessors, so spreads, `Object.keys` and every inspector see them.
    Object.defineProperties(this, LIVE_FIELDS);
  }

  /** The holder token: a credential (whoever knows it can attach), so inspection redacts it. */
  get holder() {
    return this.#snapshot().holder;
  }

  /** The snapshot as data, parsed from its text when first read since the last call. @returns {Snapshot} */
  #snapshot() {
    const s = /** @type {SnapshotTexts} */ (SNAPSHOTS.get(this));
    return (s.parsed ??= JSON.parse(/** @type {string} */ (s.text)));
  }

  /** The snapshot as the text the core takes. */
  #snapshotText() {
    const s = /** @type {SnapshotTexts} */ (SNAPSHOTS.get(this));
    return (s.text ??= JSON.stringify(s.parsed));
  }

  /** Aborted (reason: a `LeaseLost`) as soon as this handle learns its period is over. */
  get signal() {
    this.#endedSignal ??= new AbortController();
    this.#follow();
    return this.#endedSignal.signal;
  }

  /** The handle's period as it stands: from the core's live entry while keep-alive runs there. @returns {Snapshot} */
  [VIEW]() {
    if (this.#live !== undefined) this.#learn(runSync("lease.view", this.#db, { args: { live: this.#live } }));
    return this.#snapshot();
  }

  /** Follow the core's live entry: `signal` aborts as soon as the core learns the period is over. */
  [FOLLOW_LIVE]() {
    const live = this.#live;
    if (live === undefined) return;
    run("lease.whenEnded", this.#db, { args: { live } }).then((r) => this.#learn(r), () => {});
  }

  /**
   * The core's live entry goes: the handle keeps the period's last snapshot (and its end). With
   * `lost`, the `LeaseLost` the held call rejected with: returns the handle's own error for the
   * period's end (that one, unless the handle knew of the end before), which `signal` carries, so
   * the call rejects with the very object `signal.reason` is.
   * @param {LeaseLost} [lost]
   */
  [DETACH](lost = undefined) {
    const live = this.#live;
    if (live !== undefined) {
      const r = runSync("lease.detach", this.#db, { args: { live } });
      // Off the entry before taking in what it says: a period that ended aborts `signal` then, and
      // its listeners read the handle's fields from the snapshot, not from the entry now gone.
      this.#live = undefined;
      this.#learn(r, lost);
    } else if (lost !== undefined) {
      this.#end(lost);
    }
    return lost === undefined ? undefined : this.#endedError();
  }

  /**
   * Take in what a call learnt: the snapshot after it, and whether the period ended (`lost`: the
   * `LeaseLost` the call is about to throw, the end's reason when it is the first the handle hears of).
   * @param {import("./binding.js").Reply} r @param {LeaseLost} [lost]
   */
  #learn(r, lost = undefined) {
    // Once the period is over, the handle keeps its view from the end (a live entry let go of
    // later may hold an older one).
    if (r.lease !== undefined && this.#ended === undefined) {
      const s = /** @type {SnapshotTexts} */ (SNAPSHOTS.get(this));
      s.text = r.lease;
      s.parsed = undefined;
      this.#kept = r.kept;
    }
    const ended = lost ?? r.ended;
    if (ended !== undefined) this.#end(ended);
  }

  /** The period is over (the first reason wins): abort `signal` if anyone asked for it. @param {unknown} why */
  #end(why) {
    if (this.#ended === undefined) this.#ended = why;
    this.#follow();
  }

  /** The `LeaseLost` the period ended with, made once from the core's record and kept: every call
   * after the end, and `signal.reason`, hand out this one object. */
  #endedError() {
    return (this.#ended = lostError(this.#ended));
  }

  /** Abort `signal` (if made) once the period is over. A reason is only made when a signal is there to carry it. */
  #follow() {
    const controller = this.#endedSignal;
    if (!controller) return;
    try {
      if (!controller.signal.aborted && this.#ended !== undefined) controller.abort(this.#endedError());
    } catch {
      // workerd: a controller made while another request ran cannot be touched from this one
      // ("Cannot perform I/O on behalf of a different request"). This request gets its own.
      this.#endedSignal = new AbortController();
      if (this.#ended !== undefined) this.#endedSignal.abort(this.#endedError());
    }
  }

  /**
   * One call through the handle, on its live entry or its snapshot; the period may be over after
   * it, which aborts `signal`. A handle whose period is over rejects at once, without a request.
   * @param {string} op @param {import("./binding.js").Call} c
   */
  async #call(op, c) {
    if (this.#ended !== undefined) throw refused(this.#db, `lease.${op}`, this.key, thrownHere(this.#endedError()));
    const r = await run(`lease.${op}`, this.#db, this.#naming(c));
    const e = r.failure === undefined ? undefined : fromFailure(r.failure);
    const lost = e instanceof LeaseLost ? e : undefined;
    // A call that settles after the handle learnt of its period's end (a renew racing a release)
    // started from an older view: the handle keeps the view it had at the end.
    if (this.#ended !== undefined) r.lease = undefined;
    this.#learn(r, lost);
    // A lost period: the handle's own error for it, the one `signal.reason` is.
    if (lost !== undefined) throw thrownHere(this.#endedError());
    if (e !== undefined) throw e;
    return r.json;
  }

  /**
   * A call `c` naming this handle's period: its live entry, or where the core keeps it, with the
   * snapshot beside (the core reads it only when it no longer keeps the period).
   * @param {import("./binding.js").Call} c @returns {import("./binding.js").Call}
   */
  #naming(c) {
    const live = this.#live;
    if (live !== undefined) return { ...c, args: { ...c.args, live } };
    const kept = this.#kept;
    this.#kept = undefined; // the call takes the core's entry out: a later call that reaches the core without a reply sends the snapshot
    return { ...c, args: { ...c.args, kept }, callbacks: { ...c.callbacks, lease: this.#snapshotText() } };
  }

  /** deadline = now + ttl; the state is kept (cooperative writes absorbed). */
  async renew(/** @type {any} */ opts) {
    const { signal } = checked(this.#db, "lease.renew", this.key, () => options(opts, SIGNAL_ONLY, "renew options"));
    await this.#call("renew", { signal });
  }

  /** Guarded read-modify-write of the state; resolves to the state written. */
  async updateState(/** @type {Function} */ fn, /** @type {any} */ opts) {
    const c = checked(this.#db, "lease.updateState", this.key, () => {
      func(fn, "updateState's argument");
      const { signal } = options(opts, SIGNAL_ONLY, "updateState options");
      return { callbacks: { fn: jsonCallback(fn, "updateState's result") }, signal };
    });
    return await this.#call("updateState", c); // awaited here: Bun keeps the caller's frame only through an await
  }

  /** Guarded replace of the state (unseen cooperative writes are discarded). */
  async write(/** @type {unknown} */ state, /** @type {any} */ opts) {
    const c = checked(this.#db, "lease.write", this.key, () => {
      const { signal } = options(opts, SIGNAL_ONLY, "write options");
      return { raw: { state: toJson(state, "state") }, signal };
    });
    return await this.#call("write", c);
  }

  /** holder = null, deadline = now; `{state}` optionally sets a final state. @param {any} [opts] */
  async release(opts) {
    const c = checked(this.#db, "lease.release", this.key, () => {
      const o = options(opts, { state: "any", signal: "signal" }, "release options");
      const hasState = opts != null && Object.hasOwn(opts, "state") && opts.state !== undefined;
      return { raw: { state: hasState ? toJson(o.state, "release options.state") : undefined }, signal: o.signal };
    });
    await this.#call("release", c);
  }

  /**
   * Renew in the background every `every` seconds (default ttl/3) until stopped, released or lost.
   * Failed renewals are retried within the deadline; when a renewal cannot succeed before it,
   * `signal` aborts (reason: `LeaseLost`) before the deadline passes. Idempotent: a second call
   * while it runs returns the same handle; once it has been told to stop, a call starts a new one
   * (once the last has settled). `stop()` resolves once keep-alive has stopped (a renewal in
   * flight settled). Meanwhile the core keeps the lease in its live table; the entry goes when
   * keep-alive stops.
   * @returns {{stop(): Promise<void>}}
   */
  keepAlive(/** @type {any} */ opts) {
    const { every } = options(opts, { every: "number" }, "keepAlive options");
    if (this.#ended !== undefined) throw thrownHere(this.#endedError());
    if (this.#keeper) return this.#keeper;
    // Inside `withLease` the core keeps this period alive already: nothing more to run.
    if (this.#live !== undefined && !this.#stopping) {
      const inert = { stop: async () => { if (this.#keeper === inert) this.#keeper = undefined; } };
      return (this.#keeper = inert);
    }
    /** @type {{abort?: AbortController, done?: Promise<unknown>, begun?: Promise<void>}} */
    const run = {};
    const keeper = {
      stop: async () => {
        const settled = (async () => {
          await run.begun;
          try {
            run.abort?.abort();
          } catch {
            // Workers: a keep-alive started in an invocation that has ended cannot be told to stop
            // ("Cannot perform I/O on behalf of a different request"), and never wakes again (its
            // timers went with that invocation): the handle takes its period back from it now.
            this[DETACH]();
            return;
          }
          await run.done;
        })();
        if (this.#keeper === keeper) {
          // From now on `keepAlive()` makes a new one, started once this one has settled.
          this.#keeper = undefined;
          const over = () => {
            if (this.#stopping === stopping) this.#stopping = undefined;
          };
          const stopping = (this.#stopping = settled.then(over, over));
        }
        await settled;
      },
    };
    const stopping = this.#stopping;
    if (stopping === undefined) {
      this.#run(keeper, run, every); // a refusal (a bad interval, a period over) throws here
    } else {
      // The last one is still settling (a renewal in flight): this one starts after it, unless it
      // is stopped first. Its interval is judged now, as a start would (the core's rule, stated
      // in the docs: 0 < every < ttl); a period found over then ends the handle, so `signal` tells.
      if (every != null && !(every > 0 && every < this.ttl)) {
        throw new InvalidArgument(`keep-alive interval must be > 0 and < the ttl (${this.ttl} s), got ${every}`);
      }
      run.begun = stopping.then(() => {
        if (this.#keeper !== keeper || this.#ended !== undefined) return;
        try {
          this.#run(keeper, run, every);
        } catch (e) {
          this.#keeper = undefined;
          if (e instanceof LeaseLost) this.#end(e);
          else throw e; // `stop()` rejects with it
        }
      });
    }
    return (this.#keeper = keeper);
  }

  /**
   * Start `keeper`'s keep-alive in the core (`run` gets its stop and its end).
   * @param {object} keeper @param {{abort?: AbortController, done?: Promise<unknown>}} run @param {number | null | undefined} every
   */
  #run(keeper, run, every) {
    const stop = new AbortController();
    const started = (/** @type {number} */ live) => {
      this.#live = live;
    };
    /** @type {Promise<unknown>} */
    let running;
    try {
      const c = this.#naming({ args: { every: every ?? undefined }, callbacks: { fn: started }, signal: stop.signal });
      running = start("lease.keepAlive", this.#db, c);
    } catch (e) {
      // Refused at once (a bad interval, a period found over): the core's entry goes with it.
      // An end is the handle's own `LeaseLost`, the one `signal.reason` is.
      throw thrownHere(this[DETACH](e instanceof LeaseLost ? e : undefined) ?? e);
    }
    // However it ends (stopped, released, lost), the handle takes its snapshot back from the core,
    // and a later `keepAlive()` starts anew.
    const ended = () => {
      this[DETACH]();
      if (this.#keeper === keeper) this.#keeper = undefined;
    };
    run.abort = stop;
    run.done = running.then(ended, (e) => {
      ended();
      this.#end(e);
    });
  }

  /** `await using lease = …`: releases at the end of the scope (nothing to do when already over). */
  async [ASYNC_DISPOSE]() {
    await this.#keeper?.stop();
    if (this.#ended !== undefined) return;
    try {
      await this.release();
    } catch (e) {
      if (!(e instanceof LeaseLost)) throw e;
    }
  }

  /** A snapshot for logs (`JSON.stringify(lease)`), without the holder token (a credential). */
  toJSON() {
    const { key, epoch, ttl, state, deadlineAt, etag, released } = this;
    return { key, epoch, ttl, state, deadlineAt: deadlineAt.toISOString(), etag: etag ?? null, released };
  }
}
pinNames({ Lease });
inspectable(Lease, (l) => {
  const { key, epoch, ttl, state, deadlineAt, etag, released } = l;
  return { key, epoch, holder: "[redacted]", ttl, state, deadlineAt, etag, released };
});
