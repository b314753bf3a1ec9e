// The playground page: controls → a Simulation (sim.js), redrawn as the manual clock moves
// (timeline.js), then the invariants, the summary and the fingerprint (report.js). Results for automation in
// window.__playground; ?autorun=1 runs the configuration in the query string at once.
import { Simulation, DEFAULTS, normalizeConfig } from "./sim.js";
import { checkInvariants, summarize, fingerprint } from "./report.js";
import { drawTimeline, FAULT_NAMES } from "./timeline.js";

const $ = (id) => document.getElementById(id);
const form = $("controls");
const STEP = 1; // seconds of simulated time per step (and per frame while running)

let sim = null;
let running = false;
let loop = 0; // the current run loop (a paused loop that resumes late sees it is stale)
let drawn = {};
let queue = Promise.resolve(); // advances run one after another, whoever asks (Run, Step)

function advance() {
  const s = sim;
  queue = queue.catch(() => {}).then(() => s.advance(STEP));
  return queue;
}

function readForm() {
  return normalizeConfig(Object.fromEntries(Object.keys(DEFAULTS).map((k) => [k, form.elements[k]?.value])));
}

function fillForm(config) {
  for (const [k, v] of Object.entries(config)) if (form.elements[k]) form.elements[k].value = v;
}

function status(text) {
  $("status").textContent = text;
}

async function reset() {
  running = false;
  const config = readForm();
  fillForm(config);
  const query = new URLSearchParams(Object.entries(config).filter(([k, v]) => v !== DEFAULTS[k]).map(([k, v]) => [k, String(v)]));
  history.replaceState(null, "", query.size ? `?${query}` : location.pathname);
  loop++;
  $("run").textContent = "Run";
  sim = await Simulation.create(config);
  window.__playground = { done: false, config, t: 0 };
  render();
}

function render() {
  drawn = drawTimeline($("timeline"), { events: sim.events, config: sim.config, now: sim.now, workers: sim.config.workers });
  status(`t = ${sim.now.toFixed(1)} s${sim.done ? " · done" : sim.stopping ? " · winding down" : running ? " · running" : ""}`);
  renderSummary(summarize(sim.events, sim.final));
  if (sim.done) renderInvariants(checkInvariants(sim.events, sim.final));
  else renderInvariants(null);
}

function renderSummary(s) {
  const faults = Object.entries(s.faults).map(([k, n]) => `${FAULT_NAMES[k]} ${n}`).join(", ") || "none";
  const rejections = Object.entries(s.rejections).map(([k, n]) => `${k} ${n}`).join(", ") || "none";
  const rows = [
    ["claims", `${s.claims.keys} keys · ${s.claims.won} won · ${s.claims.converged} converged${s.claims.rejected ? ` · ${s.claims.rejected} rejected (retried)` : ""}`],
    ["lease", `${s.lease.epochs} epochs · ${s.lease.releases} releases · ${s.lease.leaseLost} LeaseLost`],
    ["stalls", `${s.lease.stalls} (${s.lease.stolenWhileStalled} stolen meanwhile${s.breaks.whileStalled ? `, ${s.breaks.whileStalled} broken by the operator` : ""})`],
    ["cancels", `${s.lease.cancelRequests} requested · ${s.lease.cancelsHonoured} honoured`],
    ["operator", breaks(s.breaks)],
    ["fenced writes", `${s.writes.acknowledged} acknowledged · ${s.writes.fenced} fenced (LeaseLost) · ${s.writes.unacknowledged} failed · ${s.writes.inLog} in the log`],
    ["renewals", String(s.writes.renewals)],
    ["faults injected", faults],
    ["rejections by code", rejections],
    ["requests", s.requests ? `${s.requests.total} (get ${s.requests.get}, put ${s.requests.put})${s.requests.operator ? ` · operator ${s.requests.operator}` : ""}` : "…"],
  ];
  $("summary").replaceChildren(...rows.flatMap(([k, v]) => {
    const dt = document.createElement("dt"), dd = document.createElement("dd");
    dt.textContent = k;
    dd.textContent = v;
    return [dt, dd];
  }));
}

