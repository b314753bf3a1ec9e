// Draws a simulation's events as an SVG timeline: time left to right, a lane for the job document
// (which epoch the store is at, and who holds it; the operator's breaks as ⚡) and one lane per worker with
//   top row:    claims (● won, ○ converged on the winner's value, ✕ rejected),
//   middle row: lease periods as bars coloured by epoch, fenced writes as ticks on them, stalls
//               hatched, the deadline that passed during a stall dashed, LeaseLost as a red ✕, the
//               rest of a period after the operator broke it faded (the holder does not know yet),
//   bottom row: faults injected into that worker's requests (▲ coloured by kind; a delay as a line),
//               rejections (□ by code) and cooperative cancels requested (◆).
// Every mark has a <title>, so hovering explains it. Marks carry a class (lease, write, claim,
// fault, leaselost, …) that tests count.

const NS = "http://www.w3.org/2000/svg";
export const FAULT_COLOURS = { lost: "#d4a72c", conflict: "#8250df", unavailable: "#cf222e", delay: "#0969da" };
export const FAULT_NAMES = { lost: "lost response", conflict: "competing write", unavailable: "503", delay: "delay" };

/** The colour of an epoch: neighbours far apart on the hue circle. */
export function epochColour(epoch, light = 60) {
  return `hsl(${(epoch * 137.508 + 200) % 360} 62% ${light}%)`;
}

const LEFT = 46, RIGHT = 12, AXIS = 22, STORE_LANE = 30, LANE = 54, WIDTH = 1160;

function el(parent, name, attrs = {}, title) {
  const node = parent.ownerDocument.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) node.setAttribute(k, String(v));
  if (title) {
    const t = parent.ownerDocument.createElementNS(NS, "title");
    t.textContent = title;
    node.appendChild(t);
  }
  parent.appendChild(node);
  return node;
}

const fmt = (t) => `${(Math.round(t * 100) / 100).toFixed(2).replace(/\.?0+$/, "")} s`;

/**
 * Draw `events` of a run with `config` up to time `now` (seconds) into `svg` (its content is
 * replaced). Returns the number of marks drawn per class.
 */
