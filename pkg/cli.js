#!/usr/bin/env node
// `fencepost`, the package's command line: see what a bucket holds (ls, show), break a stuck lease,
// prune old objects, check the store (`fencepost --help`). One file for Node (≥ 20) and Deno 2:
// only `process`, `node:util`, `node:readline`, `node:fs`, `node:os` and `node:path`, which Deno's
// Node compatibility has. The store is `s3Store`, `azureStore` or `gcsStore` (--store) from flags,
// else the environment; its secrets from the environment, standard input (--…-stdin) or, for S3,
// the AWS credentials file, never from a flag's value. Exit status: 0 ok; 1 not found, a required
// check failed, not confirmed, the store or the network failed; 2 usage. Every error is one line
// on stderr.

import process from "node:process";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
// Node's entry loads the wasm; the API comes from the module every entry shares (so the bundle's
// entries share one chunk: scripts/bundle-pkg.mjs).
import "./node.js";
import { Fencepost, InvalidArgument, s3Store, azureStore, gcsStore, checkStore } from "./index.js";
// The package's version, inlined when the package is bundled (scripts/bundle-pkg.mjs): the
// shipped command line is dist/cli.js, one folder below package.json.
import packageJson from "./package.json" with { type: "json" };
import { SECRETS, UsageError, commandHelp, mainHelp, parse, parseDuration, shortHelp } from "./cli/usage.js";
import { brokeLine, checkLine, entryLine, fingerprint, jsonLine, listLine, record, showLines, shown, standing } from "./cli/format.js";

/** @typedef {Record<string, string | boolean | undefined>} Flags */
/** @typedef {{endpoint: string, bucket: string}} Where what error messages may name (never a credential) */

/** Exit 1 with one line: not found, not confirmed, a failed check. */
class Refusal extends Error {}

/** The exit statuses (`fencepost --help`). */
const NOT_DONE = 1;
const USAGE = 2;
/** The store refused or could not be reached: not done either (the line says why). */
const STORE_FAILED = NOT_DONE;

const out = (/** @type {string} */ line) => process.stdout.write(`${line}\n`);
const err = (/** @type {string} */ line) => process.stderr.write(`${line}\n`);

/**
 * Each store kind's settings: option name → [flag, environment variables…, what a missing one is
 * called when it is required]. A flag wins over the environment.
 * @type {Record<string, [string, string[], string?][]>}
 */
const STORES = {
  s3: [["endpoint", ["FENCEPOST_S3_ENDPOINT"], "endpoint"], ["bucket", ["FENCEPOST_S3_BUCKET"], "bucket"],
    ["region", ["AWS_REGION", "AWS_DEFAULT_REGION"]], ["accessKeyId", ["AWS_ACCESS_KEY_ID"], "access key id"],
    ["secretAccessKey", ["AWS_SECRET_ACCESS_KEY"], "secret access key"], ["sessionToken", ["AWS_SESSION_TOKEN"]]],
  azure: [["account", ["AZURE_STORAGE_ACCOUNT"], "account"], ["container", ["FENCEPOST_AZURE_CONTAINER"], "container"],
    ["accountKey", ["AZURE_STORAGE_KEY"]], ["sasToken", ["AZURE_STORAGE_SAS_TOKEN"]],
    ["endpoint", ["FENCEPOST_AZURE_ENDPOINT"]]],
  gcs: [["bucket", ["FENCEPOST_GCS_BUCKET"], "bucket"], ["credentials", ["GOOGLE_APPLICATION_CREDENTIALS"]],
    ["accessToken", ["CLOUDSDK_AUTH_ACCESS_TOKEN"]], ["endpoint", ["STORAGE_EMULATOR_HOST"]]],
};

/** An option's flag: `secretAccessKey` → `secret-access-key`. */
const flagOf = (/** @type {string} */ option) => option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** The flags that set `option`: its own, and `--<name>-stdin` for a secret. */
const flagsOf = (/** @type {string} */ option) => {
  const flag = flagOf(option);
  return Object.hasOwn(SECRETS, flag) ? [`${flag}-stdin`] : [flag];
};

/**
 * The store to operate on: its kind, its options (each flag, else its environment variable; a
 * secret from standard input, else the environment, else for S3 the credentials file), and what
 * error messages may name. Missing settings are a usage error.
 * @param {Flags} flags @param {string} command
 */
