// The `fencepost` command line, end to end: the INSTALLED package's bin (node_modules/fencepost/
// cli.js) run as a subprocess under Node and under Deno, against SeaweedFS. Each case seeds its own
// key prefix with the library (claims, held and released leases, a doc, raw bytes), runs the CLI,
// and checks its output, its exit status and the bucket afterwards. One flat test per case and
// runtime (the JUnit counts need no subtests); the bin itself (`npx fencepost`, `deno run -A
// npm:fencepost`) runs from a scratch project that installs the package folder offline. What the
// CLI sends is counted on the wire, through a counting HTTP proxy in front of the test server (a
// subprocess is out of reach of the library's onEvent).
//
//   node --test tests/js/cli.test.mjs       (with the servers running: scripts/servers/start.sh)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, request as httpRequest } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as lib from "fencepost";
import { cloudOptions, cloudStore, freshPrefix, s3Options, serverSettings } from "../../js/support/servers.js";

const ROOT = resolve(fileURLToPath(new URL("../../", import.meta.url)));
const CLI = join(ROOT, "node_modules", "fencepost", "dist", "cli.js");
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
    // Never the machine's own ~/.aws/credentials.
    AWS_SHARED_CREDENTIALS_FILE: join(ROOT, ".run", "no-such-credentials-file"),
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

/**
 * A counting HTTP proxy in front of a test server (`target`: its origin): every request is
 * forwarded as it came, Host header included (so SigV4 signatures still verify), and recorded as
 * `{method, url, headers}`. `origin` is where to point the CLI.
 */
