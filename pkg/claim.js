// claim: put-if-absent; exactly one caller wins and every loser gets the winner's value.

import { SIGNAL_ONLY, options, string } from "./options.js";
import { toJson } from "./json.js";
import { run } from "./binding.js";
import { checked } from "./events.js";

/**
 * `{won, key, value, etag}`.
 * @param {import("./binding.js").Recipe} db @param {string} key @param {unknown} value @param {any} opts
 * @returns {Promise<{won: boolean, key: string, value: any, etag: string}>}
 */
export async function claim(db, key, value, opts) {
  const c = checked(db, "claim", key, () => {
    string(key, "key");
    const { signal } = options(opts, SIGNAL_ONLY, "claim options");
    return { args: { key }, raw: { value: toJson(value, "value") }, signal };
  });
  return (await run("claim", db, c)).json;
}
