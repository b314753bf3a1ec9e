// A fault-injecting HTTP proxy in front of an S3 server, on 127.0.0.1 and an ephemeral port (Node
// only). Each request either passes or gets one fault, chosen by the first of these that applies:
//
//   1. a rule (setRules): {fault, method?, path?, times?, lateMs?}: `method` a name or a list of
//      them, `path` a substring of or a RegExp on the request path (bucket, key and query);
//      `times` how many matching requests it applies to (default: all of them)
//   2. a forced fault (forceNext), in the order given
//   3. a fault drawn from `rates` ({kind: probability}) with a PRNG stream of `seed`
//   4. "pass"
//
// Faults, as "kind" or "kind:variant":
//
//   pass          forward, answer with the server's answer
//   lostResponse  forward, let the write land, then destroy the client socket without answering
//   landed500     forward, let the write land, then answer 500 InternalError (S3 XML body)
//   status5xx     500 InternalError / 503 SlowDown / 503 ServiceUnavailable, not forwarded
//   status409     409 ConditionalRequestConflict (OperationAborted off PUT), not forwarded
//   status429     429 SlowDown (R2's throttling answer), not forwarded
//   reset         connection reset (TCP RST), not forwarded
//   slow          a delay before forwarding or before answering (below the per-attempt timeout)
//   dropConditions  forward without If-Match / If-None-Match: a store that ignores conditional
//                 writes (what the store check must catch; SigV4 signs those headers, so use a
//                 server that does not check signatures, such as moto)
//   hung          never answered, so the client's per-attempt timeout must cut it:
//                 hung:dropped (never forwarded), hung:landed (forwarded at once, answer withheld),
//                 hung:late (forwarded after `lateMs`, by default 0.3 s after the client's
//                 `timeout`: a write that lands after the client gave up). Plain `hung` picks
//                 one at random for a write, `dropped` for a read.
//
// A new fault is one more entry in FAULTS below. SigV4 signs the Host header, so a request is
// forwarded with the client's headers unchanged (the server checks the signature against the host
// the client addressed: this proxy).
//
//   const proxy = await startFaultProxy({ upstream, seed: 1, rates: { lostResponse: 0.05 }, timeout: 2 });
//   proxy.setRules([{ method: "PUT", fault: "hung:late", lateMs: 500 }]);   // every PUT lands late
//   … proxy.url as the store's endpoint …
//   proxy.setRules([]);
//   proxy.counts   // {pass: 120, "hung:late": 3, …}: requests by the fault they got
//   await proxy.close();

import http from "node:http";
import { prng } from "./prng.js";

