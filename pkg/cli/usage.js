// The command line as words: the commands and their flags, the help texts, durations, and
// `parse(argv)`, which turns argv into one command or a `UsageError` (exit 2). Nothing here talks
// to a store. `node:util`'s parseArgs is in Node (≥ 18.3) and Deno alike.

import { parseArgs } from "node:util";
import { nearest } from "../options.js";

/** A mistake in the command line (unknown command or flag, missing argument, bad duration, missing configuration): exit 2. */
export class UsageError extends Error {
  /** @param {string} message @param {string} [command] the command whose help to point at */
  constructor(message, command) {
    super(message);
    this.name = "UsageError";
    this.command = command;
  }
}

/**
 * The secrets, each by its flag name: the environment variable that holds it. A secret is never a
 * flag's value (the process list shows it to every user of the machine, and shell history keeps
 * it): `--<name>` given a value is a usage error saying where to put it, and `--<name>-stdin`
 * reads it from standard input.
 * @type {Record<string, string>}
 */
export const SECRETS = { "secret-access-key": "AWS_SECRET_ACCESS_KEY", "session-token": "AWS_SESSION_TOKEN",
  "account-key": "AZURE_STORAGE_KEY", "sas-token": "AZURE_STORAGE_SAS_TOKEN", "access-token": "CLOUDSDK_AUTH_ACCESS_TOKEN" };

