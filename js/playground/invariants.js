import { hash32 } from "./prng.js";

// What must hold after any run, whatever the faults: checked against what the workers were told
// (the events) and what the store holds at the end (the job document and the claims).

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b); // values here are small plain JSON
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** [{name, ok, detail}] for a finished simulation's `events` and `final` store contents. */
export function checkInvariants(events, final) {
  const by = (type) => events.filter((e) => e.type === type);
  const out = [];
  const check = (name, problems, detail) => out.push({ name, ok: problems.length === 0, detail: problems.length ? problems.slice(0, 4).join("; ") + (problems.length > 4 ? ` (+${problems.length - 4} more)` : "") : detail });

  // 1. Claims: one winner per key, and every caller (and the store) agrees on its value.
  {
    const problems = [];
    const claims = by("claim");
    const keys = [...new Set(claims.map((c) => c.key))];
    const competitor = new Set(by("fault").filter((f) => f.kind === "conflict" && f.op === "claim").map((f) => f.key));
    let foreign = 0;
    for (const key of keys) {
      const results = claims.filter((c) => c.key === key);
      const winners = results.filter((c) => c.won);
      const stored = final.claims[key];
      // A competing write injected on the first claim of a key wins with that claimer's bytes.
      const foreignWin = winners.length === 0 && competitor.has(key);
      if (foreignWin) foreign++;
      if (winners.length + (foreignWin ? 1 : 0) !== 1) problems.push(`${key}: ${winners.length} winners (${winners.map((c) => `w${c.w}`).join(", ") || "none"})`);
      const disagree = results.filter((c) => !same(c.value, stored));
      if (disagree.length) problems.push(`${key}: ${disagree.map((c) => `w${c.w}`).join(", ")} saw ${JSON.stringify(disagree[0].value)}, the store holds ${JSON.stringify(stored)}`);
    }
    check("one winner per claim key, and all agree", problems,
      `${plural(keys.length, "key")}: ${keys.length - foreign} won by a worker${foreign ? `, ${foreign} by an injected competing write` : ""}; ` +
      `${claims.length - claims.filter((c) => c.won).length} converged on the winner's value`);
  }

  // 2. One holder per epoch, and each acquisition's epoch is higher than every earlier one.
  {
    const problems = [];
    const holders = new Map();
    let last = 0;
    for (const a of by("acquire")) {
      if (holders.has(a.epoch) && holders.get(a.epoch) !== a.holder) problems.push(`epoch ${a.epoch}: held by ${holders.get(a.epoch)} and ${a.holder}`);
      holders.set(a.epoch, a.holder);
      if (a.epoch <= last) problems.push(`w${a.w} acquired epoch ${a.epoch} after epoch ${last}`);
      last = Math.max(last, a.epoch);
    }
    const log = final.job?.state?.log ?? [];
    for (const e of log) {
      const holder = holders.get(e.epoch);
      if (holder === undefined) problems.push(`a write of ${e.by} in epoch ${e.epoch}, which no worker acquired`);
      else if (!holder.startsWith(`${e.by}-`)) problems.push(`a write of ${e.by} in epoch ${e.epoch}, held by ${holder}`);
    }
    if (final.job && final.job.epoch < last) problems.push(`the store's epoch ${final.job.epoch} is below the last acquired, ${last}`);
    check("one holder per epoch", problems, `${plural(holders.size, "epoch")} (1–${last}), each with one holder; the store is at epoch ${final.job?.epoch ?? "—"}`);
  }

  // 3. Epochs in the write log never decrease.
  {
    const problems = [];
    const log = final.job?.state?.log ?? [];
    for (let i = 1; i < log.length; i++) {
      if (log[i].epoch < log[i - 1].epoch) problems.push(`entry ${i} (${log[i].by} #${log[i].n}) has epoch ${log[i].epoch} after ${log[i - 1].epoch}`);
    }
    const epochs = new Set(log.map((e) => e.epoch));
    check("epochs in the write log never decrease", problems, `${log.length} log entries over ${plural(epochs.size, "epoch")}, in order`);
  }

  // 4. Every acknowledged write is in the log exactly once.
  {
    const problems = [];
    const log = final.job?.state?.log ?? [];
    const count = new Map();
    for (const e of log) count.set(`${e.by}#${e.n}`, (count.get(`${e.by}#${e.n}`) ?? 0) + 1);
    const acked = by("write");
    let missing = 0, doubled = 0;
    for (const wr of acked) {
      const c = count.get(`w${wr.w}#${wr.n}`) ?? 0;
      if (c === 0) missing++, problems.push(`w${wr.w} #${wr.n} (epoch ${wr.epoch}) was acknowledged but is not in the log`);
      if (c > 1) doubled++, problems.push(`w${wr.w} #${wr.n} is in the log ${c} times`);
    }
    check("no acknowledged write lost (nor applied twice)", problems, `${acked.length} acknowledged, all in the log once (${log.length} entries)`);
  }

  // 5. A write fenced with LeaseLost never lands.
  {
    const problems = [];
    const log = final.job?.state?.log ?? [];
    const fenced = by("lost").filter((l) => l.op === "write");
    for (const f of fenced) {
      if (log.some((e) => e.by === `w${f.w}` && e.n === f.n)) problems.push(`w${f.w} #${f.n} was rejected with LeaseLost but is in the log`);
    }
    check("fenced writes never land", problems, `${plural(fenced.length, "write")} rejected with LeaseLost, none in the log`);
  }

  // 6. The workers only ever saw fencepost's own errors (anything else is a bug).
  {
    const crashes = by("crash");
    check("no unexpected errors", crashes.map((c) => `w${c.w} ${c.task}: ${c.message.split("\n")[0]}`), "every rejection was a FencepostError");
  }
  return out;
}