async function storeSettings(flags, command) {
  const env = process.env;
  const kind = typeof flags.store === "string" ? flags.store : env.FENCEPOST_STORE || "s3";
  if (!Object.hasOwn(STORES, kind)) throw new UsageError(`--store must be s3, azure or gcs, not "${kind}"`, command);
  const own = new Set(STORES[kind].flatMap(([option]) => flagsOf(option)));
  const foreign = Object.values(STORES).flat().flatMap(([option]) => flagsOf(option))
    .find((flag) => flags[flag] !== undefined && !own.has(flag));
  if (foreign) throw new UsageError(`--${foreign} is not a setting of the ${kind} store (--store s3, azure or gcs)`, command);
  const piped = await pipedSecret(flags, command);
  /** @type {Record<string, string>} */
  const options = {};
  for (const [option, names] of STORES[kind]) {
    const given = flags[flagOf(option)];
    const value = piped[flagOf(option)] ?? (typeof given === "string" ? given : names.map((n) => env[n]).find((v) => v));
    if (value) options[option] = value;
  }
  /** @type {Record<string, string>} where a setting not found was looked for, beyond its flag and variables */
  const also = {};
  if (kind === "s3" && !options.secretAccessKey) {
    // The environment's keys are a set, as AWS's own tools take them: without a secret there, the
    // key id, secret and token all come from the credentials file's profile (a flag still wins).
    const { file, profile, keys } = credentialsFile(command);
    const inFile = (/** @type {string} */ name) => `${name} in [${profile}] of ${file}`;
    if (keys.aws_secret_access_key) {
      options.secretAccessKey = keys.aws_secret_access_key;
      const id = typeof flags["access-key-id"] === "string" ? flags["access-key-id"] : keys.aws_access_key_id;
      const token = piped["session-token"] ?? keys.aws_session_token;
      for (const [option, value] of [["accessKeyId", id], ["sessionToken", token]]) {
        if (value) options[option] = value;
        else delete options[option];
      }
      also.accessKeyId = inFile("aws_access_key_id");
    }
    also.secretAccessKey = inFile("aws_secret_access_key");
  }
  const missing = STORES[kind].filter(([option, , required]) => required && !options[option])
    .map(([option, names, required]) => `no ${required} (${[...flagsOf(option).map((f) => `--${f}`), ...names, also[option]].filter(Boolean).join(" or ")})`);
  if (kind === "azure" && !options.accountKey && !options.sasToken) {
    missing.push("no account key or SAS token (--account-key-stdin or AZURE_STORAGE_KEY, --sas-token-stdin or AZURE_STORAGE_SAS_TOKEN)");
  }
  if (missing.length) throw new UsageError(`missing configuration: ${missing.join(", ")}`, command);
  const prefix = [flags["store-prefix"], flags.prefix, env.FENCEPOST_PREFIX].find((p) => typeof p === "string");
  if (prefix) options.prefix = prefix;
  if (kind === "gcs") {
    // STORAGE_EMULATOR_HOST may be a bare host:port, as Google's client libraries take it.
    if (options.endpoint && !/^https?:\/\//.test(options.endpoint)) options.endpoint = `http://${options.endpoint}`;
    if (options.credentials) options.credentials = readCredentials(options.credentials, command);
  }
  const where = kind === "azure"
    ? { endpoint: options.endpoint ?? `https://${options.account}.blob.core.windows.net`, bucket: options.container }
    : { endpoint: options.endpoint ?? "https://storage.googleapis.com", bucket: options.bucket };
  return { kind, options, where };
}

/**
 * The secret of the one `--<name>-stdin` flag given, as `{<name>: secret}` ({} without one):
 * standard input to its end, one trailing newline dropped. Empty is a usage error, as is a second
 * such flag (standard input holds one secret).
 * @param {Flags} flags @param {string} command @returns {Promise<Record<string, string>>}
 */
async function pipedSecret(flags, command) {
  const given = Object.keys(SECRETS).filter((name) => flags[`${name}-stdin`] === true);
  if (given.length === 0) return {};
  if (given.length > 1) {
    throw new UsageError(`standard input holds one secret: --${given.join("-stdin and --")}-stdin cannot both read it`, command);
  }
  const [name] = given;
  if (process.stdin.isTTY) throw new UsageError(`--${name}-stdin reads a pipe, not a terminal (it would echo the secret): pipe the secret to it`, command);
  const utf8 = new TextDecoder();
  let text = "";
  for await (const chunk of process.stdin) text += typeof chunk === "string" ? chunk : utf8.decode(chunk, { stream: true });
  const secret = (text + utf8.decode()).replace(/\r?\n$/, "");
  if (!secret) throw new UsageError(`--${name}-stdin: nothing on standard input (pipe the secret to it)`, command);
  return { [name]: secret };
}

/**
 * The AWS shared credentials file's profile (AWS_SHARED_CREDENTIALS_FILE, default
 * ~/.aws/credentials; AWS_PROFILE, default "default"): its `key = value` lines, keys lower-cased.
 * The few lines of INI it takes: `[name]` starts a profile, `#` and `;` start a comment line,
 * blank lines are skipped. A missing file or default profile gives no keys (the caller names what
 * is missing); a profile named by AWS_PROFILE that is not there, or a file that cannot be read, is
 * a usage error.
 * @param {string} command @returns {{file: string, profile: string, keys: Record<string, string>}}
 */
function credentialsFile(command) {
  const file = process.env.AWS_SHARED_CREDENTIALS_FILE || join(homedir(), ".aws", "credentials");
  const profile = process.env.AWS_PROFILE || "default";
  /** @type {Record<string, string>} */
  const keys = {};
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if (/** @type {any} */ (e).code !== "ENOENT") throw new UsageError(`cannot read the credentials file ${file}: ${/** @type {any} */ (e).code ?? e}`, command);
  }
  let section = null;
  let found = false;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const head = /^\[\s*([^\]]*?)\s*\]$/.exec(line);
    const pair = /^([^=#;]+?)\s*=\s*(.*)$/.exec(line);
    if (head) {
      section = head[1];
      found ||= section === profile;
    } else if (pair && section === profile) keys[pair[1].toLowerCase()] = pair[2];
  }
  if (!found && process.env.AWS_PROFILE) throw new UsageError(`no profile [${profile}] (AWS_PROFILE) in the credentials file ${file}`, command);
  return { file, profile, keys };
}

