// The one reader of the local test servers' settings for the JS runners (Node and Deno).
//
// scripts/servers/start.sh writes FENCEPOST_<NAME>_{ENDPOINT,BUCKET,ACCESS_KEY,SECRET_KEY,REGION}
// for each server it runs (NAME: SEAWEED, MOTO) to .run/servers.env; scripts/test.sh exports them.
// `serverSettings()` takes each server from the environment when its ENDPOINT is set there, else
// from that file (a runner started by hand while the servers run), else leaves it out: with no
// servers at all, suites run their memory (and R2) cases only.
//
//   import { serverSettings, s3Options } from "../../scripts/servers/settings.mjs";
//   const settings = serverSettings();           // {FENCEPOST_SEAWEED_ENDPOINT: …, …}
//   const seaweed = s3Options(settings, "seaweed"); // s3Store options, or null when not running
//
// No static `node:` import: under `deno test` a graph with one needs npm:@types/node listed in
// package.json as soon as a .ts file is type-checked. `process.getBuiltinModule` (Node ≥ 20.16,
// Deno 2) gives the same modules without that.
const { readFileSync } = process.getBuiltinModule("node:fs");
const { fileURLToPath } = process.getBuiltinModule("node:url");

export const SERVERS = ["SEAWEED", "MOTO"];
const FIELDS = ["ENDPOINT", "BUCKET", "ACCESS_KEY", "SECRET_KEY", "REGION"];
/** Where start.sh writes: $FENCEPOST_RUN_DIR/servers.env (default <repo>/.run/servers.env). */
export const SERVERS_ENV = runDir() + "/servers.env";

/** The FENCEPOST_<NAME>_* lines of a servers.env file ({} when it is absent or unreadable). */
export function readServersEnv(file = SERVERS_ENV) {
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return {}; // no file (no servers running), or no permission to read it (deno without --allow-read)
  }
  const out = {};
  for (const line of text.split("\n")) {
    const m = /^(FENCEPOST_[A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) out[m[1]] = m[2].replace(/^(['"])(.*)\1$/, "$2");
  }
  return out;
}

function runDir() {
  let dir;
  try {
    dir = process.env.FENCEPOST_RUN_DIR;
  } catch {} // deno without --allow-env
  return dir || fileURLToPath(new URL("../../.run", import.meta.url));
}

function environment() {
  try {
    return { ...process.env };
  } catch {
    return {}; // deno without --allow-env
  }
}

/**
 * Every configured server's FENCEPOST_<NAME>_* settings, one object. A server whose ENDPOINT is
 * in `env` is taken whole from `env`; otherwise whole from `file`; never mixed.
 */
export function serverSettings({ env = environment(), file = SERVERS_ENV } = {}) {
  let fromFile;
  const out = {};
  for (const name of SERVERS) {
    let source = env;
    if (!env[`FENCEPOST_${name}_ENDPOINT`]) source = fromFile ??= readServersEnv(file);
    if (!source[`FENCEPOST_${name}_ENDPOINT`]) continue;
    for (const f of FIELDS) {
      const k = `FENCEPOST_${name}_${f}`;
      if (source[k] !== undefined) out[k] = source[k];
    }
  }
  return out;
}
