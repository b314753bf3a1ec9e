// Store factories shared by the runtime runners: a fresh namespace per case on each server.
// Servers come from FENCEPOST_<NAME>_* settings written by scripts/servers/start.sh.

let counter = 0;

/** A unique key prefix, so cases (and runtimes) sharing a bucket never see each other's keys. */
export function freshPrefix(runtime) {
  counter += 1;
  return `js-${runtime}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}-${counter}`;
}

/** Store factories for every server configured in `settings` (an env-like object). */
export function s3Factories(lib, settings, runtime, names = ["SEAWEED", "MOTO"]) {
  const out = {};
  for (const name of names) {
    const endpoint = settings[`FENCEPOST_${name}_ENDPOINT`];
    // Not configured (the suite run directly, without scripts/test.sh): memory cases only.
    if (!endpoint) {
      console.log(`# FENCEPOST_${name}_ENDPOINT is not set: skipping ${name.toLowerCase()} (scripts/test.sh starts it)`);
      continue;
    }
    out[name.toLowerCase()] = () =>
      lib.s3Store({
        endpoint,
        bucket: settings[`FENCEPOST_${name}_BUCKET`],
        region: settings[`FENCEPOST_${name}_REGION`],
        accessKeyId: settings[`FENCEPOST_${name}_ACCESS_KEY`],
        secretAccessKey: settings[`FENCEPOST_${name}_SECRET_KEY`],
        prefix: freshPrefix(runtime),
      });
  }
  return out;
}