/** The operator's row: breaks, and how the old holders found out. */
function breaks(b) {
  if (!b.count) return sim.config.break > 0 ? "no lease broken" : "off (break rate 0)";
  const told = Object.entries(b.fenced).map(([reason, n]) => `${n} ${reason}`).join(", ");
  return `${b.count} breaks (${b.whileStalled} while stalled) · old holders fenced: LeaseLost ${told || "none"}` +
    ` (${b.fencedWrites} on a write)${b.gaveUp ? ` · ${b.gaveUp} had given up` : ""}${b.neverLearnt ? ` · ${b.neverLearnt} never learnt` : ""}`;
}

const NAMES = ["one winner per claim key, and all agree", "one holder per epoch", "epochs in the write log never decrease",
  "no acknowledged write lost (nor applied twice)", "fenced writes never land", "no unexpected errors", "a broken lease fences its old holder"];

function renderInvariants(list) {
  const items = (list ?? NAMES.map((name) => ({ name, pending: true }))).map((inv) => {
    const li = document.createElement("li");
    li.className = inv.pending ? "pending" : inv.ok ? "ok" : "bad";
    li.innerHTML = `<span class="mark">${inv.pending ? "…" : inv.ok ? "✓" : "✗"}</span><span></span><span class="detail"></span>`;
    li.children[1].textContent = inv.name;
    li.children[2].textContent = inv.pending ? "checked when the run ends" : inv.detail;
    return li;
  });
  $("invariants").replaceChildren(...items);
  const verdict = $("verdict");
  if (!list) {
    verdict.textContent = "";
    verdict.className = "note";
  } else {
    const bad = list.filter((i) => !i.ok).length;
    verdict.textContent = bad ? `${bad} violated` : "all hold";
    verdict.className = bad ? "bad" : "ok";
  }
}

const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));

async function step() {
  if (running) {
    running = false; // Step while running pauses; the next Step moves on by one
    return;
  }
  if (!sim || sim.done) return;
  await advance();
  render();
  if (sim.done) finish();
}

async function run() {
  if (!sim || sim.done || JSON.stringify(readForm()) !== JSON.stringify(sim.config)) await reset();
  running = true;
  const me = ++loop;
  $("run").textContent = "Pause";
  try {
    let last = 0;
    while (running && me === loop && !sim.done) {
      await advance();
      if (performance.now() - last > 50 || sim.done) {
        render();
        await frame();
        last = performance.now();
      }
    }
  } finally {
    if (me === loop) {
      running = false;
      $("run").textContent = sim.done ? "Run again" : "Run";
      render();
    }
  }
  if (me === loop && sim.done) finish();
}

function finish() {
  const invariants = checkInvariants(sim.events, sim.final);
  window.__playground = {
    done: true,
    config: sim.config,
    t: sim.now,
    invariants,
    summary: summarize(sim.events, sim.final),
    fingerprint: fingerprint(sim.events),
    drawn,
    history: { events: sim.events, final: sim.final },
  };
}

function fail(e) {
  console.error(e);
  status(`error: ${e?.message ?? e}`);
  window.__playground = { ...window.__playground, done: true, error: String(e?.stack ?? e) };
}

form.addEventListener("submit", (e) => {
  e.preventDefault();
  if (running) running = false; // Pause
  else run().catch(fail);
});
$("step").addEventListener("click", () => step().catch(fail));
$("reset").addEventListener("click", () => reset().catch(fail));

const query = new URLSearchParams(location.search);
fillForm(normalizeConfig(Object.fromEntries([...query].filter(([k]) => k in DEFAULTS))));
reset().then(() => (query.get("autorun") === "1" ? run() : undefined)).catch(fail);
