// Types of fencepost/testing: a fault-injecting store and a manual clock for testing your own
// coordination code (vitest, node --test, deno test, workerd, a browser harness).
import type { Store, R2BucketLike } from "./index.js";

export { initWasm } from "./index.js";

/** What `inject` can make happen. */
export type Fault =
  /** The request is carried out (the write lands); its answer is lost: the caller sees a transport error. */
  | "lostResponse"
  /** Nothing is sent; the caller sees a transport error. */
  | "transport"
  /** A competing write of the same bytes, under the same condition, lands just before a put (a claim then loses to it; a CAS retries). */
  | "conflict"
  /** The store answers this HTTP status (and S3 error code; default: what S3 says for it), read as the S3 store reads it: a 412 (or a 404 `NoSuchKey`, the code a 404 has unless given another) to a conditional put or delete is a condition that did not hold (the put resolves null), not a failure. */
  | { status: number; code?: string }
  /** The request waits first (on the manual clock when the fault store has one). */
  | { delay: number }
  /** The request is never answered: it fails as unanswered after the fault store's `timeout` (default 30 s); nothing is applied. */
  | "hang";

export interface InjectOptions {
  /** Which requests; any when omitted (a lost response: puts). */
  op?: "get" | "put" | "delete" | "list";
  /** A key prefix the request's key must start with. */
  key?: string;
  /** How many matching requests the fault applies to (default 1). */
  times?: number;
}

/** A store that injects faults and counts requests. */
export declare class FaultStore extends Store {
  private constructor();
  readonly kind: "fault";
  /** Apply `fault` to the next `times` matching requests (faults are tried in the order injected). */
  inject(fault: Fault, options?: InjectOptions): this;
  /** Forget every fault not yet applied. */
  clearFaults(): void;
  /** Answer 429 (SlowDown) to writes past `perKey` to one key within a second, as R2 does at 1; `null` lifts the limit. */
  limitWrites(limit: { perKey: number } | null): this;
  /** Answer nothing for `seconds` from now, then resume: requests meanwhile wait for the end, or fail as unanswered after `timeout`. */
  pause(seconds: number): this;
}

/** Wrap any store (or an R2 binding) to inject faults; `{clock}` makes delays, hangs and pauses manual; `{timeout}` (seconds, default 30) bounds a hung or paused request. */
export declare function faultStore(store: Store | R2BucketLike, options?: { clock?: ManualClock; timeout?: number }): FaultStore;

/** A clock that moves only when told to; pass it as `new Fencepost(store, {clock})`. */
export declare class ManualClock {
  private constructor();
  /** Milliseconds since the epoch, as `Date.now()`. */
  now(): number;
  /**
   * Move time forward, running every wait fencepost made that falls due, in due order (backoff,
   * keep-alive, waitFor polls, lease({wait}), the delays of a faultStore given this clock).
   * Resolves once they have run. Advances made while another runs add up; time never goes back.
   */
  advance(seconds: number): Promise<void>;
  toJSON(): { now: string };
}

/** A manual clock starting at `start` (default 2026-01-01T00:00:00Z). In browsers, `await initWasm()` first. */
export declare function manualClock(start?: Date | number): ManualClock;

/** What `storeConformance(store)` resolves to without a `test` function. */
export interface StoreConformanceReport {
  ok: boolean;
  passed: number;
  failed: number;
  cases: { name: string; ok: boolean; error?: string }[];
}

/**
 * Run fencepost's store conformance cases against `store` (each under a fresh
 * `__fencepost_conformance/<random>/` prefix, cleaned up after). With `{test}` (node:test's or
 * bun:test's `test`, vitest's `test`/`it`, `Deno.test`) each case is registered as a test;
 * without it they run at once and the report is returned (`signal`: no case starts once it has
 * aborted, and the Promise rejects with its reason).
 */
export declare function storeConformance(store: Store | R2BucketLike, options: { test: (name: string, fn: () => Promise<void>) => unknown }): void;
export declare function storeConformance(store: Store | R2BucketLike, options?: { signal?: AbortSignal }): Promise<StoreConformanceReport>;