/** A service account key file's text (a usage error when it cannot be read). */
function readCredentials(/** @type {string} */ path, /** @type {string} */ command) {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    throw new UsageError(`cannot read the credentials file ${path}: ${/** @type {any} */ (e).code ?? e}`, command);
  }
}

/** The store of `settings`, its attempts cut at `timeout` seconds. */
function openStore(/** @type {{kind: string, options: Record<string, string>}} */ { kind, options }, /** @type {number} */ timeout) {
  const make = { s3: s3Store, azure: azureStore, gcs: gcsStore }[kind];
  return /** @type {(o: any) => import("./stores.js").Store} */ (make)({ ...options, timeout });
}

// ------------------------------------------------------------------------------- commands

/**
 * The fewest bytes a held lease document can have, so `ls --held` reads no object smaller. A lease
 * document (src/lease/document.rs) is a JSON object with `epoch` (an integer), `holder` (a string:
 * null is released) and `deadline_at` (an RFC 3339 timestamp, at least "YYYY-MM-DDTHH:MM:SS" as
 * the core parses it); `state` and other fields are optional. fencepost writes it as canonical JSON
 * with sorted keys and a longer timestamp and holder; another writer may order or space it
 * differently, which only adds bytes. The least the parser takes as a held lease is
 * `{"epoch":0,"holder":"","deadline_at":"2026-01-01T00:00:00"}`: 59 bytes.
 */
const HELD_LEASE_MIN_BYTES = 59;

/**
 * `ls [prefix]`: every key under the prefix, page by page. From the listing alone unless --long
 * (each key read) or --held (only what could be a held lease read, only held leases printed);
 * --limit stops after that many lines, and the listing with them.
 */
async function ls(/** @type {Fencepost} */ db, /** @type {string[]} */ args, /** @type {Flags} */ flags) {
  const showHolders = flags["show-holders"] === true;
  const held = flags.held === true;
  // `--json` prints `inspect` records, as `--long` reads them: one line per key, its kind and
  // value included (a plain listing's record could not say what a key holds).
  const long = held || flags.long === true || flags.json === true;
  const limit = flags.limit === undefined ? Infinity : Number(flags.limit);
  const listing = db.objects.entries(args[0] ?? "");
  // Without --held each listed key is a line: the listing stops at the page that holds the last.
  const listed = held ? listing : first(listing, limit);
  /** @type {AsyncIterable<Entry | import("./cli/format.js").Seen | null>} */
  const rows = !long ? listed
    : inspectAll(db, held ? only(listed, (e) => e.size === undefined || e.size >= HELD_LEASE_MIN_BYTES) : listed);
  const progress = progressLine();
  let scanned = 0;
  let printed = 0;
  try {
    for await (const row of rows) {
      progress.update(++scanned);
      if (row === null) continue; // deleted between the listing and the read
      if (held && !("kind" in row && row.lease && !row.lease.expired)) continue;
      progress.beforeOutput();
      out(!("kind" in row) ? entryLine(row, Date.now())
        : flags.json ? jsonLine(record(row, showHolders)) : listLine(row, Date.now(), showHolders));
      if (++printed >= limit) break;
    }
  } finally {
    progress.clear();
  }
  return 0;
}

