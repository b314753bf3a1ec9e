// Store factories shared by the runtime runners: a fresh namespace per case on each server.
// Servers come from FENCEPOST_<NAME>_* settings written by scripts/servers/start.sh.

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

/** Store factories for every server configured in `settings` (an env-like object). */
export function s3Factories(lib, settings, runtime, names = ["SEAWEED", "MOTO"]) {
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
