// What an operator reads and cleans up: inspect (what a key holds — a lease with its period judged
// now, any other JSON value, or bytes; one request) and prune (old objects under a prefix).

import { InvalidArgument } from "./errors.js";
import { SIGNAL_ONLY, options, string } from "./options.js";
import { run } from "./binding.js";
import { leaseView } from "./lease.js";

/** @param {number | undefined} ms */
const date = (ms) => (ms === undefined ? null : new Date(ms));

/**
 * `db.inspect(key)`: `null` when absent, else `{key, etag, size, lastModified, kind, value}` and,
 * for a lease, `lease: {epoch, holder, deadlineAt, expired, released, expiresIn, state}`.
 * @param {import("./binding.js").Lazy<import("./fencepost.js").Fencepost>} db
 * @param {string} key @param {any} opts
 */
export async function inspect(db, key, opts) {
  string(key, "key");
  const { signal } = options(opts, SIGNAL_ONLY, "inspect options");
  const seen = await run(() => db.get().inspect(key, signal));
  if (seen === null) return null;
  const [kind, etag, size, lastModifiedMs, value, lease] = seen;
  /** @type {any} */
  const out = { key, etag, size, lastModified: date(lastModifiedMs), kind, value: kind === "bytes" ? value : JSON.parse(value) };
  if (kind === "lease") out.lease = leaseView(lease);
  return out;
}

const PRUNE_OPTIONS = /** @type {const} */ ({ olderThan: "number", dryRun: "boolean", signal: "signal" });

/**
 * `db.prune(prefix, {olderThan, dryRun?})`: delete the objects under `prefix` last modified more
 * than `olderThan` seconds ago, never a held lease; `{deleted, kept, keys}`.
 * @param {import("./binding.js").Lazy<import("./fencepost.js").Fencepost>} db
 * @param {string} prefix @param {any} opts
 */
export async function prune(db, prefix, opts) {
  string(prefix, "prefix");
  const o = options(opts, PRUNE_OPTIONS, "prune options");
  if (o.olderThan === undefined || o.olderThan === null) throw new InvalidArgument("prune options.olderThan (seconds) is required");
  const olderThan = o.olderThan;
  const [deleted, kept, keys] = await run(() => db.get().prune(prefix, olderThan, o.dryRun ?? false, o.signal));
  return { deleted, kept, keys };
}