/** @typedef {{key: string, etag: string | undefined, size: number | undefined, lastModified: Date | null}} Entry what the listing gives */

/** The first `n` of `source`, which is closed after them (no further page is listed). */
async function* first(/** @type {AsyncIterable<Entry>} */ source, /** @type {number} */ n) {
  let taken = 0;
  for await (const item of source) {
    yield item;
    if (++taken >= n) return;
  }
}

/** What of `source` passes `keep`. */
async function* only(/** @type {AsyncIterable<Entry>} */ source, /** @type {(e: Entry) => boolean} */ keep) {
  for await (const item of source) if (keep(item)) yield item;
}

/**
 * `inspect` of every listed key, in key order, at most WINDOW reads in flight, so a prefix of
 * 100,000 keys is never one array. A key fencepost does not read (CairnDB's `log/…` and
 * `snapshots/…` in a shared bucket: inspect refuses them) is kind `other`, from the listing alone.
 * @param {Fencepost} db @param {AsyncIterable<Entry>} entries
 */
async function* inspectAll(db, entries) {
  const WINDOW = 8;
  /** @type {Promise<{seen: any} | {error: unknown}>[]} */
  const reads = [];
  const settle = async () => {
    const r = /** @type {any} */ (await reads.shift());
    if ("error" in r) throw r.error;
    return r.seen;
  };
  for await (const entry of entries) {
    const other = { ...entry, kind: "other" };
    reads.push(db.inspect(entry.key).then((seen) => ({ seen }), (error) => (error instanceof InvalidArgument ? { seen: other } : { error })));
    if (reads.length >= WINDOW) yield await settle();
  }
  while (reads.length) yield await settle();
}

/**
 * A progress line on stderr, when stderr is a terminal and the listing has run for a second; taken
 * off the terminal before each output line when stdout is that terminal too.
 */
function progressLine() {
  const tty = process.stderr.isTTY === true;
  const sharedTerminal = tty && process.stdout.isTTY === true;
  const started = Date.now();
  let shown = false;
  let drawn = 0;
  return {
    update(/** @type {number} */ count) {
      const now = Date.now();
      if (!tty || now - started < 1000 || now - drawn < 200) return;
      process.stderr.write(`\r\x1b[Klisting… ${count} keys (${((now - started) / 1000).toFixed(0)} s)`);
      shown = true;
      drawn = now;
    },
    beforeOutput() {
      if (sharedTerminal) this.clear();
    },
    clear() {
      if (!shown) return;
      process.stderr.write("\r\x1b[K");
      shown = false;
    },
  };
}

/** `show <key>`: what `inspect` returns; exit 1 when the key does not exist. */
async function show(/** @type {Fencepost} */ db, /** @type {string[]} */ [key], /** @type {Flags} */ flags) {
  const seen = await db.inspect(key);
  if (seen === null) throw new Refusal(`not found: ${key}`);
  const showHolders = flags["show-holders"] === true;
  if (flags.json) out(jsonLine(record(seen, showHolders)));
  else for (const line of showLines(seen, Date.now(), showHolders)) out(line);
  return 0;
}