/** Counts for the summary panel. */
export function summarize(events, final) {
  const by = (type) => events.filter((e) => e.type === type);
  const tally = (list, key) => list.reduce((m, e) => ((m[e[key]] = (m[e[key]] ?? 0) + 1), m), {});
  const claims = by("claim");
  const acquire = by("acquire");
  const stalls = by("stall");
  const stolenFromStall = stalls.filter((s) => events.some((e) => e.type === "acquire" && e.epoch > s.epoch && e.t > s.t && e.t < s.until)).length;
  return {
    claims: {
      keys: new Set(claims.map((c) => c.key)).size,
      won: claims.filter((c) => c.won).length,
      converged: claims.filter((c) => !c.won).length,
      rejected: by("rejected").filter((r) => r.op === "claim").length,
    },
    lease: {
      epochs: new Set(acquire.map((a) => a.epoch)).size,
      lastEpoch: Math.max(0, ...acquire.map((a) => a.epoch)),
      releases: by("release").length,
      stalls: stalls.length,
      stolenWhileStalled: stolenFromStall,
      cancelRequests: by("cancelRequest").filter((c) => c.applied).length,
      cancelsHonoured: by("release").filter((r) => r.reason === "cancelled").length,
      leaseLost: by("lost").length,
    },
    writes: {
      acknowledged: by("write").length,
      fenced: by("lost").filter((l) => l.op === "write").length,
      unacknowledged: by("rejected").filter((r) => r.op === "write").length,
      inLog: final?.job?.state?.log?.length ?? 0,
      renewals: by("renew").length,
    },
    faults: tally(by("fault"), "kind"),
    rejections: tally([...by("rejected"), ...by("lost").map((l) => ({ code: "LEASE_LOST" }))], "code"),
    requests: final?.requests ?? null,
    simulatedSeconds: final ? Math.round(final.t * 100) / 100 : null,
  };
}

/** A short fingerprint of a history: the same seed and settings must give the same one. */
export function fingerprint(events) {
  return hash32(JSON.stringify(events.map((e) => ({ ...e, message: undefined })))).toString(16).padStart(8, "0");
}
