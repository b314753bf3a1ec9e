// How the command line shows what the library returns: records for `--json`, lines for people.
// Holders are credentials (whoever knows one can attach to its lease), so both show a fingerprint
// — the first 6 characters — unless asked for the whole holder. Pure functions of their inputs and
// `now` (milliseconds); nothing here reads the clock or a store.

/** A holder as shown: its first 6 characters and "…" (always the "…": a fingerprint looks like one), or the whole of it when `full`. */
export function fingerprint(/** @type {string | null} */ holder, full = false) {
  if (holder === null || holder === undefined) return null;
  return full ? holder : `${holder.slice(0, 6)}…`;
}

/** Seconds as a short span, at most two units, rounded down: `45s`, `12m5s`, `3h20m`, `2d4h`. */
export function span(/** @type {number} */ seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const two = (/** @type {number} */ big, /** @type {string} */ a, /** @type {number} */ small, /** @type {string} */ b) =>
    `${Math.floor(s / big)}${a}${Math.floor((s % big) / small) ? `${Math.floor((s % big) / small)}${b}` : ""}`;
  if (s < 60) return `${s}s`;
  if (s < 3600) return two(60, "m", 1, "s");
  if (s < 86_400) return two(3600, "h", 60, "m");
  return two(86_400, "d", 3600, "h");
}

