// The `fencepost` command line, end to end: the INSTALLED package's bin (node_modules/fencepost/
// cli.js) run as a subprocess under Node and under Deno, against SeaweedFS. Each case seeds its own
// key prefix with the library (claims, held and released leases, a doc, raw bytes), runs the CLI,
// and checks its output, its exit status and the bucket afterwards. One flat test per case and
// runtime (the JUnit counts need no subtests); the bin itself (`npx fencepost`, `deno run -A
// npm:fencepost`) runs from a scratch project that installs the package folder offline.
//
//   node --test tests/js/cli.test.mjs       (with the servers running: scripts/servers/start.sh)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as lib from "fencepost";
import { cloudOptions, cloudStore, freshPrefix, s3Options, serverSettings } from "../../js/support/servers.js";

const ROOT = resolve(fileURLToPath(new URL("../../", import.meta.url)));
const CLI = join(ROOT, "node_modules", "fencepost", "cli.js");
const DENO = existsSync(join(ROOT, "node_modules", ".bin", "deno")) ? join(ROOT, "node_modules", ".bin", "deno") : "deno";
const seaweed = s3Options(serverSettings(), "seaweed");
const azurite = cloudOptions(serverSettings(), "azurite");
const fakegcs = cloudOptions(serverSettings(), "fakegcs");
const skip = !seaweed && "needs SeaweedFS (scripts/test.sh, or scripts/servers/start.sh)";

/** How each runtime runs a script: the same file, as users run it. */
const RUNTIMES = {
  node: (/** @type {string[]} */ args) => [process.execPath, [CLI, ...args]],
  deno: (/** @type {string[]} */ args) => [DENO, ["run", "-A", CLI, ...args]],
};

/** The CLI's environment: the store's settings only (nothing inherited that could change what it does). */
function cliEnv(prefix, extra = {}) {
  return {
    PATH: process.env.PATH, HOME: process.env.HOME, DENO_NO_UPDATE_CHECK: "1",
    ...(process.env.DENO_DIR ? { DENO_DIR: process.env.DENO_DIR } : {}),
    FENCEPOST_S3_ENDPOINT: seaweed.endpoint, FENCEPOST_S3_BUCKET: seaweed.bucket, AWS_REGION: seaweed.region,
    AWS_ACCESS_KEY_ID: seaweed.accessKeyId, AWS_SECRET_ACCESS_KEY: seaweed.secretAccessKey,
    FENCEPOST_PREFIX: prefix, ...extra,
  };
}

