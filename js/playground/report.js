// What the page reports about a finished run: the invariants (the shared checks of
// js/support/invariants.js, on this simulation's events and the store's final contents), the
// counts of the summary panel, and a fingerprint of the history.
import { hash32 } from "../support/prng.js";
import { NOTHING_WRITTEN, breakProblems, claimProblems, epochProblems, fencingProblems, refusedProblems, writeProblems } from "../support/invariants.js";

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** [{name, ok, detail}] for a finished simulation's `events` and `final` store contents. */
export function checkInvariants(events, final) {
  const by = (type) => events.filter((e) => e.type === type);
  const out = [];
  const check = (name, problems, detail) => out.push({ name, ok: problems.length === 0, detail: problems.length ? problems.slice(0, 4).join("; ") + (problems.length > 4 ? ` (+${problems.length - 4} more)` : "") : detail });
  const log = final.job?.state?.log ?? [];
  const id = (e) => `w${e.w} #${e.n}`; // a fenced write: its worker and that worker's count
  const logIds = log.map((e) => `${e.by} #${e.n}`);

  // 1. Claims: one winner per key, and every caller (and the store) agrees on its value. A
  // competing write injected on the first claim of a key wins with that claimer's bytes.
  {
    const claims = by("claim");
    const sent = (e) => ({ by: `w${e.w}`, tick: Number(e.key.split("/")[1]) }); // what sim.js claims with
    const calls = [
      ...claims.map((c) => ({ key: c.key, caller: `w${c.w}`, sent: sent(c), ok: true, won: c.won, value: c.value })),
      ...by("rejected").filter((r) => r.op === "claim").map((r) => ({ key: r.key, caller: `w${r.w}`, sent: sent(r), ok: false, code: r.code })),
    ];
    const foreign = new Set(by("fault").filter((f) => f.kind === "conflict" && f.op === "claim").map((f) => f.key));
    const keys = [...new Set(claims.map((c) => c.key))];
    const foreignWins = keys.filter((k) => foreign.has(k) && !claims.some((c) => c.key === k && c.won)).length;
    check("one winner per claim key, and all agree", claimProblems(calls, final.claims, { exactlyOne: true, foreign }),
      `${plural(keys.length, "key")}: ${keys.length - foreignWins} won by a worker${foreignWins ? `, ${foreignWins} by an injected competing write` : ""}; ` +
      `${claims.length - claims.filter((c) => c.won).length} converged on the winner's value`);
  }

  // 2. One holder per epoch, and each acquisition's epoch is higher than every earlier one.
  {
    const acquisitions = by("acquire").map((a) => ({ epoch: a.epoch, by: a.holder.split("-")[0], holder: a.holder }));
    const problems = epochProblems({ acquisitions, log: log.map((e) => ({ epoch: e.epoch, by: e.by, id: `${e.by} #${e.n}` })), storedEpoch: final.job?.epoch ?? null, ordered: true });
    const last = Math.max(0, ...acquisitions.map((a) => a.epoch));
    check("one holder per epoch", problems, `${plural(new Set(acquisitions.map((a) => a.epoch)).size, "epoch")} (1–${last}), each with one holder; the store is at epoch ${final.job?.epoch ?? "—"}`);
  }

  // 3. Epochs in the write log never decrease (and one holder's writes land in order).
  {
    const problems = fencingProblems(log.map((e) => ({ epoch: e.epoch, id: `${e.by} #${e.n}`, seq: e.n })));
    const epochs = new Set(log.map((e) => e.epoch));
    check("epochs in the write log never decrease", problems, `${log.length} log entries over ${plural(epochs.size, "epoch")}, in order`);
  }

  // 4. Every acknowledged write is stored once in the log: neither lost nor doubled.
  {
    const acked = by("write");
    check("no acknowledged write lost (nor applied twice)", writeProblems(logIds, acked.map(id)), `${acked.length} acknowledged, all in the log once (${log.length} entries)`);
  }

  // 5. A write fenced with LeaseLost never lands (nor one that failed saying nothing was written).
  {
    const fenced = by("lost").filter((l) => l.op === "write");
    const refused = [
      ...fenced.map((f) => ({ id: id(f), code: "LEASE_LOST" })),
      ...by("rejected").filter((r) => r.op === "write" && NOTHING_WRITTEN.has(r.code)).map((r) => ({ id: id(r), code: r.code })),
    ];
    check("fenced writes never land", refusedProblems(logIds, refused), `${plural(fenced.length, "write")} rejected with LeaseLost, none in the log`);
  }

  // 6. The workers only ever saw fencepost's own errors (anything else is a bug).
  {
    const crashes = by("crash");
    check("no unexpected errors", crashes.map((c) => `${c.w ? `w${c.w} ` : ""}${c.task}: ${c.message.split("\n")[0]}`), "every rejection was a FencepostError");
  }

  // 7. A lease the operator broke fences its old holder: nothing of its epoch lands after the
  // break, it is told LeaseLost (stolen), and the next acquirer gets a higher epoch still.
  {
    const at = new Map(events.map((e, i) => [e, i])); // an event's place in the history
    const breaks = by("break").map((b) => ({ epoch: b.epoch, previous: b.previous, at: at.get(b), logAt: b.logAt }));
    const acquisitions = by("acquire").map((a) => ({ epoch: a.epoch, holder: a.holder, at: at.get(a) }));
    const holderOf = new Map(acquisitions.map((a) => [a.epoch, a.holder]));
    const ops = events
      .filter((e) => ["write", "renew", "release", "lost"].includes(e.type) || (e.type === "rejected" && ["write", "renew", "release"].includes(e.op)))
      .map((e) => ({
        holder: holderOf.get(e.epoch), epoch: e.epoch, op: e.type === "lost" || e.type === "rejected" ? e.op : e.type, started: e.seq,
        ok: e.type !== "lost" && e.type !== "rejected", reason: e.type === "lost" ? e.reason : undefined, code: e.type === "rejected" ? e.code : undefined,
        id: e.n !== undefined && (e.type === "write" || e.op === "write") ? id(e) : undefined,
      }));
    const problems = breakProblems({ breaks, acquisitions, log: log.map((e) => ({ epoch: e.epoch, id: `${e.by} #${e.n}` })), ops });
    const fenced = breakOutcomes(events);
    const next = breaks.map((b) => acquisitions.find((a) => a.at > b.at && a.epoch > b.previous.epoch)?.epoch ?? "—");
    check("a broken lease fences its old holder", problems, breaks.length === 0 ? "no lease was broken in this run" :
      `${plural(breaks.length, "break")} (epoch ${breaks.map((b) => `${b.previous.epoch}→${b.epoch}`).join(", ")}); ` +
      `${fenced.told} old ${fenced.told === 1 ? "holder" : "holders"} told LeaseLost (stolen)${fenced.gaveUp ? `, ${fenced.gaveUp} had given up already` : ""}` +
      `${fenced.neverLearnt ? `, ${fenced.neverLearnt} failed before learning` : ""}; ` +
      `nothing of a broken epoch landed after its break; next acquisitions at epoch ${next.join(", ")}`);
  }
  return out;
}

