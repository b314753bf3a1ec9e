// The local test servers (SeaweedFS, moto; Azurite, fake-gcs-server) as the JS runners, the chaos
// suite and the benches reach them: their settings, and store options and factories made from them.
//
// scripts/servers/start.sh writes FENCEPOST_<NAME>_{ENDPOINT,BUCKET,ACCESS_KEY,SECRET_KEY,REGION}
// for each S3 server it runs (NAME: SEAWEED, MOTO), FENCEPOST_AZURITE_{ENDPOINT,ACCOUNT,KEY,CONTAINER}
// and FENCEPOST_FAKEGCS_{ENDPOINT,BUCKET} to .run/servers.env; scripts/test.sh exports them.
// `serverSettings()` (Node and Deno) takes each server from the environment when its ENDPOINT is
// set there, else from that file (a runner started by hand while the servers run), else leaves it
// out: with no servers at all, suites run their memory (and R2) cases only. The rest works in any
// runtime (browsers and workerd get the settings handed to them).
//
//   import { serverSettings, s3Options, s3Factories } from "../../js/support/servers.js";
//   const settings = serverSettings();                 // {FENCEPOST_SEAWEED_ENDPOINT: …, …}
//   const seaweed = s3Options(settings, "seaweed");    // s3Store options, or null when not running
//   const stores = s3Factories(lib, settings, "node"); // {seaweed: () => s3Store, moto: …}
//   const clouds = cloudFactories(lib, settings, "node"); // {azurite: () => azureStore, fakegcs: () => gcsStore}
//
// No static `node:` import, and nothing read when the module loads: under `deno test` a graph with
// a `node:` import needs npm:@types/node listed in package.json as soon as a .ts file is
// type-checked, and pages and workerd import this module too. `process.getBuiltinModule`
// (Node ≥ 20.16, Deno 2) gives the same modules, when called.

export const SERVERS = ["SEAWEED", "MOTO"];
/** The Azure Blob and GCS emulators. */
export const CLOUD_SERVERS = ["AZURITE", "FAKEGCS"];
const FIELDS = ["ENDPOINT", "BUCKET", "ACCESS_KEY", "SECRET_KEY", "REGION", "ACCOUNT", "KEY", "CONTAINER"];

const builtin = (name) => globalThis.process.getBuiltinModule(name);

/** Where start.sh writes: $FENCEPOST_RUN_DIR/servers.env (default <repo>/.run/servers.env). */
export function serversEnvFile() {
  let dir;
  try {
    dir = process.env.FENCEPOST_RUN_DIR;
  } catch {} // deno without --allow-env
  return (dir || builtin("node:url").fileURLToPath(new URL("../../.run", import.meta.url))) + "/servers.env";
}

/** The FENCEPOST_<NAME>_* lines of a servers.env file ({} when it is absent or unreadable). */
export function readServersEnv(file = serversEnvFile()) {
  let text;
  try {
    text = builtin("node:fs").readFileSync(file, "utf8");
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

function environment() {
  try {
    return { ...process.env };
  } catch {
    return {}; // deno without --allow-env
  }
}

/**
 * The FENCEPOST_<NAME>_* settings of every configured server of `names`, one object. A server
 * whose ENDPOINT is in `env` is taken whole from `env`; otherwise whole from `file`; never mixed.
 */
export function serverSettings({ env = environment(), file, names = [...SERVERS, ...CLOUD_SERVERS] } = {}) {
  let fromFile;
  const out = {};
  for (const name of names) {
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

let counter = 0;

/** A unique key prefix, so cases (and runtimes) sharing a bucket never see each other's keys. */
export function freshPrefix(runtime) {
  counter += 1;
  return `js-${runtime}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}-${counter}`;
}

/**
 * `s3Store` options for server `name` ("SEAWEED" | "MOTO", any case) from `settings` (an env-like
 * object: `process.env`, `serverSettings()`, what a runner hands a page), or null when it is not
 * configured. The one place the FENCEPOST_<NAME>_* settings become store options.
 */
export function s3Options(settings, name) {
  const n = name.toUpperCase();
  const endpoint = settings[`FENCEPOST_${n}_ENDPOINT`];
  if (!endpoint) return null;
  return {
    endpoint,
    bucket: settings[`FENCEPOST_${n}_BUCKET`],
    region: settings[`FENCEPOST_${n}_REGION`] ?? "us-east-1",
    accessKeyId: settings[`FENCEPOST_${n}_ACCESS_KEY`],
    secretAccessKey: settings[`FENCEPOST_${n}_SECRET_KEY`],
  };
}

/** Store factories (a fresh prefix each) for every server of `names` configured in `settings`. */
export function s3Factories(lib, settings, runtime, names = SERVERS) {
  const out = {};
  for (const name of names) {
    const options = s3Options(settings, name);
    // Not configured (the suite run directly, without scripts/test.sh): memory cases only.
    if (!options) {
      console.log(`# FENCEPOST_${name}_ENDPOINT is not set: skipping ${name.toLowerCase()} (scripts/test.sh starts it)`);
      continue;
    }
    out[name.toLowerCase()] = () => lib.s3Store({ ...options, prefix: freshPrefix(runtime) });
  }
  return out;
}

/**
 * Store options for cloud emulator `name` ("AZURITE" → `azureStore`, "FAKEGCS" → `gcsStore`) from
 * `settings`, or null when it is not configured.
 */
export function cloudOptions(settings, name) {
  const n = name.toUpperCase();
  const endpoint = settings[`FENCEPOST_${n}_ENDPOINT`];
  if (!endpoint) return null;
  if (n === "AZURITE") {
    return {
      endpoint,
      account: settings.FENCEPOST_AZURITE_ACCOUNT,
      accountKey: settings.FENCEPOST_AZURITE_KEY,
      container: settings.FENCEPOST_AZURITE_CONTAINER,
    };
  }
  return { endpoint, bucket: settings[`FENCEPOST_${n}_BUCKET`] };
}

/** A store on cloud emulator `name` with `options` (and a prefix, when given). */
export function cloudStore(lib, name, options) {
  return name.toUpperCase() === "AZURITE" ? lib.azureStore(options) : lib.gcsStore(options);
}

/**
 * Store factories (a fresh prefix each) for the Azure and GCS emulators configured in `settings`. On
 * fake-gcs-server each suite has a bucket of its own (`<bucket>-<runtime>`, made by start.sh): its
 * memory backend scans a bucket's objects on every request.
 */
export function cloudFactories(lib, settings, runtime, names = CLOUD_SERVERS) {
  const out = {};
  for (const name of names) {
    const options = cloudOptions(settings, name);
    if (options?.bucket) options.bucket = `${options.bucket}-${runtime}`;
    if (!options) {
      console.log(`# FENCEPOST_${name}_ENDPOINT is not set: skipping ${name.toLowerCase()} (scripts/test.sh starts it)`);
      continue;
    }
    out[name.toLowerCase()] = () => cloudStore(lib, name, { ...options, prefix: freshPrefix(runtime) });
  }
  return out;
}