/** Every flag, as parseArgs takes it. A secret's own flag is a string only so that a value given to it can be refused. */
const FLAGS = /** @type {Record<string, {type: "string" | "boolean", short?: string}>} */ ({
  store: { type: "string" },
  "store-prefix": { type: "string" },
  prefix: { type: "string" },
  endpoint: { type: "string" },
  bucket: { type: "string" },
  region: { type: "string" },
  "access-key-id": { type: "string" },
  account: { type: "string" },
  container: { type: "string" },
  credentials: { type: "string" },
  ...Object.fromEntries(Object.keys(SECRETS).flatMap((name) => [[name, { type: "string" }], [`${name}-stdin`, { type: "boolean" }]])),
  timeout: { type: "string" },
  json: { type: "boolean" },
  "show-holders": { type: "boolean" },
  long: { type: "boolean", short: "l" },
  held: { type: "boolean" },
  limit: { type: "string" },
  yes: { type: "boolean", short: "y" },
  "older-than": { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
});

/** The flags every command takes: the stores' (secrets included, to be refused with advice), `--json` and `--help`. */
const COMMON = ["store", "store-prefix", "prefix", "endpoint", "bucket", "region", "access-key-id", "account", "container",
  "credentials", ...Object.keys(SECRETS).flatMap((name) => [name, `${name}-stdin`]), "timeout", "json", "help"];

/**
 * The commands: positionals (`name` required, `[name]` optional), their own flags, the help.
 * @type {Record<string, {args: string[], flags: string[], summary: string, help: string}>}
 */
export const COMMANDS = {
  ls: {
    args: ["[prefix]"],
    flags: ["long", "held", "limit", "show-holders"],
    summary: "each key: age, size (--long: kind, a lease's epoch, holder, expiry)",
    help: `One line per key under [prefix] (default: every key), in key order, from the listing alone
(one request per 1,000 keys, no object read): age (since the store last wrote it), size, key.
With --long each key is read (inspect, one request each) and its line starts with its kind (lease,
json or bytes; other for a key fencepost does not read, as CairnDB's log/ and snapshots/ in a shared
bucket); a lease adds its epoch, its holder as a fingerprint (its first 6 characters),
"expires in …", "expired … ago" or "released", and what it is used for when its shape says (a
once record, a semaphore slot). With --held only the leases held now (a holder, the deadline
ahead), as --long prints them; only objects large enough to be a held lease are read. On a
terminal, a progress line on stderr while a long listing runs.

  -l, --long       read each key: kind; a lease's epoch, holder, expiry, role
  --held           only the held leases, each as --long prints it
  --limit <n>      stop after n lines (the listing stops at the page that holds them)
  --show-holders   print holders in full, with --long, --held or --json (a holder is a
                   credential: whoever knows it can attach)
  --json           one JSON record per line (NDJSON), what inspect returns for each key (each
                   key read, as --long reads it): dates as ISO strings, bytes as base64, holders
                   fingerprinted unless --show-holders`,
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
  --store-prefix <prefix>     FENCEPOST_PREFIX        the store prefix: keys live under <prefix>/
                                                      (--prefix: the same)
  --timeout <duration>        per request attempt (default 10s; 3 attempts), so an endpoint that
                              never answers fails within about 3 × the timeout
 S3, R2 and S3-compatible stores (--store s3):
  --endpoint <url>            FENCEPOST_S3_ENDPOINT   the S3 API endpoint (http:// or https://)
  --bucket <name>             FENCEPOST_S3_BUCKET
  --region <name>             AWS_REGION, AWS_DEFAULT_REGION (default us-east-1; R2: auto)
  --access-key-id <id>        AWS_ACCESS_KEY_ID
  --secret-access-key-stdin   AWS_SECRET_ACCESS_KEY
  --session-token-stdin       AWS_SESSION_TOKEN       (optional)
                              Without a secret there, all three from the credentials file:
                              AWS_SHARED_CREDENTIALS_FILE (default ~/.aws/credentials), the
                              profile AWS_PROFILE (default "default"): aws_access_key_id,
                              aws_secret_access_key, aws_session_token
 Azure Blob Storage (--store azure):
  --account <name>            AZURE_STORAGE_ACCOUNT
  --container <name>          FENCEPOST_AZURE_CONTAINER
  --account-key-stdin         AZURE_STORAGE_KEY       the account key, or:
  --sas-token-stdin           AZURE_STORAGE_SAS_TOKEN
  --endpoint <url>            FENCEPOST_AZURE_ENDPOINT (default https://<account>.blob.core.windows.net)
 Google Cloud Storage (--store gcs):
  --bucket <name>             FENCEPOST_GCS_BUCKET
  --credentials <file>        GOOGLE_APPLICATION_CREDENTIALS  a service account's JSON key, or:
  --access-token-stdin        CLOUDSDK_AUTH_ACCESS_TOKEN      an OAuth access token
  --endpoint <url>            STORAGE_EMULATOR_HOST   (default https://storage.googleapis.com)

Secrets (keys, tokens) are never flag values, which every user of the machine can see in the
process list: set the environment variable, use the credentials file, or pipe the secret to its
--…-stdin flag (one a run; one trailing newline is dropped), e.g.
  pass show r2/secret | fencepost ls --secret-access-key-stdin`;

const EXIT_HELP = `Exit status: 0 ok; 1 not done: not found, a required check failed, not confirmed, or the
store or the network failed (unreachable endpoint, timeout, refused credentials, missing bucket,
server errors after retries: the line says which); 2 usage (unknown command or flag, missing
argument, bad duration, missing configuration, a secret given as a flag value).`;

/** The top of every overview: what the tool is, its usage line, its commands one a line. */
function overview() {
  const short = (/** @type {string} */ n) => [n, ...COMMANDS[n].args.map((a) => (a.startsWith("[") ? a : `<${a}>`))].join(" ");
  const width = Math.max(...Object.keys(COMMANDS).map((n) => short(n).length));
  const commands = Object.entries(COMMANDS).map(([n, c]) => `  ${short(n).padEnd(width)}  ${c.summary}`);
  return `fencepost: see and operate what fencepost keeps in a bucket (claims, leases, docs)

Usage: fencepost <command> [arguments] [flags]

Commands:
${commands.join("\n")}`;
}

/** A bare `fencepost`: the overview and where to read more. */
export function shortHelp() {
  return `${overview()}

"fencepost <command> --help" for a command's flags; "fencepost --help" for the store settings,
secrets and exit statuses.`;
}

/** `fencepost --help`. */
export function mainHelp() {
  return `${overview()}

${STORE_HELP}

Flags of every command:
  --json            machine-readable output (ls: one JSON record per line; others one JSON object)
  -h, --help        help; "fencepost <command> --help" for a command's own
"fencepost" alone prints the commands (exit 0); "fencepost --version" the package's version.

Durations: 90s, 15m, 36h, 7d, or a number of seconds.
${EXIT_HELP}

Example:
  export FENCEPOST_S3_ENDPOINT=https://<account>.r2.cloudflarestorage.com FENCEPOST_S3_BUCKET=coordination
  export AWS_REGION=auto AWS_ACCESS_KEY_ID=… AWS_SECRET_ACCESS_KEY=…
  fencepost ls jobs/
  fencepost ls --held
  fencepost break jobs/nightly
  fencepost prune cron/ --older-than 7d --yes`;
}

/** `fencepost <command> --help`. */
export function commandHelp(/** @type {string} */ name) {
  const c = COMMANDS[name];
  return `Usage: fencepost ${usageLine(name, c)} [flags]

${c.help}

The store's flags (--store, --store-prefix, --endpoint, --bucket…) and its secrets: fencepost --help.
${EXIT_HELP}`;
}

function usageLine(/** @type {string} */ name, /** @type {{args: string[], flags: string[]}} */ c) {
  const args = c.args.map((a) => (a.startsWith("[") ? a : `<${a}>`));
  if (c.flags.includes("long")) args.push("[--long | --held]");
  if (c.flags.includes("older-than")) args.push("--older-than <duration>");
  if (c.flags.includes("yes")) args.push("[--yes]");
  return [name, ...args].join(" ");
}

/**
 * @typedef {{help: "short" | "full", command?: string} | {version: true} |
 *   {command: string, args: string[], flags: Record<string, string | boolean | undefined>}} Parsed
 */

/**
 * The command line (argv without the runtime and the script) as one command.
 * @param {string[]} argv @returns {Parsed}
 */
export function parse(argv) {
  if (argv.length === 0) return { help: "short" };
  /** @type {{values: Record<string, string | boolean | undefined>, positionals: string[]}} */
  let parsed;
  const named = argv.find((a) => Object.hasOwn(COMMANDS, a));
  try {
    parsed = /** @type {any} */ (parseArgs({ args: argv, options: FLAGS, allowPositionals: true, strict: true }));
  } catch (e) {
    throw new UsageError(parseArgsMessage(/** @type {any} */ (e), named), named);
  }
  const { values, positionals } = parsed;
  let [command, ...args] = positionals;
  if (command === "help") {
    if (args.length === 0) return { help: "full" };
    [command, ...args] = args;
    values.help = true;
  }
  if (command === undefined) {
    if (values.help) return { help: "full" };
    if (values.version) return { version: true };
    throw new UsageError("no command given: ls, show, break, prune or check");
  }
  if (!Object.hasOwn(COMMANDS, command)) {
    const near = nearest(command, [...Object.keys(COMMANDS), "help"]);
    throw new UsageError(`unknown command "${command}"${near ? `; did you mean "${near}"?` : ": ls, show, break, prune or check"}`);
  }
  if (values.help) return { help: "full", command };
  const spec = COMMANDS[command];
  for (const flag of Object.keys(values)) {
    if (Object.hasOwn(SECRETS, flag)) throw new UsageError(secretAdvice(flag), command);
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
  if (values.limit !== undefined && !/^[1-9][0-9]*$/.test(String(values.limit))) {
    throw new UsageError(`--limit must be a whole number of lines, 1 or more, not "${values.limit}"`, command);
  }
  if (values["show-holders"] && command === "ls" && !values.long && !values.held && !values.json) {
    throw new UsageError("--show-holders needs --long, --held or --json: a plain ls reads no lease", command);
  }
  return { command, args, flags: values };
}

/** Where a secret goes instead of its flag's value. */
function secretAdvice(/** @type {string} */ flag) {
  const file = flag === "secret-access-key" || flag === "session-token" ? ", put it in the credentials file" : "";
  return `--${flag} takes no value (a secret on the command line is visible to every user of the machine): ` +
    `set ${SECRETS[flag]}${file}, or pipe it to --${flag}-stdin`;
}

/**
 * parseArgs's message, to the point (its advice about `--` only confuses): an unknown flag with the
 * nearest one `command` takes, a secret's flag with where the secret goes instead.
 * @param {{code?: string, message?: string}} e @param {string} [command]
 */
function parseArgsMessage(e, command) {
  const message = String(e.message ?? e);
  const unknown = /^Unknown option '([^']+)'/.exec(message);
  if (unknown) {
    const takes = command ? [...COMMON, ...COMMANDS[command].flags] : Object.keys(FLAGS);
    const near = unknown[1].startsWith("--") && nearest(unknown[1].slice(2), takes);
    return `unknown flag ${unknown[1]}${near ? `; did you mean --${near}?` : ""}`;
  }
  // parseArgs names a flag with a short form as `-l, --long`: the long one is the name.
  const flag = /^Option '(?:-[^-' ], )?([^' ]+)[^']*' (argument missing|argument is ambiguous|does not take an argument)/.exec(message);
  if (flag && Object.hasOwn(SECRETS, flag[1].slice(2))) return secretAdvice(flag[1].slice(2));
  if (flag?.[2] === "does not take an argument") return `${flag[1]} takes no value`;
  // `--older-than -1s`: a value that starts with a dash reads as a flag unless given with `=`.
  if (flag?.[2] === "argument is ambiguous") return `${flag[1]} needs a value (one that starts with "-" is given as ${flag[1]}=<value>)`;
  if (flag) return `${flag[1]} needs a value`;
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