const HOP = new Set(["connection", "keep-alive", "transfer-encoding", "proxy-connection", "upgrade", "te", "trailer"]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function s3Error(code, status) {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>fault proxy: injected ${status} ${code}</Message>` +
    `<RequestId>fault-proxy</RequestId><HostId>fault-proxy</HostId></Error>`;
}

/**
 * What each fault does with one request. `x` holds the request (`req`, `res`, `body`, `write`: a
 * PUT, DELETE or POST), the proxy's `forward()`, `answer()`, `fail()`, `rng`, the clients'
 * `timeout` and the matching rule's parameters. Returns the name the request is counted under.
 */
const FAULTS = {
  async pass(x) {
    x.answer(await x.forward());
  },
  async dropConditions(x) {
    x.answer(await x.forward(["if-match", "if-none-match"]));
  },
  async lostResponse(x) {
    await x.forward();
    x.req.socket.destroy();
  },
  async landed500(x) {
    await x.forward();
    x.fail(500, "InternalError");
  },
  status5xx(x) {
    const [status, code] = x.rng.pick([[500, "InternalError"], [503, "SlowDown"], [503, "ServiceUnavailable"]]);
    x.fail(status, code);
    return `status${status}`;
  },
  status409(x) {
    x.fail(409, x.req.method === "PUT" ? "ConditionalRequestConflict" : "OperationAborted");
  },
  status429(x) {
    x.fail(429, "SlowDown");
  },
  reset(x) {
    x.req.socket.resetAndDestroy();
  },
  async slow(x) {
    const cap = x.timeout == null ? 0.8 : Math.min(0.8, x.timeout * 0.4);
    const ms = x.rng.range(0.05, cap) * 1000;
    if (x.rng.chance(0.5)) {
      await sleep(ms);
      x.answer(await x.forward());
    } else {
      const got = await x.forward();
      await sleep(ms);
      x.answer(got);
    }
  },
  async hung(x) {
    const variant = x.variant ?? (x.write ? x.rng.pick(["dropped", "landed", "late"]) : "dropped");
    x.hold(); // counted as cut (or not) by the client
    if (variant === "landed") await x.forward().catch(() => {});
    if (variant === "late") {
      await sleep(x.lateMs ?? ((x.timeout ?? 0) + 0.3) * 1000);
      await x.forward().catch(() => {});
    }
    return `hung:${variant}`;
  },
};

/**
 * Start the proxy in front of `upstream` (an http:// URL). `rates`: {kind: probability} for the
 * random faults (the rest passes); `rules`: as setRules; `timeout`: the clients' per-attempt
 * timeout in seconds (null: not enforced, so no random `hung`, which nothing would cut); `hungMax`:
 * seconds after which the proxy itself drops a hung request the client never cut.
 * Returns {url, counts, stats, setRates, setRules, forceNext, close}.
 */
export async function startFaultProxy({ upstream, seed = 0, rates = {}, rules = [], timeout = null, hungMax = 8 }) {
  const up = new URL(upstream);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  const rng = prng(seed, "proxy");
  let weights = {};
  let active = [];
  const counts = Object.create(null);
  const stats = { requests: 0, byMethod: Object.create(null), hungCut: [], hungNotCut: 0, upstreamErrors: 0 };
  const forced = [];
  const open = new Set();

  /** The random faults: {kind: probability}. */
  function setRates(r) {
    weights = {};
    let faulty = 0;
    for (const [k, p] of Object.entries(r)) {
      known(k);
      if (k === "hung" && timeout == null) continue; // nothing would cut it
      if (p > 0) weights[k] = p;
      faulty += p;
    }
    weights.pass = Math.max(0, 1 - faulty);
  }

  const known = (fault) => {
    if (!Object.hasOwn(FAULTS, fault.split(":")[0])) throw new Error(`unknown fault ${fault}`);
    return fault;
  };

  /** The rules, replacing the previous ones; [] ends them. */
  function setRules(list) {
    active = list.map((r) => ({ ...r, fault: known(r.fault), left: r.times ?? Infinity }));
  }

  const matches = (rule, req) =>
    rule.left > 0 &&
    (rule.method === undefined || [rule.method].flat().includes(req.method)) &&
    (rule.path === undefined || (rule.path instanceof RegExp ? rule.path.test(req.url) : req.url.includes(rule.path)));

  function choose(req) {
    const rule = active.find((r) => matches(r, req));
    if (rule) {
      rule.left--;
      return rule;
    }
    if (forced.length) return { fault: forced.shift() };
    return { fault: rng.weighted(weights) };
  }

  function forward(req, body, drop = []) {
    return new Promise((resolve, reject) => {
      const headers = {};
      for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k) && !drop.includes(k)) headers[k] = v;
      const u = http.request(
        { host: up.hostname, port: up.port, method: req.method, path: req.url, headers, agent },
        (r) => {
          const chunks = [];
          r.on("data", (c) => chunks.push(c));
          r.on("end", () => resolve({ status: r.statusCode, headers: r.headers, body: Buffer.concat(chunks) }));
          r.on("error", reject);
        },
      );
      u.on("error", reject);
      u.end(body);
    });
  }

  function answer(res, got) {
    if (res.destroyed || res.writableEnded) return;
    const headers = {};
    for (const [k, v] of Object.entries(got.headers)) if (!HOP.has(k) && k !== "content-length") headers[k] = v;
    headers["content-length"] = got.body.length;
    res.writeHead(got.status, headers);
    res.end(got.body);
  }

  function hold(req) {
    const t0 = Date.now();
    let cut = false;
    req.socket.once("close", () => {
      cut = true;
      stats.hungCut.push((Date.now() - t0) / 1000);
    });
    const valve = setTimeout(() => {
      if (!cut) {
        stats.hungNotCut++;
        req.socket.destroy();
      }
    }, hungMax * 1000);
    valve.unref();
  }

  async function handle(req, res, body) {
    const { fault, method, path, times, left, ...params } = choose(req);
    const [kind, variant] = fault.split(":");
    const x = {
      ...params,
      req, res, body, rng, timeout, variant,
      write: req.method === "PUT" || req.method === "DELETE" || req.method === "POST",
      forward: (/** @type {string[] | undefined} */ drop) => forward(req, body, drop),
      answer: (got) => answer(res, got),
      fail: (status, code) => {
        const text = req.method === "HEAD" ? Buffer.alloc(0) : Buffer.from(s3Error(code, status));
        answer(res, { status, headers: { "content-type": "application/xml", "x-amz-request-id": "fault-proxy" }, body: text });
      },
      hold: () => hold(req),
    };
    let name = fault;
    try {
      name = (await FAULTS[kind](x)) ?? fault;
    } catch {
      stats.upstreamErrors++;
      req.socket.destroy();
    }
    counts[name] = (counts[name] ?? 0) + 1;
  }

  setRates(rates);
  setRules(rules);
  const server = http.createServer((req, res) => {
    stats.requests++;
    stats.byMethod[req.method] = (stats.byMethod[req.method] ?? 0) + 1;
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => void handle(req, res, Buffer.concat(chunks)));
    req.on("error", () => {});
  });
  server.on("connection", (s) => {
    open.add(s);
    s.on("close", () => open.delete(s));
  });
  server.keepAliveTimeout = 5000;
  await new Promise((r) => server.listen(0, "127.0.0.1", r));

  return {
    url: `http://127.0.0.1:${server.address().port}`,
    counts,
    stats,
    setRates,
    setRules,
    /** The next requests no rule matches get these faults, in order, whatever the PRNG says. */
    forceNext: (...faults) => forced.push(...faults.map(known)),
    async close() {
      for (const s of open) s.destroy();
      agent.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
