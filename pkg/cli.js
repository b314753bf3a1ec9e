#!/usr/bin/env node
// `fencepost`, the package's command line: see what a bucket holds (ls, show), break a stuck lease,
// prune old objects, check the store (`fencepost --help`). One file for Node (≥ 20) and Deno 2:
// only `process`, `node:util`, `node:readline` and `node:fs`, which Deno's Node compatibility has.
// The store is `s3Store`, `azureStore` or `gcsStore` (--store) from flags, else the environment.
// Exit status: 0 ok; 1 not found, check failed, not confirmed, or the store failed; 2 usage. Every
// error is one line on stderr.

import process from "node:process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { Fencepost, s3Store, azureStore, gcsStore, checkStore } from "./node.js";
import { UsageError, commandHelp, mainHelp, parse, parseDuration } from "./cli/usage.js";
import { brokeLine, checkLine, fingerprint, jsonLine, listLine, record, showLines, standing } from "./cli/format.js";

/** @typedef {Record<string, string | boolean | undefined>} Flags */
/** @typedef {{endpoint: string, bucket: string}} Where what error messages may name (never a credential) */

/** Exit 1 with one line: not found, not confirmed, a failed check. */
class Refusal extends Error {}

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

/** The store to operate on: its kind, its options (each flag, else its environment variable), and
 * what error messages may name. Missing settings are a usage error. */