export function drawTimeline(svg, { events, config, now, workers }) {
  svg.replaceChildren();
  const end = Math.max(config.duration, now, 1);
  const height = AXIS + STORE_LANE + workers * LANE + 6;
  svg.setAttribute("viewBox", `0 0 ${WIDTH} ${height}`);
  svg.setAttribute("width", WIDTH);
  svg.setAttribute("height", height);
  const x = (t) => LEFT + (Math.min(t, end) / end) * (WIDTH - LEFT - RIGHT);
  const laneTop = (w) => AXIS + STORE_LANE + (w - 1) * LANE;

  // Hatching for stalls.
  const defs = el(svg, "defs");
  const hatch = el(defs, "pattern", { id: "stall-hatch", width: 6, height: 6, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" });
  el(hatch, "rect", { width: 6, height: 6, fill: "#ffffff", "fill-opacity": 0.55 });
  el(hatch, "line", { x1: 0, y1: 0, x2: 0, y2: 6, stroke: "#57606a", "stroke-width": 2 });

  // Axis, cron ticks, lanes.
  const grid = el(svg, "g", { class: "grid" });
  for (let t = config.cronEvery; t <= end; t += config.cronEvery) {
    el(grid, "line", { x1: x(t), x2: x(t), y1: AXIS - 4, y2: height - 4, stroke: "#eaeef2" });
  }
  const step = end > 300 ? 60 : end > 120 ? 20 : 10;
  for (let t = 0; t <= end + 1e-9; t += step) {
    el(grid, "line", { x1: x(t), x2: x(t), y1: AXIS - 4, y2: height - 4, stroke: "#d0d7de" });
    el(grid, "text", { x: x(t), y: 12, "text-anchor": "middle", class: "axis" }).textContent = `${t} s`;
  }
  if (now < end) el(grid, "rect", { x: x(now), y: AXIS - 4, width: Math.max(0, x(end) - x(now)), height: height - AXIS, fill: "#f6f8fa" });
  el(grid, "line", { x1: x(now), x2: x(now), y1: AXIS - 6, y2: height - 4, stroke: "#8c959f", "stroke-dasharray": "2 3" }, `now: ${fmt(now)}`);
  el(svg, "text", { x: 4, y: AXIS + 19, class: "lane-label" }).textContent = "job";
  for (let w = 1; w <= workers; w++) {
    const top = laneTop(w);
    el(svg, "line", { x1: 0, x2: WIDTH, y1: top, y2: top, stroke: "#d0d7de" });
    el(svg, "text", { x: 4, y: top + 30, class: "lane-label" }).textContent = `w${w}`;
  }

  const counts = {};
  const mark = (cls) => {
    for (const c of cls.split(" ")) counts[c] = (counts[c] ?? 0) + 1;
    return cls;
  };

  // The operator's breaks, by the epoch they broke.
  const breaks = new Map(events.filter((e) => e.type === "break").map((b) => [b.previous.epoch, b]));

  // Lease periods per worker: acquire → release / lost / abandoned / still held.
  const periods = [];
  const open = new Map(); // worker → period
  for (const e of events) {
    if (e.type === "acquire") {
      const p = { w: e.w, epoch: e.epoch, holder: e.holder, start: e.t, end: null, how: "held", stalls: [], writes: 0, broken: breaks.get(e.epoch) ?? null, lost: null };
      periods.push(p);
      open.set(e.w, p);
    } else if (["release", "lost", "abandon"].includes(e.type) && open.get(e.w)?.epoch === e.epoch) {
      const p = open.get(e.w);
      p.end = e.t;
      p.how = e.type === "release" ? `released (${e.reason})` : e.type === "lost" ? `LeaseLost (${e.reason}) on ${e.op}` : "not released: expires at its deadline";
      if (e.type === "lost") p.lost = e;
      open.delete(e.w);
    } else if (e.type === "stall" && open.get(e.w)?.epoch === e.epoch) {
      open.get(e.w).stalls.push(e);
    } else if (e.type === "write" && open.get(e.w)?.epoch === e.epoch) {
      open.get(e.w).writes++;
    }
  }

  // The job document's lane: which epoch the store is at (bar per epoch until the next one).
  const storeLane = el(svg, "g", { class: "store-lane" });
  periods.forEach((p, i) => {
    const next = periods[i + 1]?.start ?? now;
    let until = p.end !== null && p.how.startsWith("released") ? p.end : next;
    if (p.broken) until = Math.min(until, p.broken.t); // the store moved on to the break's epoch
    const x0 = x(p.start), x1 = Math.max(x(until), x0 + 1.5);
    el(storeLane, "rect", { x: x0, y: AXIS + 6, width: x1 - x0, height: 16, rx: 2, fill: epochColour(p.epoch), class: mark("epoch") },
      `epoch ${p.epoch}: ${p.holder}, ${fmt(p.start)} → ${fmt(until)}`);
    if (x1 - x0 > 26) el(storeLane, "text", { x: x0 + 3, y: AXIS + 18, class: "bar-label" }).textContent = `e${p.epoch} w${p.w}`;
  });
  // The operator's breaks: ⚡ on the job lane, a dashed line down to the holder it fenced.
  for (const b of breaks.values()) {
    const cx = x(b.t), y = AXIS + 2;
    const p = periods.find((q) => q.epoch === b.previous.epoch);
    const next = periods.find((q) => q.epoch > b.previous.epoch);
    if (b.holderW) el(storeLane, "line", { x1: cx, x2: cx, y1: AXIS + 22, y2: laneTop(b.holderW) + 17, stroke: "#1f2328", "stroke-opacity": 0.7, "stroke-width": 1.2, "stroke-dasharray": "3 2", "pointer-events": "none" });
    const told = p?.lost ? `${p.lost.op}${p.lost.n ? ` #${p.lost.n}` : ""} fenced at ${fmt(p.lost.t)}: LeaseLost (${p.lost.reason})`
      : p?.how.startsWith("not released") ? "it had already given up (its release failed)" : "it never learnt (its requests failed first)";
    el(storeLane, "path", { d: `M${cx + 3},${y}L${cx - 5},${y + 13}L${cx},${y + 13}L${cx - 3},${y + 25}L${cx + 5},${y + 10}L${cx},${y + 10}Z`, fill: "#1f2328", stroke: "#ffffff", "stroke-width": 1, class: mark("break") },
      `operator: db.breakLease("job") at ${fmt(b.t)} — epoch ${b.previous.epoch} (${b.previous.holder ?? "no holder"}), no heartbeat for ${fmt(b.quiet)}, deadline ${b.previous.deadline === null ? "—" : fmt(b.previous.deadline)}` +
      `${b.stalled ? ", its holder stalled" : ""} → the store is at epoch ${b.epoch}, released (no holder)` +
      `${b.holderW ? `; w${b.holderW}: ${told}` : ""}; next acquisition: ${next ? `epoch ${next.epoch} (w${next.w}) at ${fmt(next.start)}` : "none"}`);
  }

  // Lease bars, stalls.
  const bars = el(svg, "g", { class: "leases" });
  for (const p of periods) {
    const top = laneTop(p.w);
    const end_ = p.end ?? now;
    const x0 = x(p.start), x1 = Math.max(x(end_), x0 + 2);
    el(bars, "rect", { x: x0, y: top + 17, width: x1 - x0, height: 16, rx: 2, fill: epochColour(p.epoch), class: mark("lease") },
      `w${p.w} holds epoch ${p.epoch} (${p.holder}) ${fmt(p.start)} → ${fmt(end_)}: ${p.how}; ${p.writes} fenced writes`);
    if (x1 - x0 > 20) el(bars, "text", { x: x0 + 3, y: top + 29, class: "bar-label" }).textContent = `e${p.epoch}`;
    if (p.broken && p.broken.t < end_) {
      // After the break the holder still takes the epoch for its own, until a guarded write says otherwise.
      el(bars, "rect", { x: x(p.broken.t), y: top + 17, width: Math.max(1, x(end_) - x(p.broken.t)), height: 16, fill: "#ffffff", "fill-opacity": 0.6, class: mark("broken") },
        `epoch ${p.epoch} broken by the operator at ${fmt(p.broken.t)}; w${p.w} does not know until its next guarded write (${p.how} at ${fmt(end_)})`);
    }
    for (const s of p.stalls) {
      const s1 = Math.min(s.until, end_);
      el(bars, "rect", { x: x(s.t), y: top + 17, width: Math.max(1, x(s1) - x(s.t)), height: 16, fill: "url(#stall-hatch)", class: mark("stall") },
        `w${p.w} stalls ${fmt(s.seconds)} (ttl ${fmt(config.ttl)}) from ${fmt(s.t)}: no renewals`);
      if (s.deadline < s1) {
        el(bars, "line", { x1: x(s.deadline), x2: x(s.deadline), y1: top + 13, y2: top + 37, stroke: "#cf222e", "stroke-dasharray": "3 2", class: mark("expiry") },
          `epoch ${p.epoch} expires at ${fmt(s.deadline)} while w${p.w} is stalled`);
      }
    }
  }

  // Point marks.
  const marks = el(svg, "g", { class: "marks" });
  for (const e of events) {
    if (e.type === "rejected" && e.operator) {
      // The operator's own requests failed (it sees no injected faults: rare).
      el(marks, "rect", { x: x(e.t) - 3.5, y: AXIS + 10.5, width: 7, height: 7, fill: "#ffffff", stroke: "#cf222e", "stroke-width": 1.5, class: mark("rejected") },
        `operator's ${e.op} rejected with ${e.code} at ${fmt(e.t)}: ${e.message}`);
    }
    if (!e.w) continue;
    const top = laneTop(e.w);
    const cx = x(e.t);
    switch (e.type) {
      case "claim":
        el(marks, "circle", { cx, cy: top + 8, r: 3.6, fill: e.won ? "#1a7f37" : "#ffffff", stroke: e.won ? "#1a7f37" : "#57606a", "stroke-width": 1.3, class: mark(e.won ? "claim claim-won" : "claim claim-converged") },
          `${e.key}: ${e.won ? "won" : `converged on ${e.value?.by}'s claim`} at ${fmt(e.t)}`);
        break;
      case "write":
        el(marks, "line", { x1: cx, x2: cx, y1: top + 14, y2: top + 36, stroke: "#24292f", "stroke-width": 1.3, class: mark("write") },
          `fenced write: w${e.w} #${e.n} in epoch ${e.epoch} at ${fmt(e.t)}`);
        break;
      case "lost": {
        const cy = top + 25;
        el(marks, "path", { d: `M${cx - 5},${cy - 5}L${cx + 5},${cy + 5}M${cx - 5},${cy + 5}L${cx + 5},${cy - 5}`, stroke: "#cf222e", "stroke-width": 2.4, class: mark("leaselost") },
          `LeaseLost (${e.reason}): w${e.w}'s ${e.op}${e.n ? ` #${e.n}` : ""} in epoch ${e.epoch} fenced at ${fmt(e.t)}` +
          `${breaks.has(e.epoch) ? ` (the operator broke epoch ${e.epoch} at ${fmt(breaks.get(e.epoch).t)})` : ""} — ${e.message}`);
        break;
      }
      case "fault": {
        const cy = top + 45;
        const colour = FAULT_COLOURS[e.kind];
        if (e.kind === "delay") el(marks, "line", { x1: cx, x2: x(e.t + e.seconds), y1: cy, y2: cy, stroke: colour, "stroke-width": 2, "stroke-opacity": 0.5 });
        el(marks, "path", { d: `M${cx},${cy - 4.5}L${cx + 4},${cy + 3}L${cx - 4},${cy + 3}Z`, fill: colour, class: mark(`fault fault-${e.kind}`) },
          `${FAULT_NAMES[e.kind]}${e.times ? ` ×${e.times}` : ""}${e.seconds ? ` ${fmt(e.seconds)}` : ""} injected into w${e.w}'s ${e.op} of ${e.key} at ${fmt(e.t)}`);
        break;
      }
      case "rejected": {
        const cy = e.op === "claim" ? top + 8 : top + 45;
        el(marks, "rect", { x: cx - 3.5, y: cy - 3.5, width: 7, height: 7, fill: "#ffffff", stroke: "#cf222e", "stroke-width": 1.5, class: mark("rejected") },
          `${e.op} rejected with ${e.code} at ${fmt(e.t)}: ${e.message}`);
        break;
      }
      case "cancelRequest":
        el(marks, "path", { d: `M${cx},${top + 40}L${cx + 5},${top + 45}L${cx},${top + 50}L${cx - 5},${top + 45}Z`, fill: e.applied ? "#bc4c00" : "#ffffff", stroke: "#bc4c00", class: mark("cancel") },
          `w${e.w} requests a cooperative cancel (db.cooperativeWrite) at ${fmt(e.t)}`);
        break;
      case "cancelSeen":
        el(marks, "rect", { x: cx - 1.5, y: top + 13, width: 3, height: 24, fill: "#bc4c00", class: mark("cancel-seen") },
          `w${e.w} sees ${e.by}'s cancel in epoch ${e.epoch} and releases at ${fmt(e.t)}`);
        break;
    }
  }
  return counts;
}