/**
 * For each break, the old holder's outcome: the LeaseLost that fenced it (its op and reason);
 * else it had given up already (its release failed: `abandon`), or every operation it tried
 * afterwards failed before it could learn.
 */
export function breakOutcomes(events) {
  const out = { told: 0, gaveUp: 0, neverLearnt: 0, writes: 0, byReason: {} };
  for (const b of events.filter((e) => e.type === "break")) {
    if (b.holderW === null) continue;
    const mine = (type) => events.find((e) => e.type === type && e.w === b.holderW && e.epoch === b.previous.epoch);
    const lost = mine("lost");
    if (!lost) {
      const abandon = mine("abandon");
      if (abandon && events.indexOf(abandon) < events.indexOf(b)) out.gaveUp++;
      else out.neverLearnt++;
      continue;
    }
    out.told += lost.reason === "stolen" ? 1 : 0;
    out.writes += lost.op === "write" ? 1 : 0;
    out.byReason[lost.reason] = (out.byReason[lost.reason] ?? 0) + 1;
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
  const breaks = by("break");
  const outcomes = breakOutcomes(events);
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
    breaks: {
      count: breaks.length,
      whileStalled: breaks.filter((b) => b.stalled).length,
      fenced: outcomes.byReason, // the old holders' LeaseLost after a break, by reason
      fencedWrites: outcomes.writes, // … of which on a fenced write (else a renew or release)
      gaveUp: outcomes.gaveUp, // the old holder had stopped already (its release failed)
      neverLearnt: outcomes.neverLearnt, // every operation it tried afterwards failed before learning
    },
    faults: tally(by("fault"), "kind"),
    rejections: tally([...by("rejected"), ...by("lost").map((l) => ({ code: "LEASE_LOST" }))], "code"),
    requests: final ? { ...final.requests, operator: final.operatorRequests ?? 0 } : null,
    simulatedSeconds: final ? Math.round(final.t * 100) / 100 : null,
  };
}

/** A short fingerprint of a history: the same seed and settings must give the same one. */
export function fingerprint(events) {
  return hash32(JSON.stringify(events.map((e) => ({ ...e, message: undefined })))).toString(16).padStart(8, "0");
}