function storeSettings(/** @type {Flags} */ flags, /** @type {string} */ command) {
  const env = process.env;
  const kind = typeof flags.store === "string" ? flags.store : env.FENCEPOST_STORE || "s3";
  if (!Object.hasOwn(STORES, kind)) throw new UsageError(`--store must be s3, azure or gcs, not "${kind}"`, command);
  const own = new Set(STORES[kind].map(([option]) => option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)));
  const foreign = Object.values(STORES).flat().map(([o]) => o.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`))
    .find((flag) => flags[flag] !== undefined && !own.has(flag));
  if (foreign) throw new UsageError(`--${foreign} is not a setting of the ${kind} store (--store s3, azure or gcs)`, command);
  /** @type {Record<string, string>} */
  const options = {};
  const missing = [];
  for (const [option, names, required] of STORES[kind]) {
    const flag = option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    const given = flags[flag];
    const value = typeof given === "string" ? given : names.map((n) => env[n]).find((v) => v);
    if (value) options[option] = value;
    else if (required) missing.push(`no ${required} (--${flag} or ${names.join(" or ")})`);
  }
  if (kind === "azure" && !options.accountKey && !options.sasToken) {
    missing.push("no account key or SAS token (--account-key or AZURE_STORAGE_KEY, --sas-token or AZURE_STORAGE_SAS_TOKEN)");
  }
  if (missing.length) throw new UsageError(`missing configuration: ${missing.join(", ")}`, command);
  const prefix = typeof flags.prefix === "string" ? flags.prefix : env.FENCEPOST_PREFIX;
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

/** `ls [prefix]`: every key under the prefix, page by page, each inspected once. */
async function ls(/** @type {Fencepost} */ db, /** @type {string[]} */ args, /** @type {Flags} */ flags) {
  const showHolders = flags["show-holders"] === true;
  const progress = progressLine();
  let count = 0;
  try {
    for await (const seen of inspectAll(db, args[0] ?? "")) {
      if (seen === null) continue; // deleted between the listing and the read
      count++;
      progress.beforeOutput();
      out(flags.json ? jsonLine(record(seen, showHolders)) : listLine(seen, Date.now(), showHolders));
      progress.update(count);
    }
  } finally {
    progress.clear();
  }
  return 0;
}

/**
 * `inspect` of every key under `prefix`, in key order: the listing page by page (`objects.entries`),
 * at most WINDOW reads in flight, so a prefix of 100,000 keys is never one array.
 * @param {Fencepost} db @param {string} prefix
 */
async function* inspectAll(db, prefix) {
  const WINDOW = 8;
  /** @type {Promise<{seen: any} | {error: unknown}>[]} */
  const reads = [];
  const settle = async () => {
    const r = /** @type {any} */ (await reads.shift());
    if ("error" in r) throw r.error;
    return r.seen;
  };
  for await (const { key } of db.objects.entries(prefix)) {
    reads.push(db.inspect(key).then((seen) => ({ seen }), (error) => ({ error })));
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
  for (const key of keys) out(`${dryRun ? "would delete" : "deleted"} ${key}`);
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
  return report.ok ? 0 : 1;
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
    return [`${e.message} (see fencepost ${e.command ? `${e.command} ` : ""}--help)`, 2];
  }
  if (e instanceof Refusal) return [e.message, 1];
  const message = oneLine(e?.message ?? String(e));
  switch (e?.code) {
    case "INVALID_ARGUMENT":
      return [message, 2];
    case "STORAGE_ERROR":
    case "AMBIGUOUS_WRITE": {
      const s3 = e.s3Code ? `${e.s3Code}, HTTP ${e.status}` : e.status ? `HTTP ${e.status}` : "";
      if (CREDENTIALS.has(e.s3Code)) {
        return [`the store refused the credentials (${s3}): check the access key id and secret ` +
          "(--access-key-id/--secret-access-key or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY" +
          `${/Token/.test(e.s3Code) ? ", and AWS_SESSION_TOKEN" : ""})`, 1];
      }
      if (AZURE_CREDENTIALS.has(e.s3Code)) {
        return [`the store refused the credentials (${s3}): check the account and its key or SAS token ` +
          "(--account/--account-key/--sas-token or AZURE_STORAGE_ACCOUNT/AZURE_STORAGE_KEY/AZURE_STORAGE_SAS_TOKEN)", 1];
      }
      if (GCS_CREDENTIALS.has(e.s3Code)) {
        return [`the store refused the credentials (${s3}): check the service account key or access token ` +
          "(--credentials/--access-token or GOOGLE_APPLICATION_CREDENTIALS/CLOUDSDK_AUTH_ACCESS_TOKEN)", 1];
      }
      if (e.s3Code === "AccessDenied") return [`access denied (${s3}): the credentials may not do this in bucket "${where?.bucket}"`, 1];
      if (e.s3Code === "NoSuchBucket") return [`no bucket "${where?.bucket}" at ${where?.endpoint} (${s3})`, 1];
      if (e.s3Code === "ContainerNotFound") return [`no container "${where?.bucket}" at ${where?.endpoint} (${s3})`, 1];
      if (e.status === undefined && e.code === "STORAGE_ERROR") {
        const cause = /\(cause: (?:\w*Error: )?(.*)\)$/.exec(message)?.[1];
        return [`cannot reach the store at ${where?.endpoint}: ${cause ?? message.replace(/^storage error:\s*/, "")}`, 1];
      }
      return [`the store failed${s3 ? ` (${s3})` : ""}: ${message}`, 1];
    }
    default:
      return [e?.code ? message : `unexpected error: ${message}`, 1];
  }
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
      out(JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")).version);
      return 0;
    }
    if ("help" in parsed) {
      out(parsed.command ? commandHelp(parsed.command) : mainHelp());
      return 0;
    }
    const { command, args, flags } = parsed;
    if (command === "prune") parseDuration(String(flags["older-than"]), "--older-than", command); // before any request
    const settings = storeSettings(flags, command);
    where = settings.kind === "s3" ? { endpoint: settings.options.endpoint, bucket: settings.options.bucket } : settings.where;
    // An operator waits at a terminal: shorter attempts and fewer of them than a service's defaults.
    const timeout = flags.timeout === undefined ? 10 : parseDuration(String(flags.timeout), "--timeout", command);
    if (timeout <= 0) throw new UsageError("--timeout must be more than 0 seconds", command);
    const db = new Fencepost(openStore(settings, timeout), { retry: { maxAttempts: 3 } });
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
