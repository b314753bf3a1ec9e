// A fault-injecting HTTP proxy in front of an S3 server (SeaweedFS), on 127.0.0.1 and an ephemeral
// port, driven by a seeded PRNG. Per request it either passes it through or injects one fault:
//
//   lostResponse  forward, let the write land, then destroy the client socket without answering
//   landed500     forward, let the write land, then answer 500 InternalError (S3 XML body)
//   status5xx     500 InternalError / 503 SlowDown / 503 ServiceUnavailable, before forwarding
//   status409     409 ConditionalRequestConflict (OperationAborted off PUT), before forwarding
//   status429     429 SlowDown (R2's throttling answer), before forwarding
//   reset         connection reset (TCP RST), before forwarding
//   slow          delay before forwarding or before answering (below the per-attempt timeout)
//   hung          never answer; the client's per-attempt `timeout` must cut it. Three variants:
//                 hung:dropped (never forwarded), hung:landed (forwarded at once, answer withheld),
//                 hung:late (forwarded only after the client's timeout: a write that lands late)
//
// SigV4 signs the Host header, so the request is forwarded with the client's headers unchanged
// (SeaweedFS checks the signature against the host the client addressed: this proxy).

import http from "node:http";
import { prng } from "./prng.js";

const HOP = new Set(["connection", "keep-alive", "transfer-encoding", "proxy-connection", "upgrade", "te", "trailer"]);

function s3Error(code, status) {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>chaos proxy: injected ${status} ${code}</Message>` +
    `<RequestId>chaos</RequestId><HostId>chaos</HostId></Error>`;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Start the proxy. `rates`: {kind: probability} for the kinds above (the rest passes).
 * `timeout`: the clients' per-attempt timeout in seconds (null: not enforced, so `hung` is off).
 * Returns {url, counts, stats, setRates, forceNext, close}.
 */
export async function startFaultProxy({ upstream, seed, rates = {}, timeout = null, hungMax = 8 }) {
  const up = new URL(upstream);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  const rng = prng(seed, "proxy");
  let weights = {};
  const counts = Object.create(null);
  const stats = { requests: 0, byMethod: Object.create(null), hungCut: [], hungNotCut: 0, upstreamErrors: 0 };
  const forced = [];
  const open = new Set();

  function setRates(r) {
    weights = {};
    let faulty = 0;
    for (const [k, p] of Object.entries(r)) {
      if (k === "hung" && timeout == null) continue; // nothing would cut it
      if (p > 0) weights[k] = p;
      faulty += p;
    }
    weights.pass = Math.max(0, 1 - faulty);
  }
  setRates(rates);

  const bump = (k) => (counts[k] = (counts[k] ?? 0) + 1);

  function forward(req, body) {
    return new Promise((resolve, reject) => {
      const headers = {};
      for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k)) headers[k] = v;
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

  function fail(req, res, status, code) {
    const body = req.method === "HEAD" ? Buffer.alloc(0) : Buffer.from(s3Error(code, status));
    answer(res, { status, headers: { "content-type": "application/xml", "x-amz-request-id": "chaos" }, body });
  }

  async function handle(req, res, body) {
    let fault = forced.length ? forced.shift() : rng.weighted(weights);
    let variant = null;
    if (fault.startsWith("hung:")) [fault, variant] = fault.split(":"); // forced variant
    const write = req.method === "PUT" || req.method === "DELETE" || req.method === "POST";
    let kind = fault;
    try {
      switch (fault) {
        case "pass":
          answer(res, await forward(req, body));
          break;
        case "lostResponse":
          await forward(req, body);
          req.socket.destroy();
          break;
        case "landed500":
          await forward(req, body);
          fail(req, res, 500, "InternalError");
          break;
        case "status5xx": {
          const [status, code] = rng.pick([[500, "InternalError"], [503, "SlowDown"], [503, "ServiceUnavailable"]]);
          kind = `status${status}`;
          fail(req, res, status, code);
          break;
        }
        case "status409":
          fail(req, res, 409, req.method === "PUT" ? "ConditionalRequestConflict" : "OperationAborted");
          break;
        case "status429":
          fail(req, res, 429, "SlowDown");
          break;
        case "reset":
          req.socket.resetAndDestroy();
          break;
        case "slow": {
          const cap = timeout == null ? 0.8 : Math.min(0.8, timeout * 0.4);
          const ms = rng.range(0.05, cap) * 1000;
          if (rng.chance(0.5)) {
            await sleep(ms);
            answer(res, await forward(req, body));
          } else {
            const got = await forward(req, body);
            await sleep(ms);
            answer(res, got);
          }
          break;
        }
        case "hung": {
          variant ??= write ? rng.pick(["dropped", "landed", "late"]) : "dropped";
          kind = `hung:${variant}`;
          const t0 = Date.now();
          let cut = false;
          req.socket.once("close", () => {
            cut = true;
            stats.hungCut.push((Date.now() - t0) / 1000);
          });
          if (variant === "landed") await forward(req, body).catch(() => {});
          const valve = setTimeout(() => {
            if (!cut) {
              stats.hungNotCut++;
              req.socket.destroy();
            }
          }, hungMax * 1000);
          valve.unref();
          if (variant === "late") {
            await sleep((timeout + 0.3) * 1000);
            await forward(req, body).catch(() => {});
          }
          break;
        }
        default:
          throw new Error(`unknown fault ${fault}`);
      }
    } catch {
      stats.upstreamErrors++;
      req.socket.destroy();
    }
    bump(kind);
  }

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
  const url = `http://127.0.0.1:${server.address().port}`;

  return {
    url,
    counts,
    stats,
    setRates,
    /** The next requests get these faults, in order, whatever the PRNG says (probes). */
    forceNext: (...kinds) => forced.push(...kinds),
    async close() {
      for (const s of open) s.destroy();
      agent.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
