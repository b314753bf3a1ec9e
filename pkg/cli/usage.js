// The command line as words: the commands and their flags, the help texts, durations, and
// `parse(argv)`, which turns argv into one command or a `UsageError` (exit 2). Nothing here talks
// to a store. `node:util`'s parseArgs is in Node (≥ 18.3) and Deno alike.

import { parseArgs } from "node:util";

/** A mistake in the command line (unknown command or flag, missing argument, bad duration, missing configuration): exit 2. */
export class UsageError extends Error {
  /** @param {string} message @param {string} [command] the command whose help to point at */
  constructor(message, command) {
    super(message);
    this.name = "UsageError";
    this.command = command;
  }
}

/** Every flag, as parseArgs takes it. */
const FLAGS = /** @type {const} */ ({
  store: { type: "string" },
  endpoint: { type: "string" },
  bucket: { type: "string" },
  region: { type: "string" },
  prefix: { type: "string" },
  "access-key-id": { type: "string" },
  "secret-access-key": { type: "string" },
  "session-token": { type: "string" },
  account: { type: "string" },
  container: { type: "string" },
  "account-key": { type: "string" },
  "sas-token": { type: "string" },
  "access-token": { type: "string" },
  credentials: { type: "string" },
  timeout: { type: "string" },
  json: { type: "boolean" },
  "show-holders": { type: "boolean" },
  yes: { type: "boolean", short: "y" },
  "older-than": { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
});

/** The flags every command takes: the stores', `--json` and `--help`. */
const COMMON = ["store", "endpoint", "bucket", "region", "prefix", "access-key-id", "secret-access-key", "session-token",
  "account", "container", "account-key", "sas-token", "access-token", "credentials", "timeout", "json", "help"];

/**
 * The commands: positionals (`name` required, `[name]` optional), their own flags, the help.
 * @type {Record<string, {args: string[], flags: string[], summary: string, help: string}>}
 */
export const COMMANDS = {
  ls: {
    args: ["[prefix]"],
    flags: ["show-holders"],
    summary: "each key: kind, age, size; a lease's epoch, holder, expiry",
    help: `One line per key under [prefix] (default: every key), in key order, page by page:
kind (lease, json or bytes), age (since the store last wrote it), size, key; for a lease its epoch,
its holder as a fingerprint (its first 6 characters), and "expires in …", "expired … ago" or
"released". Each key is read once (inspect). On a terminal, a progress line on stderr while a long
listing runs.

  --show-holders   print holders in full (a holder is a credential: whoever knows it can attach)
  --json           one JSON record per line (NDJSON): what inspect returns for each key, dates as
                   ISO strings, bytes as base64, holders fingerprinted unless --show-holders`,
  },
  show: {
    args: ["key"],
    flags: ["show-holders"],
    summary: "what one key holds (exit 1 when it does not exist)",
    help: `What <key> holds: kind, size, etag, last modified; a JSON value pretty-printed; for a lease
its epoch, holder (a fingerprint unless --show-holders), deadline, whether it is held, expired or
released, and its state. Exit 1 when the key does not exist.

  --show-holders   print the holder in full
  --json           one JSON object: what inspect returns (dates as ISO strings, bytes as base64)`,
  },
  break: {
    args: ["key"],
    flags: ["yes", "show-holders"],
    summary: "break a stuck lease: the next epoch, released; its holder fenced",
    help: `Break the lease at <key> the way a takeover would: the next epoch is written, released, so
the stuck holder is fenced (its next write through the lease fails with LeaseLost) and whoever
acquires next gets a higher epoch. Prints what it broke: the previous epoch and holder, the new
epoch. Without --yes it asks on a terminal (y/N) and changes nothing otherwise. Exit 1 when there
is no lease at <key> or the break was not confirmed.

  -y, --yes        break without asking
  --show-holders   print the holder in full
  --json           one JSON object: {key, epoch, previous: {epoch, holder, deadlineAt, expired, released}}`,
  },
  prune: {
    args: ["prefix"],
    flags: ["older-than", "yes"],
    summary: "delete what is older than --older-than (a dry run without --yes)",
    help: `Delete the objects under <prefix> last written more than --older-than ago; a held lease is
never deleted. Without --yes, a dry run: prints what it would delete and deletes nothing. Prune only
key spaces that do not recur (past cron ticks, finished jobs): a deleted claim can be claimed again,
and a deleted lease restarts at epoch 1.

  --older-than <duration>   required: 90s, 15m, 36h, 7d, or seconds
  -y, --yes                 delete (default: a dry run)
  --json                    one JSON object: {prefix, olderThan, dryRun, deleted, kept, keys}
                            (olderThan in seconds; in a dry run, deleted counts what would go)`,
  },
  check: {
    args: [],
    flags: [],
    summary: "does the store honour conditional writes? (exit 1 when not)",
    help: `Runs checkStore on the bucket: create-only and If-Match writes refused when they must be, one
winner of a racing create, write tokens kept, listing; conditional DELETE and the store clock's
offset for information. Writes only under __fencepost_check/<random>/ and deletes what it wrote.
Prints each check (ok, required or optional, name, detail). Exit 1 when a required check failed.

  --json           one JSON object: {ok, checks: [{name, ok, required, detail}]}`,
  },
};

const STORE_HELP = `Store (each flag, else the environment):
  --store <s3|azure|gcs>      FENCEPOST_STORE         which kind of store (default s3)
  --prefix <prefix>           FENCEPOST_PREFIX        the store prefix: keys live under <prefix>/
  --timeout <duration>        per request attempt (default 10s; 3 attempts), so an endpoint that
                              never answers fails within about 3 × the timeout
 S3, R2 and S3-compatible stores (--store s3):
  --endpoint <url>            FENCEPOST_S3_ENDPOINT   the S3 API endpoint (http:// or https://)
  --bucket <name>             FENCEPOST_S3_BUCKET
  --region <name>             AWS_REGION, AWS_DEFAULT_REGION (default us-east-1; R2: auto)
  --access-key-id <id>        AWS_ACCESS_KEY_ID
  --secret-access-key <key>   AWS_SECRET_ACCESS_KEY
  --session-token <token>     AWS_SESSION_TOKEN       (optional)
 Azure Blob Storage (--store azure):
  --account <name>            AZURE_STORAGE_ACCOUNT
  --container <name>          FENCEPOST_AZURE_CONTAINER
  --account-key <key>         AZURE_STORAGE_KEY       the account key, or:
  --sas-token <token>         AZURE_STORAGE_SAS_TOKEN
  --endpoint <url>            FENCEPOST_AZURE_ENDPOINT (default https://<account>.blob.core.windows.net)
 Google Cloud Storage (--store gcs):
  --bucket <name>             FENCEPOST_GCS_BUCKET
  --credentials <file>        GOOGLE_APPLICATION_CREDENTIALS  a service account's JSON key, or:
  --access-token <token>      CLOUDSDK_AUTH_ACCESS_TOKEN      an OAuth access token
  --endpoint <url>            STORAGE_EMULATOR_HOST   (default https://storage.googleapis.com)`;

const EXIT_HELP = `Exit status: 0 ok; 1 not found, check failed, not confirmed, or the store failed (refused
credentials, unreachable endpoint, missing bucket); 2 usage (unknown command or flag, missing
argument, bad duration, missing configuration).`;

/** `fencepost --help`. */
export function mainHelp() {
  const short = (/** @type {string} */ n) => [n, ...COMMANDS[n].args.map((a) => (a.startsWith("[") ? a : `<${a}>`))].join(" ");
  const width = Math.max(...Object.keys(COMMANDS).map((n) => short(n).length));
  const commands = Object.entries(COMMANDS).map(([n, c]) => `  ${short(n).padEnd(width)}  ${c.summary}`);
  return `fencepost: see and operate what fencepost keeps in a bucket (claims, leases, docs)

Usage: fencepost <command> [arguments] [flags]

Commands:
${commands.join("\n")}

${STORE_HELP}

Flags of every command:
  --json            machine-readable output (ls: one JSON record per line; others one JSON object)
  -h, --help        help; "fencepost <command> --help" for a command's own
fencepost --version prints the package's version.

Durations: 90s, 15m, 36h, 7d, or a number of seconds.
${EXIT_HELP}

Example:
  export FENCEPOST_S3_ENDPOINT=https://<account>.r2.cloudflarestorage.com FENCEPOST_S3_BUCKET=coordination
  export AWS_REGION=auto AWS_ACCESS_KEY_ID=… AWS_SECRET_ACCESS_KEY=…
  fencepost ls jobs/
  fencepost break jobs/nightly
  fencepost prune cron/ --older-than 7d --yes`;
}

/** `fencepost <command> --help`. */
export function commandHelp(/** @type {string} */ name) {
  const c = COMMANDS[name];
  return `Usage: fencepost ${usageLine(name, c)} [flags]

${c.help}

${STORE_HELP}

${EXIT_HELP}`;
}

function usageLine(/** @type {string} */ name, /** @type {{args: string[], flags: string[]}} */ c) {
  const args = c.args.map((a) => (a.startsWith("[") ? a : `<${a}>`));
  if (c.flags.includes("older-than")) args.push("--older-than <duration>");
  if (c.flags.includes("yes")) args.push("[--yes]");
  return [name, ...args].join(" ");
}

/**
 * @typedef {{help: true, command?: string} | {version: true} |
 *   {command: string, args: string[], flags: Record<string, string | boolean | undefined>}} Parsed
 */

/**
 * The command line (argv without the runtime and the script) as one command.
 * @param {string[]} argv @returns {Parsed}
 */
export function parse(argv) {
  /** @type {{values: Record<string, string | boolean | undefined>, positionals: string[]}} */
  let parsed;
  try {
    parsed = /** @type {any} */ (parseArgs({ args: argv, options: FLAGS, allowPositionals: true, strict: true }));
  } catch (e) {
    const command = argv.find((a) => Object.hasOwn(COMMANDS, a));
    throw new UsageError(parseArgsMessage(/** @type {any} */ (e)), command);
  }
  const { values, positionals } = parsed;
  let [command, ...args] = positionals;
  if (command === "help") {
    if (args.length === 0) return { help: true };
    [command, ...args] = args;
    values.help = true;
  }
  if (command === undefined) {
    if (values.help) return { help: true };
    if (values.version) return { version: true };
    throw new UsageError("no command given: ls, show, break, prune or check");
  }
  if (!Object.hasOwn(COMMANDS, command)) {
    throw new UsageError(`unknown command "${command}": ls, show, break, prune or check`);
  }
  if (values.help) return { help: true, command };
  const spec = COMMANDS[command];
  for (const flag of Object.keys(values)) {
    if (!COMMON.includes(flag) && !spec.flags.includes(flag)) {
      throw new UsageError(`${command} takes no --${flag}`, command);
    }
  }
  const required = spec.args.filter((a) => !a.startsWith("["));
  if (args.length < required.length) throw new UsageError(`${command} needs <${required[args.length]}>`, command);
  if (args.length > spec.args.length) throw new UsageError(`${command}: unexpected argument "${args[spec.args.length]}"`, command);
  if (spec.flags.includes("older-than") && values["older-than"] === undefined) {
    throw new UsageError(`${command} needs --older-than <duration> (90s, 15m, 36h, 7d)`, command);
  }
  return { command, args, flags: values };
}

/** parseArgs's message, to the point (its advice about `--` only confuses). */
function parseArgsMessage(/** @type {{code?: string, message?: string}} */ e) {
  const message = String(e.message ?? e);
  const unknown = /^Unknown option '([^']+)'/.exec(message);
  if (unknown) return `unknown flag ${unknown[1]}`;
  const flag = /^Option '([^' ]+)[^']*' (argument missing|argument is ambiguous|does not take an argument)/.exec(message);
  if (flag) return flag[2] === "does not take an argument" ? `${flag[1]} takes no value` : `${flag[1]} needs a value`;
  return message.replace(/\s*\n\s*/g, " ");
}

const UNITS = /** @type {Record<string, number>} */ ({ "": 1, s: 1, m: 60, h: 3600, d: 86_400 });

/**
 * A duration in seconds: `90s`, `15m`, `36h`, `7d`, or plain seconds (`3600`, `1.5`). Anything else
 * is a `UsageError`.
 * @param {string} text @param {string} flag where it came from, for the message @param {string} [command]
 */
export function parseDuration(text, flag, command) {
  const m = /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(text.trim());
  if (!m) throw new UsageError(`${flag}: bad duration "${text}" (use e.g. 90s, 15m, 36h, 7d, or seconds)`, command);
  return Number(m[1]) * UNITS[m[2]];
}