/** `break <key> [--yes]`: `breakLease`, after a y/N question on a terminal unless --yes. */
async function breakCommand(/** @type {Fencepost} */ db, /** @type {string[]} */ [key], /** @type {Flags} */ flags) {
  const showHolders = flags["show-holders"] === true;
  const seen = await db.inspect(key);
  if (seen === null) throw new Refusal(`no lease at ${key}: not found`);
  if (seen.kind !== "lease" || !seen.lease) throw new Refusal(`no lease at ${key}: it holds ${seen.kind === "json" ? "a JSON value" : "bytes"}`);
  const l = seen.lease;
  const what = `${key} (epoch ${l.epoch}${l.holder === null ? "" : `, holder ${fingerprint(l.holder, showHolders)}`}, ${standing(l)})`;
  if (flags.yes !== true) {
    if (!(process.stdin.isTTY && process.stderr.isTTY)) {
      throw new Refusal(`refused: not breaking ${what} without confirmation; pass --yes`);
    }
    const answer = await ask(`break the lease ${what}? [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) throw new Refusal(`not confirmed: ${key} not broken`);
  }
  const broken = await db.breakLease(key);
  if (broken === null) throw new Refusal(`no lease at ${key}: not found`);
  if (flags.json) {
    out(jsonLine({ ...broken, previous: { ...broken.previous, holder: fingerprint(broken.previous.holder, showHolders) } }));
  } else {
    out(brokeLine(broken, Date.now(), showHolders));
  }
  return 0;
}

/** One line from the terminal, the question on stderr. */
function ask(/** @type {string} */ question) {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  return new Promise((resolve) => {
    let answered = false;
    rl.question(question, (answer) => {
      answered = true;
      rl.close();
      resolve(answer);
    });
    rl.on("close", () => {
      if (!answered) resolve(""); // end of input (Ctrl-D): no
    });
  });
}

/** `prune <prefix> --older-than <duration> [--yes]`: a dry run unless --yes. */
async function prune(/** @type {Fencepost} */ db, /** @type {string[]} */ [prefix], /** @type {Flags} */ flags) {
  const olderThan = parseDuration(String(flags["older-than"]), "--older-than", "prune");
  const dryRun = flags.yes !== true;
  const { deleted, kept, keys } = await db.prune(prefix, { olderThan, dryRun });
  if (flags.json) {
    out(jsonLine({ prefix, olderThan, dryRun, deleted, kept, keys }));
    return 0;
  }
  for (const key of keys) out(`${dryRun ? "would delete" : "deleted"} ${shown(key)}`);
  const under = `under "${prefix}" older than ${flags["older-than"]}`;
  out(dryRun
    ? `dry run: would delete ${deleted} object(s) ${under}, keep ${kept}; nothing deleted (pass --yes to delete)`
    : `deleted ${deleted} object(s) ${under}, kept ${kept}`);
  return 0;
}

/** `check`: checkStore, each check a line; exit 1 when a required one failed. */
async function check(/** @type {Fencepost} */ db, /** @type {string[]} */ _args, /** @type {Flags} */ flags) {
  const report = await checkStore(db.store);
  if (flags.json) out(jsonLine(report));
  else {
    for (const c of report.checks) out(checkLine(c));
    out(report.ok ? "ok: the store honours what fencepost needs" : "FAILED: the store does not honour what fencepost needs");
  }
  return report.ok ? 0 : NOT_DONE;
}

/** @type {Record<string, (db: Fencepost, args: string[], flags: Flags) => Promise<number>>} */
const RUN = { ls, show, break: breakCommand, prune, check };

// --------------------------------------------------------------------------------- errors

/**
 * A failure as one line and an exit status: the library's typed errors (`err.code`) worded for an
 * operator, never a stack trace.
 * @param {any} e @param {Where | null} where @returns {[string, number]}
 */
function describe(e, where) {
  if (e instanceof UsageError) {
    return [`${e.message} (see fencepost ${e.command ? `${e.command} ` : ""}--help)`, USAGE];
  }
  if (e instanceof Refusal) return [e.message, NOT_DONE];
  const message = oneLine(e?.message ?? String(e));
  switch (e?.code) {
    case "INVALID_ARGUMENT":
      return [message, USAGE];
    case "TIMEOUT":
      return [message, STORE_FAILED];
    case "STORAGE_ERROR":
    case "AMBIGUOUS_WRITE":
      return [storeFailure(e, message, where), STORE_FAILED];
    default:
      return [e?.code ? message : `unexpected error: ${message}`, NOT_DONE];
  }
}

/** A store's failure for an operator: refused credentials (and where they came from), a missing bucket, an unreachable endpoint. */
function storeFailure(/** @type {any} */ e, /** @type {string} */ message, /** @type {Where | null} */ where) {
  const s3 = e.s3Code ? `${e.s3Code}, HTTP ${e.status}` : e.status ? `HTTP ${e.status}` : "";
  if (CREDENTIALS.has(e.s3Code)) {
    return `the store refused the credentials (${s3}): check the access key id and secret ` +
      "(AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, --access-key-id/--secret-access-key-stdin, or the credentials file's profile" +
      `${/Token/.test(e.s3Code) ? "; and the session token" : ""})`;
  }
  if (AZURE_CREDENTIALS.has(e.s3Code)) {
    return `the store refused the credentials (${s3}): check the account and its key or SAS token ` +
      "(AZURE_STORAGE_ACCOUNT/AZURE_STORAGE_KEY/AZURE_STORAGE_SAS_TOKEN or --account/--account-key-stdin/--sas-token-stdin)";
  }
  if (GCS_CREDENTIALS.has(e.s3Code)) {
    return `the store refused the credentials (${s3}): check the service account key or access token ` +
      "(GOOGLE_APPLICATION_CREDENTIALS/CLOUDSDK_AUTH_ACCESS_TOKEN or --credentials/--access-token-stdin)";
  }
  if (e.s3Code === "AccessDenied") return `access denied (${s3}): the credentials may not do this in bucket "${where?.bucket}"`;
  if (e.s3Code === "NoSuchBucket") return `no bucket "${where?.bucket}" at ${where?.endpoint} (${s3})`;
  if (e.s3Code === "ContainerNotFound") return `no container "${where?.bucket}" at ${where?.endpoint} (${s3})`;
  if (e.status === undefined && e.code === "STORAGE_ERROR") {
    const cause = /\(cause: (?:\w*Error: )?(.*)\)$/.exec(message)?.[1];
    return `cannot reach the store at ${where?.endpoint}: ${cause ?? message.replace(/^storage error:\s*/, "")}`;
  }
  return `the store failed${s3 ? ` (${s3})` : ""}: ${message}`;
}

/** The store's codes for credentials it does not accept. */
const CREDENTIALS = new Set(["SignatureDoesNotMatch", "InvalidAccessKeyId", "InvalidToken", "ExpiredToken",
  "InvalidClientTokenId", "AuthorizationHeaderMalformed", "MissingSecurityHeader", "TokenRefreshRequired"]);

/** Azure's and Google's codes for credentials they do not accept. */
const AZURE_CREDENTIALS = new Set(["AuthenticationFailed", "AuthorizationFailure", "InvalidAuthenticationInfo"]);
const GCS_CREDENTIALS = new Set(["authError", "invalid_grant", "invalid_client", "unauthorized_client", "TokenFailed",
  "SigningFailed"]);

const oneLine = (/** @type {string} */ text) => text.replace(/\s*\n\s*/g, " ").trim();

// ----------------------------------------------------------------------------------- main

/** Run one command line; resolves to the exit status. */
async function main(/** @type {string[]} */ argv) {
  /** @type {Where | null} */
  let where = null;
  try {
    const parsed = parse(argv);
    if ("version" in parsed) {
      out(packageJson.version);
      return 0;
    }
    if ("help" in parsed) {
      out(parsed.command ? commandHelp(parsed.command) : parsed.help === "short" ? shortHelp() : mainHelp());
      return 0;
    }
    const { command, args, flags } = parsed;
    if (command === "prune") parseDuration(String(flags["older-than"]), "--older-than", command); // before any request
    // An operator waits at a terminal: shorter attempts and fewer of them than a service's defaults.
    const timeout = flags.timeout === undefined ? 10 : parseDuration(String(flags.timeout), "--timeout", command);
    if (timeout <= 0) throw new UsageError("--timeout must be more than 0 seconds", command);
    const settings = await storeSettings(flags, command);
    where = settings.kind === "s3" ? { endpoint: settings.options.endpoint, bucket: settings.options.bucket } : settings.where;
    // Leases are judged (held or not, by ls --held, show, prune) in the store's time, not by the
    // operator's clock, which may be minutes off the workers' and would show a live lease expired.
    const db = new Fencepost(openStore(settings, timeout), { retry: { maxAttempts: 3 }, clock: "store" });
    return await RUN[command](db, args, flags);
  } catch (e) {
    const [line, status] = describe(e, where);
    err(`fencepost: ${line}`);
    return status;
  }
}

// A closed pipe (`fencepost ls | head`) ends the listing quietly.
process.stdout.on?.("error", (/** @type {any} */ e) => {
  if (e?.code === "EPIPE") process.exit(0);
});

const status = await main(process.argv.slice(2));
// Let what was written reach the pipe before exiting (stdout may be asynchronous).
await new Promise((resolve) => process.stdout.write("", () => resolve(undefined)));
process.exit(status);
