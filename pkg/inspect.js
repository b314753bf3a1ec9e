// inspect: what a key holds, for operators — a lease with its period judged now, any other JSON
// value (claims and docs are the same bytes on the wire), or bytes. One request, nothing written.

import { SIGNAL_ONLY, options, string } from "./options.js";
import { run } from "./binding.js";

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
  if (kind === "lease") {
    const [epoch, holder, deadlineMs, expired, released, expiresIn, state] = lease;
    out.lease = { epoch, holder, deadlineAt: date(deadlineMs), expired, released, expiresIn, state: JSON.parse(state) };
  }
  return out;
}