/** Run a command to its end: `{code, stdout, stderr}`. Its stdin is a pipe (not a terminal), given `input` then closed. */
function exec(cmd, args, { env, cwd = ROOT, input = "" } = {}) {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, { env, cwd, stdio: ["pipe", "pipe", "pipe"], timeout: 60_000 });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    child.on("error", fail);
    child.on("close", (code, signal) => done({ code: code ?? signal, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** `fencepost …args` under `runtime` with the store under `prefix`. */
function cli(runtime, prefix, args, { env = {}, input } = {}) {
  const [cmd, argv] = RUNTIMES[runtime](args);
  return exec(cmd, argv, { env: cliEnv(prefix, env), input });
}

/** The library on the same bucket and prefix, to seed and to check what the CLI did. */
const dbOn = (prefix) => new lib.Fencepost(lib.s3Store({ ...seaweed, prefix }));

const lines = (text) => text.split("\n").filter((l) => l !== "");
const fingerprint = (holder) => `${holder.slice(0, 6)}…`;

/** A failure the way the CLI must report it: one line on stderr, no stack trace, nothing on stdout. */
function assertOneLine(r, code, pattern) {
  assert.equal(r.code, code, `exit ${r.code}, stderr: ${r.stderr}`);
  assert.equal(r.stdout, "");
  assert.equal(lines(r.stderr).length, 1, `one line: ${JSON.stringify(r.stderr)}`);
  assert.match(r.stderr, /^fencepost: /);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
  assert.match(r.stderr, pattern);
}

/** One claim, a held lease, a released lease, a doc and raw bytes under a fresh prefix. */
async function seed(runtime) {
  const prefix = freshPrefix(`cli-${runtime}`);
  const db = dbOn(prefix);
  await db.claim("cron/tick-1", { by: "the test" });
  const held = await db.lease("jobs/held", { ttl: 300 });
  const released = await db.lease("jobs/released", { ttl: 300 });
  await released.release();
  await db.doc("docs/settings").update(() => ({ mode: "fast", n: 1 }), { create: null });
  await db.objects.put("raw/blob", new Uint8Array([0, 1, 2, 254, 255]));
  return { prefix, db, held };
}

// Prune's fixtures are seeded first, so that they are more than a second old when prune runs.
const pruneFixtures = {};
let seededAt = 0;
let scratch;

before(async () => {
  if (skip) return;
  for (const runtime of Object.keys(RUNTIMES)) {
    const prefix = freshPrefix(`cli-prune-${runtime}`);
    const db = dbOn(prefix);
    await db.claim("old/tick-1", 1);
    await db.claim("old/tick-2", 2);
    const lease = await db.lease("old/job", { ttl: 300 });
    pruneFixtures[runtime] = { prefix, db, lease };
  }
  seededAt = Date.now();
  // A project that installs the package folder (offline: it has no dependencies), as a user's does.
  scratch = mkdtempSync(join(tmpdir(), "fencepost-cli-"));
  writeFileSync(join(scratch, "package.json"), JSON.stringify({ name: "cli-scratch", private: true }));
  execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error",
    join(ROOT, "node_modules", "fencepost")], { cwd: scratch, stdio: "pipe" });
});

after(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

for (const runtime of Object.keys(RUNTIMES)) {
  test(`${runtime}: ls lists every kind, holders as fingerprints unless --show-holders`, { skip }, async () => {
    const { prefix, held } = await seed(runtime);
    const r = await cli(runtime, prefix, ["ls"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    const out = lines(r.stdout);
    assert.deepEqual(out.map((l) => l.split(/\s+/)[0]), ["json", "json", "lease", "lease", "bytes"]);
    const byKey = Object.fromEntries(out.map((l) => [l.split(/\s{2,}/)[3], l]));
    assert.deepEqual(Object.keys(byKey), ["cron/tick-1", "docs/settings", "jobs/held", "jobs/released", "raw/blob"]);
    assert.match(byKey["jobs/held"], /^lease\s+\d+s\s+\d+ B\s+jobs\/held\s+epoch 1\s+holder (\S+)\s+expires in (4m\d+s|5m)$/);
    assert.ok(byKey["jobs/held"].includes(`holder ${fingerprint(held.holder)}`), byKey["jobs/held"]);
    assert.ok(!r.stdout.includes(held.holder), "the holder itself is not shown");
    assert.match(byKey["jobs/released"], /epoch 1\s+released$/);
    assert.match(byKey["raw/blob"], /^bytes\s+\d+s\s+5 B\s+raw\/blob$/);

    const full = await cli(runtime, prefix, ["ls", "jobs/", "--show-holders"]);
    assert.equal(full.code, 0, full.stderr);
    assert.equal(lines(full.stdout).length, 2);
    assert.ok(lines(full.stdout)[0].includes(`holder ${held.holder}  expires in`), full.stdout);
  });

  test(`${runtime}: ls --json is NDJSON, one inspect record per line`, { skip }, async () => {
    const { prefix, db, held } = await seed(runtime);
    const r = await cli(runtime, prefix, ["ls", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const records = lines(r.stdout).map((l) => JSON.parse(l));
    assert.deepEqual(records.map((x) => [x.key, x.kind]), [["cron/tick-1", "json"], ["docs/settings", "json"],
      ["jobs/held", "lease"], ["jobs/released", "lease"], ["raw/blob", "bytes"]]);
    for (const x of records) {
      const seen = await db.inspect(x.key);
      assert.equal(x.etag, seen.etag);
      assert.equal(x.size, seen.size);
      assert.equal(x.lastModified, seen.lastModified.toISOString(), "dates as ISO strings");
    }
    const [claim, doc, lease, released, blob] = records;
    assert.deepEqual(claim.value, { by: "the test" });
    assert.deepEqual(doc.value, { mode: "fast", n: 1 });
    assert.equal(lease.lease.epoch, 1);
    assert.equal(lease.lease.holder, fingerprint(held.holder));
    assert.equal(lease.value.holder, fingerprint(held.holder), "the stored document's holder too");
    assert.equal(lease.lease.expired, false);
    assert.ok(lease.lease.expiresIn > 200 && lease.lease.expiresIn <= 300, String(lease.lease.expiresIn));
    assert.equal(new Date(lease.lease.deadlineAt).toISOString(), lease.lease.deadlineAt);
    assert.ok(!r.stdout.includes(held.holder), "the holder itself is not shown");
    assert.deepEqual([released.lease.released, released.lease.expired, released.lease.holder], [true, true, null]);
    assert.equal(blob.value, Buffer.from([0, 1, 2, 254, 255]).toString("base64"));

    const full = await cli(runtime, prefix, ["ls", "jobs/held", "--json", "--show-holders"]);
    assert.equal(full.code, 0, full.stderr);
    const [one] = lines(full.stdout).map((l) => JSON.parse(l));
    assert.equal(one.lease.holder, held.holder);
    assert.equal(one.value.holder, held.holder);
  });

  test(`${runtime}: ls and show tell once records and semaphore slots`, { skip }, async () => {
    const prefix = freshPrefix(`cli-roles-${runtime}`);
    const db = dbOn(prefix);
    await db.once("reports/day", () => ({ rows: 3 }));
    await db.once("reports/broken", () => { throw new TypeError("boom"); }).catch(() => {});
    await db.semaphore("limits/api", { limit: 2, ttl: 300 }).acquire();
    const r = await cli(runtime, prefix, ["ls"]);
    assert.equal(r.code, 0, r.stderr);
    const byKey = Object.fromEntries(lines(r.stdout).map((l) => [l.split(/\s{2,}/)[3], l]));
    assert.match(byKey["reports/day"], /released\s+\[once done, attempt 1\]$/);
    assert.match(byKey["reports/broken"], /\[once failed \(TypeError\), attempt 1\]$/);
    const slot = Object.keys(byKey).find((k) => k.startsWith("limits/api/"));
    assert.match(byKey[slot], /expires in \S+\s+\[semaphore slot [01]\]$/);
    const shown = await cli(runtime, prefix, ["show", "reports/day"]);
    assert.match(shown.stdout, /^role\s+once done, attempt 1$/m);
  });

  test(`${runtime}: show a key (text and --json); a missing key exits 1`, { skip }, async () => {
    const { prefix, db, held } = await seed(runtime);
    const text = await cli(runtime, prefix, ["show", "jobs/held"]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^key\s+jobs\/held$/m);
    assert.match(text.stdout, /^kind\s+lease$/m);
    assert.match(text.stdout, /^epoch\s+1$/m);
    assert.match(text.stdout, /^status\s+held, expires in /m);
    assert.ok(text.stdout.includes(fingerprint(held.holder)) && !text.stdout.includes(held.holder), text.stdout);

    const doc = await cli(runtime, prefix, ["show", "docs/settings"]);
    assert.equal(doc.code, 0, doc.stderr);
    assert.match(doc.stdout, /^value\s+\{\n\s+"mode": "fast",\n\s+"n": 1\n\s+\}$/m);

    const json = await cli(runtime, prefix, ["show", "jobs/held", "--json", "--show-holders"]);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(lines(json.stdout).length, 1);
    const seen = await db.inspect("jobs/held");
    const got = JSON.parse(json.stdout);
    assert.deepEqual({ ...got, lease: { ...got.lease, expiresIn: 0 } },
      JSON.parse(JSON.stringify({ ...seen, lease: { ...seen.lease, expiresIn: 0 } })));

    assertOneLine(await cli(runtime, prefix, ["show", "jobs/nothing-here"]), 1, /not found: jobs\/nothing-here/);
    assertOneLine(await cli(runtime, prefix, ["show", "jobs/nothing-here", "--json"]), 1, /not found/);
  });

  test(`${runtime}: break without --yes changes nothing; with --yes the next epoch, and the holder is fenced`, { skip }, async () => {
    const { prefix, db, held } = await seed(runtime);
    const refused = await cli(runtime, prefix, ["break", "jobs/held"]);
    assertOneLine(refused, 1, /refused: not breaking jobs\/held .*pass --yes/);
    const still = await db.inspect("jobs/held");
    assert.deepEqual([still.lease.epoch, still.lease.holder, still.lease.released], [1, held.holder, false]);
    await held.updateState(() => ({ step: 1 })); // the holder still owns it

    const broke = await cli(runtime, prefix, ["break", "jobs/held", "--yes"]);
    assert.equal(broke.code, 0, broke.stderr);
    assert.equal(lines(broke.stdout).length, 1);
    assert.match(broke.stdout, /^broke jobs\/held: epoch 1 \(held by (\S+), \S+ left\) -> epoch 2, released/);
    assert.ok(broke.stdout.includes(fingerprint(held.holder)) && !broke.stdout.includes(held.holder), broke.stdout);
    const after = await db.inspect("jobs/held");
    assert.deepEqual([after.lease.epoch, after.lease.holder, after.lease.released], [2, null, true]);
    assert.deepEqual(after.lease.state, { step: 1 }, "the state is kept");
    await assert.rejects(held.updateState(() => ({ step: 2 })), (e) => e instanceof lib.LeaseLost && e.reason === "stolen");

    const again = await cli(runtime, prefix, ["break", "jobs/held", "-y", "--json"]);
    assert.equal(again.code, 0, again.stderr);
    const j = JSON.parse(again.stdout);
    assert.deepEqual([j.key, j.epoch, j.previous.epoch, j.previous.holder, j.previous.released], ["jobs/held", 3, 2, null, true]);

    assertOneLine(await cli(runtime, prefix, ["break", "jobs/nothing-here", "--yes"]), 1, /no lease at jobs\/nothing-here/);
    assertOneLine(await cli(runtime, prefix, ["break", "cron/tick-1", "--yes"]), 1, /no lease at cron\/tick-1: it holds a JSON value/);
    assert.deepEqual((await db.inspect("cron/tick-1")).value, { by: "the test" });
  });

  const script = existsSync("/usr/bin/script") ? "/usr/bin/script" : null;
  test(`${runtime}: break asks on a terminal: "n" changes nothing, "y" breaks`, { skip: skip || (!script && "needs util-linux script (a pseudo-terminal)") }, async () => {
    const { prefix, db, held } = await seed(runtime);
    const [cmd, argv] = RUNTIMES[runtime](["break", "jobs/held"]);
    const onTty = (answer) => exec(script, ["-qfec", [cmd, ...argv].map((a) => `'${a}'`).join(" "), "/dev/null"],
      { env: cliEnv(prefix), input: `${answer}\n` });
    const no = await onTty("n");
    assert.equal(no.code, 1, no.stdout);
    assert.match(no.stdout, /break the lease jobs\/held \(epoch 1, holder \S+, expires in \S+\)\? \[y\/N\]/);
    assert.match(no.stdout, /not confirmed: jobs\/held not broken/);
    assert.equal((await db.inspect("jobs/held")).lease.epoch, 1);
    const yes = await onTty("y");
    assert.equal(yes.code, 0, yes.stdout);
    assert.match(yes.stdout, /broke jobs\/held: epoch 1 .* -> epoch 2, released/);
    assert.equal((await db.inspect("jobs/held")).lease.epoch, 2);
    await assert.rejects(held.renew(), lib.LeaseLost);
  });

  test(`${runtime}: prune --older-than 1s: a dry run deletes nothing; --yes deletes old claims, keeps a held lease`, { skip }, async () => {
    const { prefix, db, lease } = pruneFixtures[runtime];
    // S3 dates are whole seconds: two seconds after seeding, everything seeded is over a second old.
    await new Promise((r) => setTimeout(r, Math.max(0, seededAt + 2100 - Date.now())));
    const dry = await cli(runtime, prefix, ["prune", "old/", "--older-than", "1s"]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.deepEqual(lines(dry.stdout), ["would delete old/tick-1", "would delete old/tick-2",
      'dry run: would delete 2 object(s) under "old/" older than 1s, keep 1; nothing deleted (pass --yes to delete)']);
    assert.deepEqual(await db.objects.list("old/"), ["old/job", "old/tick-1", "old/tick-2"]);

    const dryJson = await cli(runtime, prefix, ["prune", "old/", "--older-than", "1", "--json"]);
    assert.equal(dryJson.code, 0, dryJson.stderr);
    assert.deepEqual(JSON.parse(dryJson.stdout), { prefix: "old/", olderThan: 1, dryRun: true, deleted: 2, kept: 1, keys: ["old/tick-1", "old/tick-2"] });
    assert.deepEqual(await db.objects.list("old/"), ["old/job", "old/tick-1", "old/tick-2"]);

    const done = await cli(runtime, prefix, ["prune", "old/", "--older-than", "1s", "--yes"]);
    assert.equal(done.code, 0, done.stderr);
    assert.deepEqual(lines(done.stdout), ["deleted old/tick-1", "deleted old/tick-2", 'deleted 2 object(s) under "old/" older than 1s, kept 1']);
    assert.deepEqual(await db.objects.list("old/"), ["old/job"], "the held lease is kept");
    await lease.renew(); // and still ours
    await lease.release();
  });

  test(`${runtime}: check passes on SeaweedFS (text and --json)`, { skip }, async () => {
    const prefix = freshPrefix(`cli-${runtime}`);
    const text = await cli(runtime, prefix, ["check"]);
    assert.equal(text.code, 0, text.stderr);
    const out = lines(text.stdout);
    assert.match(out.at(-1), /^ok: /);
    assert.ok(out.slice(0, -1).every((l) => /^(ok  |FAIL|-- )\s+(required|optional)\s+\S/.test(l)), text.stdout);
    assert.ok(out.some((l) => /^ok\s+required\s+a 16-way create race has exactly one winner: /.test(l)), text.stdout);

    const json = await cli(runtime, prefix, ["check", "--json"]);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout);
    assert.equal(report.ok, true);
    assert.ok(report.checks.length >= 6);
    for (const c of report.checks) assert.deepEqual(Object.keys(c).sort(), ["detail", "name", "ok", "required"]);
    assert.deepEqual(await dbOn(prefix).objects.list(""), [], "it writes nothing under the store prefix");
  });

  test(`${runtime}: usage errors exit 2 with one line; --help exits 0 on the tool and every command`, { skip }, async () => {
    const prefix = freshPrefix(`cli-${runtime}`);
    assertOneLine(await cli(runtime, prefix, ["frobnicate"]), 2, /unknown command "frobnicate"/);
    assertOneLine(await cli(runtime, prefix, ["ls", "--frob"]), 2, /unknown flag --frob \(see fencepost ls --help\)/);
    assertOneLine(await cli(runtime, prefix, ["show"]), 2, /show needs <key>/);
    assertOneLine(await cli(runtime, prefix, []), 2, /no command given/);
    assertOneLine(await cli(runtime, prefix, ["check", "--yes"]), 2, /check takes no --yes/);
    assertOneLine(await cli(runtime, prefix, ["ls", "--bucket"]), 2, /--bucket needs a value/);
    assertOneLine(await cli(runtime, prefix, ["prune", "old/"]), 2, /prune needs --older-than/);
    assertOneLine(await cli(runtime, prefix, ["ls"], { env: { FENCEPOST_S3_ENDPOINT: "", AWS_SECRET_ACCESS_KEY: "" } }), 2,
      /missing configuration: no endpoint \(--endpoint or FENCEPOST_S3_ENDPOINT\), no secret access key/);
    assertOneLine(await cli(runtime, prefix, ["show", "../up"]), 2, /invalid argument: key "..\/up"/);

    const help = await cli(runtime, prefix, ["--help"]);
    assert.equal(help.code, 0, help.stderr);
    for (const command of ["ls", "show", "break", "prune", "check"]) {
      assert.match(help.stdout, new RegExp(`^  ${command}\\b`, "m"));
      const own = await cli(runtime, prefix, [command, "--help"]);
      assert.equal(own.code, 0, own.stderr);
      assert.match(own.stdout, new RegExp(`^Usage: fencepost ${command}\\b`));
      assert.match(own.stdout, /FENCEPOST_S3_ENDPOINT/);
    }
  });

  test(`${runtime}: a bad duration is a usage error (exit 2) and nothing is deleted`, { skip }, async () => {
    const { prefix, db } = await seed(runtime);
    for (const bad of ["7 days", "5x", "-1s", "1h30m", ""]) {
      assertOneLine(await cli(runtime, prefix, ["prune", "cron/", `--older-than=${bad}`, "--yes"]), 2, /--older-than: bad duration/);
    }
    assert.deepEqual(await db.objects.list("cron/"), ["cron/tick-1"]);
  });

  test(`${runtime}: a wrong secret is one line about the credentials (exit 1)`, { skip }, async () => {
    const prefix = freshPrefix(`cli-${runtime}`);
    const secret = "not-the-secret-at-all";
    for (const args of [["ls"], ["show", "x"], ["check"]]) {
      const r = await cli(runtime, prefix, args, { env: { AWS_SECRET_ACCESS_KEY: secret } });
      assertOneLine(r, 1, /the store refused the credentials \(SignatureDoesNotMatch, HTTP 403\): check the access key id and secret/);
      assert.ok(!r.stderr.includes(secret), "the secret is not echoed");
    }
    assertOneLine(await cli(runtime, prefix, ["ls", "--access-key-id", "nobody"]), 1, /refused the credentials \(InvalidAccessKeyId/);
  });

  test(`${runtime}: an unreachable endpoint and a missing bucket are one clear line (exit 1)`, { skip }, async () => {
    const prefix = freshPrefix(`cli-${runtime}`);
    const port = await freePort();
    const t0 = Date.now();
    assertOneLine(await cli(runtime, prefix, ["ls", "--endpoint", `http://127.0.0.1:${port}`]), 1,
      new RegExp(`cannot reach the store at http://127\\.0\\.0\\.1:${port}: .*(refused|ECONNREFUSED)`, "i"));
    assert.ok(Date.now() - t0 < 20_000, "bounded retries");
    assertOneLine(await cli(runtime, prefix, ["show", "k", "--bucket", "no-such-bucket-here"]), 1,
      new RegExp(`no bucket "no-such-bucket-here" at ${seaweed.endpoint.replace(/\./g, "\\.")} \\(NoSuchBucket`));
  });

  test(`${runtime}: an endpoint that never answers fails within about 3 × --timeout (exit 1); a bad --timeout is a usage error`, { skip }, async () => {
    const prefix = freshPrefix(`cli-${runtime}`);
    const sockets = [];
    const silent = createServer((socket) => sockets.push(socket)); // accepts, never answers
    await new Promise((done) => silent.listen(0, "127.0.0.1", done));
    try {
      const t0 = Date.now();
      const r = await cli(runtime, prefix, ["show", "k", "--endpoint", `http://127.0.0.1:${silent.address().port}`, "--timeout", "1s"]);
      const took = Date.now() - t0;
      assertOneLine(r, 1, /no answer within 1 s|no response/);
      assert.ok(took < 8_000, `3 attempts of 1 s, then a read-back-free failure: ${took} ms`);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
    assertOneLine(await cli(runtime, prefix, ["ls", "--timeout", "soon"]), 2, /--timeout: bad duration/);
  });

  // Azure and GCS: the settings from the usual environment variables (and flags), ls/show/check.
  const clouds = {
    azure: azurite && {
      options: azurite,
      env: { FENCEPOST_STORE: "azure", AZURE_STORAGE_ACCOUNT: azurite.account, AZURE_STORAGE_KEY: azurite.accountKey,
        FENCEPOST_AZURE_CONTAINER: azurite.container, FENCEPOST_AZURE_ENDPOINT: azurite.endpoint },
      wrong: { AZURE_STORAGE_KEY: Buffer.from("a wrong key, long enough to look like one").toString("base64") },
      refused: /the store refused the credentials \((AuthenticationFailed|AuthorizationFailure), HTTP 403\): check the account/,
    },
    gcs: fakegcs && {
      options: fakegcs,
      // STORAGE_EMULATOR_HOST as Google's libraries take it: host:port, no scheme.
      env: { FENCEPOST_STORE: "gcs", FENCEPOST_GCS_BUCKET: fakegcs.bucket, STORAGE_EMULATOR_HOST: fakegcs.endpoint.replace(/^http:\/\//, "") },
    },
  };
  for (const [kind, cloud] of Object.entries(clouds)) {
    test(`${runtime}: --store ${kind}: ls, show and check from the environment; flags of another store are usage errors`,
      { skip: !cloud && `needs the ${kind} emulator (scripts/test.sh)` }, async () => {
        const prefix = freshPrefix(`cli-${kind}-${runtime}`);
        const db = new lib.Fencepost(cloudStore(lib, kind === "azure" ? "azurite" : "fakegcs", { ...cloud.options, prefix }));
        await db.claim("cron/tick-1", { by: "a" });
        const env = { ...cloud.env, FENCEPOST_S3_ENDPOINT: "", AWS_SECRET_ACCESS_KEY: "" };
        const ls = await cli(runtime, prefix, ["ls"], { env });
        assert.equal(ls.code, 0, ls.stderr);
        assert.match(ls.stdout, /json .*cron\/tick-1/);
        const show = await cli(runtime, prefix, ["show", "cron/tick-1", "--json"], { env });
        assert.equal(show.code, 0, show.stderr);
        assert.deepEqual(JSON.parse(show.stdout).value, { by: "a" });
        const check = await cli(runtime, prefix, ["check"], { env });
        assert.equal(check.code, 0, check.stdout + check.stderr);
        assert.match(check.stdout, /ok: the store honours what fencepost needs/);
        assertOneLine(await cli(runtime, prefix, ["ls", "--region", "auto"], { env }), 2,
          new RegExp(`--region is not a setting of the ${kind} store`));
        if (cloud.wrong) {
          const r = await cli(runtime, prefix, ["ls"], { env: { ...env, ...cloud.wrong } });
          assertOneLine(r, 1, cloud.refused);
          assert.ok(!r.stderr.includes(Object.values(cloud.wrong)[0]), "the key is not echoed");
        }
      });
  }
  test(`${runtime}: --store azure and gcs name what is missing`, async () => {
    const prefix = freshPrefix(`cli-${runtime}`);
    assertOneLine(await cli(runtime, prefix, ["ls", "--store", "azure"], { env: { AZURE_STORAGE_ACCOUNT: "acct" } }), 2,
      /missing configuration: no container \(--container or FENCEPOST_AZURE_CONTAINER\), no account key or SAS token/);
    assertOneLine(await cli(runtime, prefix, ["ls", "--store", "gcs"]), 2, /no bucket \(--bucket or FENCEPOST_GCS_BUCKET\)/);
    assertOneLine(await cli(runtime, prefix, ["ls", "--store", "ftp"]), 2, /--store must be s3, azure or gcs/);
    assertOneLine(await cli(runtime, prefix, ["ls", "--store", "gcs", "--bucket", "b", "--credentials", "/nonexistent.json"]), 2,
      /cannot read the credentials file \/nonexistent.json: ENOENT/);
  });

  test(`${runtime}: the package's bin (${runtime === "node" ? "npx fencepost" : "deno run -A npm:fencepost"})`, { skip }, async () => {
    const { prefix, held } = await seed(runtime);
    const [cmd, args] = runtime === "node" ? ["npx", ["--offline", "--no-install", "fencepost"]] : [DENO, ["run", "-A", "npm:fencepost"]];
    const r = await exec(cmd, [...args, "ls", "jobs/held"], { cwd: scratch, env: cliEnv(prefix) });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^lease .* jobs/held  epoch 1  holder ${fingerprint(held.holder)}  expires in `));
    const v = await exec(cmd, [...args, "--version"], { cwd: scratch, env: cliEnv(prefix) });
    assert.equal(v.code, 0, v.stderr);
    assert.equal(v.stdout.trim(), JSON.parse(readFileSync(join(ROOT, "node_modules", "fencepost", "package.json"), "utf8")).version);
  });
}

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
function freePort() {
  return new Promise((done) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}
