// claim: put-if-absent; exactly one caller wins and every loser gets the winner's value.

import { SIGNAL_ONLY, options, string } from "./options.js";
import { toJson } from "./json.js";
import { run } from "./binding.js";

/**
 * `{won, key, value, etag}`.
 * @param {import("./binding.js").Lazy<import("./fencepost.js").Fencepost>} db
 * @param {string} key @param {unknown} value @param {any} opts
 */
export async function claim(db, key, value, opts) {
  string(key, "key");
  const { signal } = options(opts, SIGNAL_ONLY, "claim options");
  const json = toJson(value, "value");
  const [won, k, winner, etag] = await run(() => db.get().claim(key, json, signal));
  return { won, key: k, value: JSON.parse(winner), etag };
}