async function countingProxy(target) {
  const to = new URL(target);
  const requests = [];
  const server = createHttpServer((req, res) => {
    requests.push({ method: req.method, url: req.url, headers: req.headers });
    const upstream = httpRequest({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    requests,
    /** The S3 requests so far: list pages, and the keys of the objects read. */
    s3() {
      const lists = requests.filter((r) => r.method === "GET" && /[?&]list-type=2/.test(r.url));
      const reads = requests.filter((r) => r.method === "GET" && !lists.includes(r))
        .map((r) => decodeURIComponent(new URL(r.url, "http://x").pathname).split("/").slice(3).join("/"));
      return { total: requests.length, lists: lists.length, reads };
    },
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** `fencepost …args` through a counting proxy in front of SeaweedFS: the run and its requests. */
async function counted(runtime, prefix, args, options = {}) {
  const proxy = await countingProxy(seaweed.endpoint);
  try {
    const r = await cli(runtime, prefix, [...args, "--endpoint", proxy.origin], options);
    return { ...r, requests: proxy.s3(), headers: proxy.requests.map((q) => q.headers) };
  } finally {
    proxy.close();
  }
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

/**
 * 2,500 claims under tick/ (values 0 to 2499: a few bytes each), a held lease, a released one and
 * a doc larger than any claim; seeded once, for every runtime's ls cases, which only read it.
 */
let many;
function manyClaims() {
  many ??= (async () => {
    const prefix = freshPrefix("cli-many");
    const db = dbOn(prefix);
    const keys = Array.from({ length: 2500 }, (_, i) => `tick/${String(i).padStart(4, "0")}`);
    for (let i = 0; i < keys.length; i += 64) await Promise.all(keys.slice(i, i + 64).map((k, j) => db.claim(k, i + j)));
    const held = await db.lease("jobs/held", { ttl: 900 });
    await (await db.lease("jobs/released", { ttl: 900 })).release();
    await db.doc("docs/settings").update(() => ({ note: "a doc larger than a held lease's least size ".repeat(3) }), { create: null });
    return { prefix, held };
  })();
  return many;
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
  test(`${runtime}: plain ls reads no object: age, size, key per line; --json an inspect record per key`, { skip }, async () => {
    const { prefix, db } = await seed(runtime);
    const r = await counted(runtime, prefix, ["ls"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    const out = lines(r.stdout);
    assert.deepEqual(out.map((l) => l.trim().split(/\s{2,}/)[2]), ["cron/tick-1", "docs/settings", "jobs/held", "jobs/released", "raw/blob"]);
    for (const l of out) assert.match(l, /^\s*\d+s\s+\d+ B\s+\S+$/, "no kind, no lease fields: nothing was read");
    assert.match(out[4], /^\s*\d+s\s+5 B\s+raw\/blob$/);
    assert.deepEqual(r.requests, { total: 1, lists: 1, reads: [] }, "one list request, no object read");

    // --json: one inspect record per line, so each key is read (a listing cannot say what it holds).
    const json = await counted(runtime, prefix, ["ls", "--json"]);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual({ ...json.requests, reads: json.requests.reads.sort() },
      { total: 6, lists: 1, reads: ["cron/tick-1", "docs/settings", "jobs/held", "jobs/released", "raw/blob"] });
    const records = lines(json.stdout).map((l) => JSON.parse(l));
    const listed = [];
    for await (const e of db.objects.entries("")) listed.push({ key: e.key, etag: e.etag, size: e.size, lastModified: e.lastModified.toISOString() });
    assert.deepEqual(records.map(({ key, etag, size, lastModified }) => ({ key, etag, size, lastModified })), listed);
    assert.deepEqual(records.map((r) => r.kind), ["json", "json", "lease", "lease", "bytes"]);

    assertOneLine(await cli(runtime, prefix, ["ls", "--show-holders"]), 2, /--show-holders needs --long, --held or --json/);
  });

  test(`${runtime}: ls of 2,500 claims is 3 list requests (1,000 keys a page) and no object read`, { skip }, async () => {
    const { prefix } = await manyClaims();
    const r = await counted(runtime, prefix, ["ls", "tick/"]);
    assert.equal(r.code, 0, r.stderr);
    const out = lines(r.stdout);
    assert.equal(out.length, 2500);
    assert.match(out[0], /^\s*\S+\s+1 B\s+tick\/0000$/);
    assert.match(out[2499], /\s4 B\s+tick\/2499$/);
    assert.deepEqual(r.requests, { total: 3, lists: 3, reads: [] });
  });

  test(`${runtime}: ls --limit stops after n lines, and the listing at the page that holds them`, { skip }, async () => {
    const { prefix } = await manyClaims();
    const ten = await counted(runtime, prefix, ["ls", "tick/", "--limit", "10"]);
    assert.equal(ten.code, 0, ten.stderr);
    assert.deepEqual(lines(ten.stdout).map((l) => l.trim().split(/\s{2,}/)[2]), Array.from({ length: 10 }, (_, i) => `tick/000${i}`));
    assert.deepEqual(ten.requests, { total: 1, lists: 1, reads: [] });
    const page = await counted(runtime, prefix, ["ls", "tick/", "--limit", "1000"]);
    assert.equal(lines(page.stdout).length, 1000);
    assert.equal(page.requests.total, 1, "the first page holds all 1,000");
    const more = await counted(runtime, prefix, ["ls", "tick/", "--limit=1001"]);
    assert.equal(lines(more.stdout).length, 1001);
    assert.match(lines(more.stdout).at(-1), /\stick\/1000$/);
    assert.equal(more.requests.total, 2);
    const long = await counted(runtime, prefix, ["ls", "tick/", "--long", "--limit", "3"]);
    assert.equal(long.code, 0, long.stderr);
    assert.deepEqual(lines(long.stdout).map((l) => l.split(/\s+/)[0]), ["json", "json", "json"]);
    assert.deepEqual({ ...long.requests, reads: long.requests.reads.sort() }, { total: 4, lists: 1, reads: ["tick/0000", "tick/0001", "tick/0002"] },
      "--long reads only the keys it prints");
    for (const bad of ["0", "-1", "ten", "1.5"]) {
      assertOneLine(await cli(runtime, prefix, ["ls", `--limit=${bad}`]), 2, /--limit must be a whole number of lines, 1 or more/);
    }
  });

  test(`${runtime}: ls --held prints only the held leases and reads no claim (too small to be one)`, { skip }, async () => {
    const { prefix, held } = await manyClaims();
    const r = await counted(runtime, prefix, ["ls", "--held"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(lines(r.stdout).length, 1, r.stdout);
    assert.match(r.stdout, new RegExp(`^lease\\s+\\S+\\s+\\d+ B\\s+jobs/held  epoch 1  holder ${fingerprint(held.holder)}  expires in \\S+\n$`));
    // 2,503 keys: 3 pages; of the objects, only the three larger than any claim are read.
    assert.equal(r.requests.lists, 3);
    assert.deepEqual(r.requests.reads.sort(), ["docs/settings", "jobs/held", "jobs/released"]);
    const json = await cli(runtime, prefix, ["ls", "jobs/", "--held", "--json", "--show-holders"]);
    assert.equal(json.code, 0, json.stderr);
    const [one, ...rest] = lines(json.stdout).map((l) => JSON.parse(l));
    assert.deepEqual(rest, []);
    assert.deepEqual([one.key, one.kind, one.lease.holder, one.lease.expired], ["jobs/held", "lease", held.holder, false]);
    const none = await cli(runtime, prefix, ["ls", "tick/", "--held", "--limit", "1"]);
    assert.deepEqual([none.code, none.stdout, none.stderr], [0, "", ""]);
  });

  test(`${runtime}: ls --long lists every kind, holders as fingerprints unless --show-holders`, { skip }, async () => {
    const { prefix, held } = await seed(runtime);
    const r = await cli(runtime, prefix, ["ls", "--long"]);
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

    const full = await cli(runtime, prefix, ["ls", "jobs/", "-l", "--show-holders"]);
    assert.equal(full.code, 0, full.stderr);
    assert.equal(lines(full.stdout).length, 2);
    assert.ok(lines(full.stdout)[0].includes(`holder ${held.holder}  expires in`), full.stdout);
  });

  test(`${runtime}: ls --long, --held and --json go on past CairnDB's keys in a shared bucket (kind other)`, { skip }, async () => {
    const { prefix } = await seed(runtime);
    // CairnDB's log, written beside fencepost's keys (fencepost itself refuses to write there).
    await dbOn(undefined).objects.put(`${prefix}/log/00000001.json`, "{}");
    const long = await cli(runtime, prefix, ["ls", "--long"]);
    assert.equal(long.code, 0, long.stderr);
    assert.deepEqual(lines(long.stdout).map((l) => l.split(/\s+/)[0]), ["json", "json", "lease", "lease", "other", "bytes"]);
    assert.match(lines(long.stdout)[4], /^other\s+\d+s\s+2 B\s+log\/00000001\.json$/);
    const json = await cli(runtime, prefix, ["ls", "--json"]);
    assert.equal(json.code, 0, json.stderr);
    const other = lines(json.stdout).map((l) => JSON.parse(l)).find((x) => x.key === "log/00000001.json");
    assert.deepEqual([other?.kind, other?.size], ["other", 2]);
    const held = await cli(runtime, prefix, ["ls", "--held"]);
    assert.equal(held.code, 0, held.stderr);
    assert.deepEqual(lines(held.stdout).map((l) => l.split(/\s{2,}/)[3]), ["jobs/held"]);
  });

  test(`${runtime}: ls --long --json is NDJSON, one inspect record per line`, { skip }, async () => {
    const { prefix, db, held } = await seed(runtime);
    const r = await cli(runtime, prefix, ["ls", "--long", "--json"]);
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
    // In the store's time, known from whole-second Dates to within about half a second at first.
    assert.ok(lease.lease.expiresIn > 200 && lease.lease.expiresIn <= 301, String(lease.lease.expiresIn));
    assert.equal(new Date(lease.lease.deadlineAt).toISOString(), lease.lease.deadlineAt);
    assert.ok(!r.stdout.includes(held.holder), "the holder itself is not shown");
    assert.deepEqual([released.lease.released, released.lease.expired, released.lease.holder], [true, true, null]);
    assert.equal(blob.value, Buffer.from([0, 1, 2, 254, 255]).toString("base64"));

    const full = await cli(runtime, prefix, ["ls", "jobs/held", "--long", "--json", "--show-holders"]);
    assert.equal(full.code, 0, full.stderr);
    const [one] = lines(full.stdout).map((l) => JSON.parse(l));
    assert.equal(one.lease.holder, held.holder);
    assert.equal(one.value.holder, held.holder);
  });

  test(`${runtime}: ls --long and show tell once records and semaphore slots`, { skip }, async () => {
    const prefix = freshPrefix(`cli-roles-${runtime}`);
    const db = dbOn(prefix);
    await db.once("reports/day", () => ({ rows: 3 }));
    await db.once("reports/broken", () => { throw new TypeError("boom"); }).catch(() => {});
    await db.semaphore("limits/api", { limit: 2, ttl: 300 }).acquire();
    const r = await cli(runtime, prefix, ["ls", "--long"]);
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

  test(`${runtime}: a key with control characters (another tool's) is one quoted line, escaped`, { skip }, async () => {
    const prefix = freshPrefix(`cli-${runtime}`);
    const { AwsClient } = await import("aws4fetch");
    const aws = new AwsClient({ accessKeyId: seaweed.accessKeyId, secretAccessKey: seaweed.secretAccessKey, region: seaweed.region, service: "s3" });
    // A newline, DEL and a C1 control (CSI: an escape sequence's start on some terminals). XML 1.0,
    // which S3 lists in, cannot carry most C0 controls, ESC among them.
    const raw = `${prefix}/k/nl\nfake line\u007f\u009b31m`;
    const url = `${seaweed.endpoint}/${seaweed.bucket}/${raw.split("/").map(encodeURIComponent).join("/")}`;
    const put = await aws.fetch(url, { method: "PUT", body: "x" });
    assert.ok(put.ok, `seeded (${put.status})`);
    try {
      const r = await cli(runtime, prefix, ["ls", "k/"]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(lines(r.stdout).length, 1, r.stdout);
      assert.ok(r.stdout.trimEnd().endsWith('"k/nl\\nfake line\\u007f\\u009b31m"'), r.stdout);
      assert.doesNotMatch(r.stdout, /[\u007f\u009b]/);
    } finally {
      await aws.fetch(url, { method: "DELETE" });
    }
  });

  test(`${runtime}: ls --held and prune judge leases in the store's time, not a clock minutes off`,
    { skip: skip || (runtime !== "node" && "a skewed Date.now is put in by node --import") }, async () => {
      const prefix = freshPrefix(`cli-${runtime}`);
      const db = dbOn(prefix);
      const lease = await db.lease("jobs/held", { ttl: 600 });
      await db.claim("jobs/fresh", 1);
      const skew = join(scratch, "skew.mjs");
      writeFileSync(skew, "const now = Date.now; Date.now = () => now() + 14 * 60_000;\n");
      const env = { NODE_OPTIONS: `--import=${pathToFileURL(skew).href}` };
      const held = await cli(runtime, prefix, ["ls", "jobs/", "--held"], { env });
      assert.equal(held.code, 0, held.stderr);
      assert.equal(lines(held.stdout).length, 1, held.stdout);
      const pruned = await cli(runtime, prefix, ["prune", "jobs/", "--older-than", "10m", "--yes"], { env });
      assert.equal(pruned.code, 0, pruned.stderr);
      assert.deepEqual(await db.objects.list("jobs/"), ["jobs/fresh", "jobs/held"], pruned.stdout);
      await lease.renew();
      await lease.release();
    });

  test(`${runtime}: check passes on SeaweedFS (text and --json)`, { skip }, async () => {
    const prefix = freshPrefix(`cli-${runtime}`);
    // 30 s per attempt, not the 10 s an operator gets: SeaweedFS can hold a racing PUT for seconds under load.
    const text = await cli(runtime, prefix, ["check", "--timeout", "30s"]);
    assert.equal(text.code, 0, text.stderr);
    const out = lines(text.stdout);
    assert.match(out.at(-1), /^ok: /);
    assert.ok(out.slice(0, -1).every((l) => /^(ok  |FAIL|-- )\s+(required|optional)\s+\S/.test(l)), text.stdout);
    assert.ok(out.some((l) => /^ok\s+required\s+a 16-way create race has exactly one winner: /.test(l)), text.stdout);

    const json = await cli(runtime, prefix, ["check", "--json", "--timeout", "30s"]);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout);
    assert.equal(report.ok, true);
    assert.ok(report.checks.length >= 6);
    for (const c of report.checks) assert.deepEqual(Object.keys(c).sort(), ["detail", "name", "ok", "required"]);
    assert.deepEqual(await dbOn(prefix).objects.list(""), [], "it writes nothing under the store prefix");
  });

  test(`${runtime}: usage errors exit 2 with one line; --help exits 0 on the tool and every command, the store settings once`, { skip }, async () => {
    const prefix = freshPrefix(`cli-${runtime}`);
    assertOneLine(await cli(runtime, prefix, ["frobnicate"]), 2, /unknown command "frobnicate": ls, show, break, prune or check/);
    assertOneLine(await cli(runtime, prefix, ["ls", "--frob"]), 2, /unknown flag --frob \(see fencepost ls --help\)/);
    assertOneLine(await cli(runtime, prefix, ["show"]), 2, /show needs <key>/);
    assertOneLine(await cli(runtime, prefix, ["--json"]), 2, /no command given/);
    assertOneLine(await cli(runtime, prefix, ["check", "--yes"]), 2, /check takes no --yes/);
    assertOneLine(await cli(runtime, prefix, ["ls", "--bucket"]), 2, /--bucket needs a value/);
    // A flag with a short form is named by its long one.
    assertOneLine(await cli(runtime, prefix, ["ls", "--long=x"]), 2, /: --long takes no value \(see fencepost ls --help\)/);
    assertOneLine(await cli(runtime, prefix, ["prune", "old/", "--older-than", "-1s"]), 2,
      /--older-than needs a value \(one that starts with "-" is given as --older-than=<value>\)/);
    assertOneLine(await cli(runtime, prefix, ["prune", "old/"]), 2, /prune needs --older-than/);
    assertOneLine(await cli(runtime, prefix, ["ls"], { env: { FENCEPOST_S3_ENDPOINT: "", AWS_SECRET_ACCESS_KEY: "" } }), 2,
      /missing configuration: no endpoint \(--endpoint or FENCEPOST_S3_ENDPOINT\), no secret access key/);
    assertOneLine(await cli(runtime, prefix, ["show", "../up"]), 2, /invalid argument: key "..\/up"/);

    const help = await cli(runtime, prefix, ["--help"]);
    assert.equal(help.code, 0, help.stderr);
    assert.equal(help.stdout.split("Store (each flag, else the environment):").length, 2, "the store settings, once");
    assert.match(help.stdout, /^  --secret-access-key-stdin +AWS_SECRET_ACCESS_KEY$/m);
    assert.match(help.stdout, /AWS_SHARED_CREDENTIALS_FILE/);
    assert.match(help.stdout, /1 not done: .*store or the network failed.*; 2 usage/s);
    for (const command of ["ls", "show", "break", "prune", "check"]) {
      assert.match(help.stdout, new RegExp(`^  ${command}\\b`, "m"));
      const own = await cli(runtime, prefix, [command, "--help"]);
      assert.equal(own.code, 0, own.stderr);
      assert.match(own.stdout, new RegExp(`^Usage: fencepost ${command}\\b`));
      assert.doesNotMatch(own.stdout, /FENCEPOST_S3_ENDPOINT/, "the store settings are in fencepost --help only");
      assert.match(own.stdout, /and its secrets: fencepost --help\.$/m);
      assert.match(own.stdout, /^Exit status: 0 ok; 1 /m);
    }
  });

  test(`${runtime}: a bare fencepost prints a short help on stdout (exit 0)`, { skip }, async () => {
    const r = await cli(runtime, freshPrefix(`cli-${runtime}`), []);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    assert.match(r.stdout, /^Usage: fencepost <command> \[arguments\] \[flags\]$/m);
    for (const command of ["ls", "show", "break", "prune", "check"]) assert.match(r.stdout, new RegExp(`^  ${command}\\b.*\\S$`, "m"));
    assert.match(r.stdout, /"fencepost <command> --help" for a command's flags; "fencepost --help" for the store settings/);
    assert.doesNotMatch(r.stdout, /FENCEPOST_S3_ENDPOINT|Exit status/, "short: the store settings are in --help");
    assert.ok(lines(r.stdout).length <= 15, r.stdout);
  });

  test(`${runtime}: did you mean: an unknown command or flag near a known one (exit 2)`, { skip }, async () => {
    const prefix = freshPrefix(`cli-${runtime}`);
    assertOneLine(await cli(runtime, prefix, ["lss"]), 2, /^fencepost: unknown command "lss"; did you mean "ls"\? \(see fencepost --help\)\n$/);
    assertOneLine(await cli(runtime, prefix, ["shwo", "k"]), 2, /unknown command "shwo"; did you mean "show"\?/);
    assertOneLine(await cli(runtime, prefix, ["chekc"]), 2, /did you mean "check"\?/);
    assertOneLine(await cli(runtime, prefix, ["ls", "--lmit", "3"]), 2, /^fencepost: unknown flag --lmit; did you mean --limit\? \(see fencepost ls --help\)\n$/);
    assertOneLine(await cli(runtime, prefix, ["ls", "--jsno"]), 2, /unknown flag --jsno; did you mean --json\?/);
    assertOneLine(await cli(runtime, prefix, ["prune", "old/", "--older-then", "1d"]), 2, /unknown flag --older-then; did you mean --older-than\?/);
    assertOneLine(await cli(runtime, prefix, ["show", "k", "--store-prefx", "p"]), 2, /did you mean --store-prefix\?/);
    assertOneLine(await cli(runtime, prefix, ["frobnicate"]), 2, /^(?!.*did you mean).*unknown command/);
  });

  test(`${runtime}: --store-prefix sets the store prefix; --prefix still works, with one deprecation line`, { skip }, async () => {
    const { prefix } = await seed(runtime);
    const env = { FENCEPOST_PREFIX: "" };
    const keys = (r) => lines(r.stdout).map((l) => l.trim().split(/\s{2,}/)[2]);
    const r = await cli(runtime, "", ["ls", "--store-prefix", prefix], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    assert.deepEqual(keys(r), ["cron/tick-1", "docs/settings", "jobs/held", "jobs/released", "raw/blob"]);
    const old = await cli(runtime, "", ["ls", "--prefix", prefix], { env });
    assert.equal(old.code, 0, old.stderr);
    assert.deepEqual(keys(old), keys(r));
    assert.equal(old.stderr, "", "--prefix is the same flag, not deprecated");
    const jobs = await cli(runtime, "", ["ls", "jobs/", `--store-prefix=${prefix}`], { env });
    assert.deepEqual(keys(jobs), ["jobs/held", "jobs/released"], "the positional prefix is still the key prefix");
    const fromEnv = await cli(runtime, prefix, ["show", "cron/tick-1", "--json"]);
    assert.deepEqual(JSON.parse(fromEnv.stdout).value, { by: "the test" }, "FENCEPOST_PREFIX");
  });

  test(`${runtime}: a secret given as a flag value is refused (exit 2), saying where it goes, never echoing it`, { skip }, async () => {
    const prefix = freshPrefix(`cli-${runtime}`);
    const secrets = { "secret-access-key": "AWS_SECRET_ACCESS_KEY", "session-token": "AWS_SESSION_TOKEN",
      "account-key": "AZURE_STORAGE_KEY", "sas-token": "AZURE_STORAGE_SAS_TOKEN", "access-token": "CLOUDSDK_AUTH_ACCESS_TOKEN" };
    for (const [flag, variable] of Object.entries(secrets)) {
      for (const args of [[`--${flag}`, "s3cr3t-value"], [`--${flag}=s3cr3t-value`], [`--${flag}`]]) {
        const r = await cli(runtime, prefix, ["ls", ...args]);
        assertOneLine(r, 2, new RegExp(`^fencepost: --${flag} takes no value \\(a secret on the command line is visible to every user of the machine\\): set ${variable}, .*or pipe it to --${flag}-stdin`));
        assert.ok(!r.stderr.includes("s3cr3t-value"), "the secret is not echoed");
      }
    }
    assertOneLine(await cli(runtime, prefix, ["ls", "--secret-access-key=x"]), 2, /set AWS_SECRET_ACCESS_KEY, put it in the credentials file, or pipe/);
  });

  test(`${runtime}: --secret-access-key-stdin reads the secret from standard input; empty, or two -stdin flags, are usage errors`, { skip }, async () => {
    const { prefix } = await seed(runtime);
    const env = { AWS_SECRET_ACCESS_KEY: "" };
    for (const input of [`${seaweed.secretAccessKey}\n`, `${seaweed.secretAccessKey}\r\n`, seaweed.secretAccessKey]) {
      const r = await cli(runtime, prefix, ["ls", "cron/", "--secret-access-key-stdin"], { env, input });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /\scron\/tick-1\n$/);
    }
    const wins = await cli(runtime, prefix, ["ls", "cron/", "--secret-access-key-stdin"], { env: { AWS_SECRET_ACCESS_KEY: "wrong" }, input: `${seaweed.secretAccessKey}\n` });
    assert.equal(wins.code, 0, `standard input wins over the environment: ${wins.stderr}`);
    const wrong = await cli(runtime, prefix, ["ls", "--secret-access-key-stdin"], { env, input: "not-the-secret-at-all\n" });
    assertOneLine(wrong, 1, /the store refused the credentials \(SignatureDoesNotMatch/);
    assert.ok(!wrong.stderr.includes("not-the-secret-at-all"));
    for (const input of ["", "\n"]) {
      assertOneLine(await cli(runtime, prefix, ["ls", "--secret-access-key-stdin"], { env, input }), 2,
        /--secret-access-key-stdin: nothing on standard input/);
    }
    assertOneLine(await cli(runtime, prefix, ["ls", "--secret-access-key-stdin", "--session-token-stdin"], { input: "x\n" }), 2,
      /standard input holds one secret: --secret-access-key-stdin and --session-token-stdin cannot both read it/);
    assertOneLine(await cli(runtime, prefix, ["ls", "--account-key-stdin"], { input: "x\n" }), 2, /--account-key-stdin is not a setting of the s3 store/);
    assertOneLine(await cli(runtime, prefix, ["ls"], { env }), 2,
      /missing configuration: no secret access key \(--secret-access-key-stdin or AWS_SECRET_ACCESS_KEY or aws_secret_access_key in \[default\] of /);
  });

  test(`${runtime}: --session-token-stdin sends the token with each request (seen at a proxy)`, { skip }, async () => {
    const prefix = freshPrefix(`cli-${runtime}`);
    const r = await counted(runtime, prefix, ["ls", "--session-token-stdin"], { input: "token-from-stdin\n" });
    assert.ok(r.headers.length >= 1);
    for (const h of r.headers) assert.equal(h["x-amz-security-token"], "token-from-stdin");
    // SeaweedFS knows no session tokens: it refuses the request, which is a store failure.
    assertOneLine(r, 1, /the store refused the credentials/);
    assert.ok(!r.stderr.includes("token-from-stdin"));
  });

  test(`${runtime}: without a secret in the environment, the S3 keys come from the credentials file's profile`, { skip }, async () => {
    const { prefix } = await seed(runtime);
    const dir = mkdtempSync(join(tmpdir(), "fencepost-cli-aws-"));
    try {
      const file = join(dir, "credentials");
      writeFileSync(file, ["# written by the test", "[default]", "aws_access_key_id = nobody", "aws_secret_access_key = not-the-secret", "",
        "; the one that works", "[ci]", `aws_access_key_id=${seaweed.accessKeyId}`, `AWS_Secret_Access_Key = ${seaweed.secretAccessKey}`, "",
        "[with-token]", `aws_access_key_id = ${seaweed.accessKeyId}`, `aws_secret_access_key = ${seaweed.secretAccessKey}`,
        "aws_session_token = token-from-the-file", ""].join("\r\n"));
      const env = { AWS_ACCESS_KEY_ID: "", AWS_SECRET_ACCESS_KEY: "", AWS_SHARED_CREDENTIALS_FILE: file };
      const ci = await cli(runtime, prefix, ["ls", "cron/"], { env: { ...env, AWS_PROFILE: "ci" } });
      assert.equal(ci.code, 0, ci.stderr);
      assert.match(ci.stdout, /\scron\/tick-1\n$/);
      assertOneLine(await cli(runtime, prefix, ["ls"], { env }), 1, /refused the credentials \(InvalidAccessKeyId/);
      const envWins = await cli(runtime, prefix, ["ls", "cron/"], { env: { AWS_SHARED_CREDENTIALS_FILE: file } });
      assert.equal(envWins.code, 0, `the environment's keys win over the file's default profile: ${envWins.stderr}`);
      const token = await counted(runtime, prefix, ["ls"], { env: { ...env, AWS_PROFILE: "with-token" } });
      assert.ok(token.headers.length >= 1 && token.headers.every((h) => h["x-amz-security-token"] === "token-from-the-file"));
      assertOneLine(await cli(runtime, prefix, ["ls"], { env: { ...env, AWS_PROFILE: "nope" } }), 2,
        new RegExp(`no profile \\[nope\\] \\(AWS_PROFILE\\) in the credentials file ${file.replace(/[.]/g, "\\.")}`));
      assertOneLine(await cli(runtime, prefix, ["ls"], { env: { ...env, AWS_SHARED_CREDENTIALS_FILE: join(dir, "absent") } }), 2,
        /no secret access key \(.* or aws_secret_access_key in \[default\] of .*absent\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
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
    assertOneLine(await cli(runtime, prefix, ["ls", "--endpoint", `http://127.0.0.1:${port}`, "--timeout", "1s"]), 1,
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
        const ls = await cli(runtime, prefix, ["ls", "--long"], { env });
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
  test(`${runtime}: --store azure: --account-key-stdin reads the key from standard input; --sas-token-stdin sends the token`,
    { skip: !clouds.azure && "needs the azure emulator (scripts/test.sh)" }, async () => {
      const prefix = freshPrefix(`cli-azure-stdin-${runtime}`);
      const db = new lib.Fencepost(cloudStore(lib, "azurite", { ...azurite, prefix }));
      await db.claim("cron/tick-1", { by: "a" });
      const env = { ...clouds.azure.env, AZURE_STORAGE_KEY: "" };
      const r = await cli(runtime, prefix, ["ls", "--account-key-stdin"], { env, input: `${azurite.accountKey}\n` });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /\scron\/tick-1\n$/);
      const proxy = await countingProxy(azurite.endpoint);
      try {
        const endpoint = proxy.origin + new URL(azurite.endpoint).pathname;
        const sas = await cli(runtime, prefix, ["ls", "--sas-token-stdin", "--endpoint", endpoint], { env, input: "sv=2099-01-01&sig=not-a-signature\n" });
        assert.ok(proxy.requests.length >= 1 && proxy.requests.every((q) => q.url.includes("sig=not-a-signature")), "the token in each request's query");
        assertOneLine(sas, 1, /the store refused the credentials/); // Azurite knows no such token
        assert.ok(!sas.stderr.includes("not-a-signature"));
      } finally {
        proxy.close();
      }
      assertOneLine(await cli(runtime, prefix, ["ls", "--account-key"], { env }), 2, /set AZURE_STORAGE_KEY, or pipe it to --account-key-stdin/);
    });

  test(`${runtime}: --store gcs: --access-token-stdin sends the token as the bearer (seen at a proxy)`,
    { skip: !clouds.gcs && "needs the gcs emulator (scripts/test.sh)" }, async () => {
      const prefix = freshPrefix(`cli-gcs-stdin-${runtime}`);
      const db = new lib.Fencepost(cloudStore(lib, "fakegcs", { ...fakegcs, prefix }));
      await db.claim("cron/tick-1", { by: "a" });
      const proxy = await countingProxy(fakegcs.endpoint);
      try {
        const env = { ...clouds.gcs.env, STORAGE_EMULATOR_HOST: new URL(proxy.origin).host };
        const r = await cli(runtime, prefix, ["ls", "--access-token-stdin"], { env, input: "ya29.token-from-stdin\n" });
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /\scron\/tick-1\n$/);
        assert.ok(proxy.requests.length >= 1);
        for (const q of proxy.requests) assert.equal(q.headers.authorization, "Bearer ya29.token-from-stdin");
      } finally {
        proxy.close();
      }
    });

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
    const r = await exec(cmd, [...args, "ls", "--long", "jobs/held"], { cwd: scratch, env: cliEnv(prefix) });
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
