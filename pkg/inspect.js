// What an operator reads and cleans up: inspect (what a key holds — a lease with its period judged
// now, any other JSON value, or bytes; one request) and prune (old objects under a prefix).

import { InvalidArgument } from "./errors.js";
import { SIGNAL_ONLY, options, string } from "./options.js";
import { run } from "./binding.js";
import { checked } from "./events.js";
import { leaseView } from "./lease.js";

/**
 * `db.inspect(key)`: `null` when absent, else `{key, etag, size, lastModified, kind, value}` and,
 * for a lease, `lease: {epoch, holder, deadlineAt, expired, released, expiresIn, state}`.
 * @param {import("./binding.js").Recipe} db
 * @param {string} key @param {any} opts
 */
export async function inspect(db, key, opts) {
  const signal = checked(db, "inspect", key, () => {
    string(key, "key");
    return options(opts, SIGNAL_ONLY, "inspect options").signal;
  });
  return inspection(key, await run("inspect", db, { args: { key }, signal }));
}

/** What a key holds as `inspect` (and each step of `watch`) answers it. @param {string} key @param {import("./binding.js").Reply} r */
export function inspection(key, r) {
  const seen = r.json;
  if (seen === null) return null;
  const { kind, etag, size, lastModified, value, lease } = seen;
  /** @type {any} */
  const out = { key, etag, size, lastModified: lastModified === null ? null : new Date(lastModified), kind, value: kind === "bytes" ? r.bytes : value };
  if (kind === "lease") out.lease = leaseView(lease);
  return out;
}

const PRUNE_OPTIONS = /** @type {const} */ ({ olderThan: "number", dryRun: "boolean", signal: "signal" });

/**
 * `db.prune(prefix, {olderThan, dryRun?})`: delete the objects under `prefix` last modified more
 * than `olderThan` seconds ago, never a held lease; `{deleted, kept, keys}`.
 * @param {import("./binding.js").Recipe} db
 * @param {string} prefix @param {any} opts
 */
export async function prune(db, prefix, opts) {
  const c = checked(db, "prune", prefix, () => {
    string(prefix, "prefix");
    const o = options(opts, PRUNE_OPTIONS, "prune options");
    if (o.olderThan === undefined || o.olderThan === null) throw new InvalidArgument("prune options.olderThan (seconds) is required");
    return { args: { prefix, olderThan: o.olderThan, dryRun: o.dryRun ?? false }, signal: o.signal };
  });
  return /** @type {{deleted: number, kept: number, keys: string[]}} */ ((await run("prune", db, c)).json);
}
