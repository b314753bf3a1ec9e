// once: run a function once per key, its result recorded (the core's `once`): a duplicate gets the
// recorded result in one request; a runner that dies is replaced after its ttl; a failure is
// recorded and the next call runs the function again.

import { InvalidArgument } from "./errors.js";
import { func, options, string } from "./options.js";
import { callbackJson } from "./json.js";
import { underLease } from "./lease.js";
import { checked } from "./events.js";

const ONCE_OPTIONS = /** @type {const} */ ({ ttl: "number", wait: "number", holder: "string", every: "number", signal: "signal" });

/**
 * `db.once(key, fn, {ttl = 60, wait = 0, holder?, every?, signal?}?)`: `{status: "done", value, ran}`
 * (the recorded result; `ran` only for the call that ran `fn`), or `{status: "running", deadlineAt}`
 * while another holder runs it (after waiting up to `wait` seconds for it to finish or expire).
 * `fn(signal)` runs under a lease kept alive meanwhile; `signal` aborts when the lease is lost (or
 * the caller's `signal` aborts). Its result must be JSON; when it throws, the failure is recorded
 * and the error rethrown, and the next call runs `fn` again.
 * @param {import("./binding.js").Recipe} db @param {string} key @param {Function} fn @param {any} opts
 * @returns {Promise<{status: "done", value: any, ran: boolean} | {status: "running", deadlineAt: Date}>}
 */
export async function once(db, key, fn, opts) {
  const { args, signal } = checked(db, "once", key, () => {
    string(key, "key");
    func(fn, "once's second argument");
    const o = options(opts, ONCE_OPTIONS, "once options");
    return { args: { key, ttl: o.ttl ?? undefined, wait: o.wait ?? undefined, holder: o.holder ?? undefined, every: o.every ?? undefined }, signal: o.signal };
  });
  // The core records what `fn` resolved to as JSON text; a result JSON cannot hold is refused here
  // as the core's own InvalidArgument, which the core records as the run's failure.
  const use = async (/** @type {unknown} */ _lease, /** @type {AbortSignal} */ signal) => callbackJson(await fn(signal), "once's result");
  const answer = await underLease(db, "once", { args, signal }, use);
  if (answer.status === "done") return { status: "done", value: answer.value, ran: answer.ran };
  if (answer.status === "running") return { status: "running", deadlineAt: new Date(answer.deadlineMs) };
  throw new InvalidArgument(`once: an answer the package does not know: ${answer.status}`);
}