/** Bytes as a short size: `98 B`, `1.5 KiB`, `2.0 MiB`. */
export function bytes(/** @type {number | undefined} */ n) {
  if (n === undefined || n === null) return "?";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** @typedef {{epoch: number, holder: string | null, deadlineAt: Date | null, expired: boolean, released: boolean, expiresIn: number, state: unknown}} LeaseView */
/** @typedef {{key: string, etag: string, size: number, lastModified: Date | null, kind: "lease" | "json" | "bytes" | "other", value?: any, lease?: LeaseView}} Seen `other`: a key fencepost does not read (CairnDB's) */

/**
 * What `db.inspect` returned, as a JSON-ready record: the same fields; bytes as base64; the holder
 * (in `lease` and in the stored document, `value`) fingerprinted unless `showHolders`. Dates stay
 * Dates: JSON.stringify writes them as ISO strings.
 * @param {Seen} seen @param {boolean} showHolders
 */
export function record(seen, showHolders) {
  /** @type {any} */
  const out = { ...seen };
  if (seen.kind === "bytes") out.value = base64(seen.value);
  if (seen.lease) {
    out.lease = { ...seen.lease, holder: fingerprint(seen.lease.holder, showHolders) };
    if (seen.value && typeof seen.value === "object" && typeof seen.value.holder === "string") {
      out.value = { ...seen.value, holder: fingerprint(seen.value.holder, showHolders) };
    }
  }
  return out;
}

/** One JSON line: a record, dates as ISO strings, a lease without a deadline's `expiresIn` as null. */
export function jsonLine(/** @type {unknown} */ value) {
  return JSON.stringify(value, (_k, v) => (typeof v === "number" && !Number.isFinite(v) ? null : v));
}

function base64(/** @type {Uint8Array} */ data) {
  let text = "";
  for (let i = 0; i < data.length; i += 0x8000) text += String.fromCharCode(...data.subarray(i, i + 0x8000));
  return btoa(text);
}

/** How a lease stands: `expires in 48s`, `expired 3m ago`, `released`. */
export function standing(/** @type {LeaseView} */ lease) {
  if (lease.released) return "released";
  if (lease.expired) return Number.isFinite(lease.expiresIn) ? `expired ${span(-lease.expiresIn)} ago` : "expired";
  return `expires in ${span(lease.expiresIn)}`;
}

/**
 * What a lease document is used for, when its shape says: a `once` record (its state
 * `{status, attempt}`), or a semaphore's slot (a key ending in `/<number>`). Null otherwise.
 * @param {Seen} seen
 */
export function role(seen) {
  if (!seen.lease) return null;
  const s = /** @type {any} */ (seen.lease.state);
  if (s && typeof s === "object" && ["running", "done", "failed"].includes(s.status) && Number.isInteger(s.attempt)) {
    const why = s.status === "failed" && typeof s.error?.name === "string" ? ` (${s.error.name})` : "";
    return `once ${s.status}${why}, attempt ${s.attempt}`;
  }
  const slot = /\/(0|[1-9][0-9]*)$/.exec(seen.key);
  return slot ? `semaphore slot ${slot[1]}` : null;
}

/**
 * One plain `ls` line, from the listing alone: age, size, key.
 * @param {{key: string, size: number | undefined, lastModified: Date | null}} entry @param {number} now
 */
export function entryLine(entry, now) {
  const age = entry.lastModified ? span((now - entry.lastModified.getTime()) / 1000) : "?";
  return `${age.padStart(6)}  ${bytes(entry.size).padStart(9)}  ${shown(entry.key)}`;
}

/** Control characters (C0, DEL, C1) and the two line separators. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * A key as a line shows it: as it is, or quoted with its control characters escaped (`"a\nb"`)
 * when it has any. Keys other tools wrote may (fencepost's own cannot): printed raw, a newline
 * would make one key two lines, and an escape sequence would reach the terminal as a command.
 */
export function shown(/** @type {string} */ key) {
  if (!CONTROL.test(key)) return key;
  return JSON.stringify(key).replace(new RegExp(CONTROL.source, "g"), (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * One `ls --long` line: kind, then the plain line (age, size, key); for a lease its epoch, holder
 * and standing, and what it is used for when its shape says (a `once` record, a semaphore slot).
 * @param {Seen} seen @param {number} now @param {boolean} showHolders
 */
export function listLine(seen, now, showHolders) {
  let line = `${seen.kind.padEnd(5)}  ${entryLine(seen, now)}`;
  if (seen.lease) {
    const { epoch, holder } = seen.lease;
    line += `  epoch ${epoch}`;
    if (holder !== null) line += `  holder ${fingerprint(holder, showHolders)}`;
    line += `  ${standing(seen.lease)}`;
    const used = role(seen);
    if (used) line += `  [${used}]`;
  }
  return line;
}

/**
 * `show`: what a key holds, one field a line.
 * @param {Seen} seen @param {number} now @param {boolean} showHolders
 */
export function showLines(seen, now, showHolders) {
  /** @type {[string, string][]} */
  const rows = [["key", shown(seen.key)], ["kind", seen.kind], ["size", bytes(seen.size)], ["etag", seen.etag]];
  const modified = seen.lastModified;
  rows.push(["last modified", modified ? `${modified.toISOString()} (${span((now - modified.getTime()) / 1000)} ago)` : "unknown"]);
  if (seen.lease) {
    const l = seen.lease;
    rows.push(["epoch", String(l.epoch)]);
    rows.push(["holder", l.holder === null ? "none (released)" : fingerprint(l.holder, showHolders) + (showHolders ? "" : "  (--show-holders for all of it)")]);
    rows.push(["deadline", l.deadlineAt ? l.deadlineAt.toISOString() : "none"]);
    rows.push(["status", l.released ? "released" : l.expired ? `${standing(l)} (anyone may take it)` : `held, ${standing(l)}`]);
    const used = role(seen);
    if (used) rows.push(["role", used]);
    rows.push(["state", pretty(l.state)]);
  } else if (seen.kind === "json") {
    rows.push(["value", pretty(seen.value)]);
  } else {
    rows.push(["value", preview(seen.value)]);
  }
  const width = Math.max(...rows.map(([name]) => name.length));
  const pad = " ".repeat(width + 2);
  return rows.map(([name, text]) => `${name.padEnd(width)}  ${text.split("\n").join(`\n${pad}`)}`);
}

function pretty(/** @type {unknown} */ value) {
  return JSON.stringify(value, null, 2) ?? "null";
}

/** Bytes for a person: the text when it is printable UTF-8, else hex; the first 256 bytes. */
function preview(/** @type {Uint8Array} */ data) {
  const head = data.subarray(0, 256);
  const more = data.length > head.length ? ` … (${data.length} bytes)` : "";
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(head);
    // eslint-disable-next-line no-control-regex
    if (!/[\u0000-\u0008\u000b-\u001f\u007f]/.test(text)) return JSON.stringify(text) + more;
  } catch {}
  return Array.from(head, (b) => b.toString(16).padStart(2, "0")).join(" ") + more;
}

/**
 * What `breakLease` broke, in one line.
 * @param {{key: string, epoch: number, previous: {epoch: number, holder: string | null, deadlineAt: Date | null, expired: boolean, released: boolean}}} broken
 * @param {number} now @param {boolean} showHolders
 */
export function brokeLine(broken, now, showHolders) {
  const p = broken.previous;
  let was;
  if (p.released) was = "released";
  else {
    const left = p.deadlineAt ? (p.deadlineAt.getTime() - now) / 1000 : -Infinity;
    const when = p.expired ? (Number.isFinite(left) ? `expired ${span(-left)} ago` : "expired") : `${span(left)} left`;
    was = `held by ${fingerprint(p.holder, showHolders)}, ${when}`;
  }
  const fenced = p.released ? "" : `; holder ${fingerprint(p.holder, showHolders)} is fenced (its next write fails with LeaseLost)`;
  return `broke ${broken.key}: epoch ${p.epoch} (${was}) -> epoch ${broken.epoch}, released${fenced}`;
}

/** One `check` line: ok / FAIL / -- (an informational check that did not pass), required or optional, name, detail. */
export function checkLine(/** @type {{name: string, ok: boolean, required: boolean, detail: string}} */ c) {
  const mark = c.ok ? "ok  " : c.required ? "FAIL" : "--  ";
  return `${mark}  ${c.required ? "required" : "optional"}  ${c.name}: ${c.detail}`;
}
