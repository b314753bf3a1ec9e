// Metrics and traces with OpenTelemetry: `onEvent` turned into a span per call (back-dated by its
// `ms`, marked as an error unless "ok") and counters and histograms of requests, calls and lease
// transitions. Any OpenTelemetry SDK or exporter works behind @opentelemetry/api; here in-memory
// exporters check what the recipe produces.
import { SpanStatusCode } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import {
  AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { Fencepost, countingStore, memoryStore } from "fencepost";

// ---- the recipe: copy this function ----------------------------------------------------------
/** An `onEvent` handler recording fencepost's events with an OpenTelemetry tracer and meter. */
export function openTelemetryEvents({ tracer, meter }) {
  const requests = meter.createCounter("fencepost.requests", { description: "Requests to the object store" });
  const requestDuration = meter.createHistogram("fencepost.request.duration", { unit: "ms" });
  const callDuration = meter.createHistogram("fencepost.call.duration", { unit: "ms" });
  const leases = meter.createCounter("fencepost.lease.transitions");
  return (e) => {
    if (e.type === "request") {
      const attributes = { "fencepost.op": e.op, "fencepost.outcome": e.outcome };
      requests.add(1, attributes);
      requestDuration.record(e.ms, attributes);
    } else if (e.type === "call") {
      const attributes = { "fencepost.method": e.method, "fencepost.key": e.key, "fencepost.requests": e.requests };
      // The event comes at the call's end: the span starts `ms` earlier.
      const span = tracer.startSpan(`fencepost ${e.method}`, { startTime: Date.now() - e.ms, attributes });
      if (e.outcome !== "ok") span.setStatus({ code: SpanStatusCode.ERROR, message: e.outcome });
      span.end();
      callDuration.record(e.ms, { "fencepost.method": e.method, "fencepost.outcome": e.outcome });
    } else {
      leases.add(1, { "fencepost.action": e.action, ...(e.reason && { "fencepost.reason": e.reason }) });
    }
  };
}
// ------------------------------------------------------------------------------------------------

const spans = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }).getTracer("fencepost");
const metricsOut = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter: metricsOut, exportIntervalMillis: 3_600_000 });
const meter = new MeterProvider({ readers: [reader] }).getMeter("fencepost");

const store = countingStore(memoryStore());
const db = new Fencepost(store, { onEvent: openTelemetryEvents({ tracer, meter }) });

await db.claim("cron/2026-12-01T10:00", { by: "a" });
await db.claim("cron/2026-12-01T10:00", { by: "b" }); // lost: 2 requests
const lease = await db.lease("jobs/report", { ttl: 30 });
await lease.renew();
await db.breakLease("jobs/report"); // an operator breaks it…
const fenced = await lease.updateState(() => ({ late: true })).catch((e) => e); // …and the old holder is fenced

await reader.forceFlush();
const finished = spans.getFinishedSpans();
const metrics = metricsOut.getMetrics().at(-1).scopeMetrics.flatMap((s) => s.metrics);
const sum = (name, match = () => true) => metrics.find((m) => m.descriptor.name === name)?.dataPoints
  .filter((p) => match(p.attributes)).reduce((n, p) => n + (typeof p.value === "number" ? p.value : p.value.count), 0) ?? 0;

const names = finished.map((s) => s.name);
console.log(`spans: ${names.join(", ")}`);
const counted = store.requestCounts();
const requestTotal = counted.get + counted.put + counted.delete + counted.list;
console.log(`fencepost.requests = ${sum("fencepost.requests")}; the store saw ${requestTotal}`);
const failedSpan = finished.find((s) => s.name === "fencepost lease.updateState");
const ok =
  fenced?.code === "LEASE_LOST" &&
  JSON.stringify(names) === JSON.stringify(["fencepost claim", "fencepost claim", "fencepost lease", "fencepost lease.renew",
    "fencepost breakLease", "fencepost lease.updateState"]) &&
  finished.every((s) => s.attributes["fencepost.requests"] >= 1) &&
  failedSpan?.status.code === SpanStatusCode.ERROR && failedSpan.status.message === "LEASE_LOST" &&
  sum("fencepost.requests") === requestTotal && requestTotal === 10 &&
  sum("fencepost.call.duration") === 6 &&
  sum("fencepost.lease.transitions", (a) => a["fencepost.action"] === "lost" && a["fencepost.reason"] === "stolen") === 1 &&
  sum("fencepost.lease.transitions") === 4; // acquired, renewed, broken, lost
if (!ok) {
  console.error("the OpenTelemetry recipe did not record what it should", JSON.stringify({ names, requestTotal, metrics }, null, 1));
  process.exit(1);
}
