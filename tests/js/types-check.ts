// Compile-time checks of the package's types (run by `tsc --noEmit` in the test suite, under
// moduleResolution node16, nodenext and bundler): the generics flow through, and misuse is a type
// error (each @ts-expect-error must really be an error, or tsc fails).
import {
  Fencepost, memoryStore, s3Store, countingStore, objects, FencepostError, LeaseLost, StorageError,
  AmbiguousWriteError, InvalidArgument, initWasm,
  type Lease, type Doc, type ClaimResult, type Json, type StandardSchemaV1, type FencepostErrorCode,
} from "fencepost";
import wasm from "fencepost/fencepost_bg.wasm";

type Job = { step: number; cancel?: boolean };
/** Interfaces (no index signature) are valid state and document types. */
interface Task { title: string; done: boolean; tags?: string[]; due?: Date }

export async function typed(): Promise<void> {
  await initWasm();
  await initWasm(wasm); // what a bundler's asset import gives (a URL string, or a Module in workerd)
  // @ts-expect-error the asset import may be a compiled Module, not only a string
  const wasmUrl: string = wasm;
  const db = new Fencepost(countingStore(memoryStore()), { retry: { maxAttempts: 3 }, now: () => Date.now() });

  const c: ClaimResult<{ by: string }> = await db.claim("k", { by: "me" });
  const by: string = c.value.by;
  const t: ClaimResult<Task> = await db.claim<Task>("task", { title: "x", done: false, due: new Date() });
  // A Date is written through its toJSON: it reads back as its ISO string.
  const due: string | undefined = t.value.due;
  // @ts-expect-error not a Date once stored
  const dueDate: Date | undefined = t.value.due;

  const lease: Lease<Job> | null = await db.lease<Job>("jobs/1", { ttl: 30, stateFn: (s) => s ?? { step: 0 } });
  if (lease) {
    const step: number = lease.state.step;
    const next: Job = await lease.updateState((s) => ({ ...s, step: s.step + 1 }));
    const when: Date = lease.deadlineAt;
    const epoch: number = lease.epoch;
    const signal: AbortSignal = lease.signal;
    await lease.renew({ signal: AbortSignal.timeout(1000) });
    await lease.release({ state: { step, cancel: true } });
    const disposable: AsyncDisposable = lease;
    void [next, when, epoch, signal, disposable];
  }
  // Without stateFn a fresh lease's state is null.
  const plain = await db.lease<Job>("jobs/2", { ttl: 30 });
  if (plain) {
    const s: Job | null = plain.state;
    // @ts-expect-error state may be null without stateFn
    plain.state.step;
    // @ts-expect-error handles have no free(): memory is reclaimed by the garbage collector
    plain.free();
    void s;
  }
  const taskLease = await db.lease<Task>("tasks/1", { ttl: 10, stateFn: () => ({ title: "t", done: false }) });
  const title: string | undefined = taskLease?.state.title;
  // The state may be null (a lease acquired without stateFn).
  const cancelled: Job | null = await db.cooperativeWrite<Job>("jobs/1", (s) => ({ step: s?.step ?? 0, cancel: true }));
  // @ts-expect-error the state may be null
  await db.cooperativeWrite<Job>("jobs/1", (s) => ({ step: s.step, cancel: true }));
  // withLease: with stateFn the lease's state is S; without, a fresh lease's state is null.
  const stepped: number | null = await db.withLease("jobs/3", { ttl: 30, stateFn: (s: Job | null) => s ?? { step: 0 } }, (l) => l.state.step);
  await db.withLease<Job>("jobs/4", { ttl: 30 }, (l) => {
    // @ts-expect-error state may be null without stateFn
    return l.state.step;
  });
  // once: the result must be JSON.
  const ran = await db.once("once/1", async () => ({ sent: 3 }));
  if (ran.status === "done") { const sent: number = ran.value.sent; void sent; }
  // A result typed any (a response's json()) is taken as it is; a sync function too.
  const fetched = await db.once("once/3", async () => JSON.parse("{}") as any);
  await db.once("once/4", () => 5);
  // A tuple keeps its shape once stored.
  const pair: ClaimResult<[number, Date]> = await db.claim<[number, Date]>("pair", [1, new Date()]);
  const second: string = pair.value[1];
  // @ts-expect-error a function is not a result JSON can record
  await db.once("once/2", async () => () => 1);
  // withPermit without options.
  const permitted: number | null = await db.semaphore("sem", { limit: 2, ttl: 30 }).withPermit(async (p) => p.epoch);
  // Stores show the settings they were made with.
  const endpoint: string | undefined = s3Store({ endpoint: "http://127.0.0.1:9000", bucket: "b", accessKeyId: "a", secretAccessKey: "s" }).endpoint;
  void [due, dueDate, stepped, permitted, endpoint, fetched, second];

  const doc: Doc<{ n: number }> = db.doc<{ n: number }>("stats");
  const n: { n: number } = await doc.update((v) => ({ n: v.n + 1 }), { create: { n: 0 }, maxAttempts: 5 });
  const got = await doc.get();
  if (got) {
    const value: number = got.value.n;
    const etag: string = got.etag;
    void [value, etag];
  }
  const tasks: Doc<Task> = db.doc<Task>("tasks");
  await tasks.update((v) => ({ ...v, done: true }), { create: { title: "new", done: false } });

  const schema: StandardSchemaV1<unknown, { tags: string[] }> = {
    "~standard": { version: 1, vendor: "test", validate: (v) => ({ value: v as { tags: string[] } }) },
  };
  const tagged = db.doc("tags", { schema });
  const tags: string[] = (await tagged.update((v) => ({ tags: [...v.tags, "a"] }), { create: { tags: [] } })).tags;

  const o = objects(memoryStore());
  const put = await o.put("raw", new Uint8Array([1]), { ifAbsent: true });
  const bytes: Uint8Array | undefined = (await db.objects.get("raw"))?.data;
  const keys: string[] = await o.list("jobs/");

  try {
    await db.claim("k", 1);
  } catch (e) {
    if (e instanceof LeaseLost) { const reason: string = e.reason; const code: "LEASE_LOST" = e.code; void [reason, code]; }
    if (e instanceof StorageError) {
      const status: number | undefined = e.status;
      const s3Code: string | undefined = e.s3Code;
      const code: "STORAGE_ERROR" | "AMBIGUOUS_WRITE" = e.code;
      void [status, s3Code, code];
    }
    if (e instanceof AmbiguousWriteError) { const code: "AMBIGUOUS_WRITE" = e.code; void code; }
    if (e instanceof InvalidArgument) { const code: "INVALID_ARGUMENT" = e.code; void code; }
    if (e instanceof FencepostError) {
      const code: FencepostErrorCode = e.code;
      if (e.code === "CONFLICT") { const narrowed: "CONFLICT" = e.code; void narrowed; }
      // @ts-expect-error not a fencepost code: comparing with it is a type error
      if (e.code === "LEASE_LOST_TYPO") void 0;
      void code;
    }
  }

  s3Store({ endpoint: "http://127.0.0.1:8333", bucket: "b", accessKeyId: "a", secretAccessKey: "s", prefix: "app" });

  // @ts-expect-error ttl is required
  await db.lease("jobs/2", {});
  // @ts-expect-error a typo'd option name is refused (and is an InvalidArgument at run time)
  await db.lease("jobs/2", { ttl: 30, stealIfExpire: false });
  // @ts-expect-error so is one in the constructor
  new Fencepost(memoryStore(), { retyr: { maxAttempts: 1 } });
  // @ts-expect-error a BigInt is not JSON
  await db.claim("k", 10n);
  // @ts-expect-error a function is not JSON
  await db.claim("k", { run: () => 1 });
  // @ts-expect-error the update function must return the document type
  await doc.update(() => "nope");
  // @ts-expect-error s3Store needs credentials
  s3Store({ endpoint: "http://x", bucket: "b" });
  // @ts-expect-error ifAbsent and ifMatch cannot be combined
  await o.put("k", "x", { ifAbsent: true, ifMatch: "abc" });
  // @ts-expect-error signal must be an AbortSignal
  await db.claim("k", 1, { signal: true });

  const anyJson: Json = { a: [1, "x", null, { b: true }] };
  void [wasmUrl, by, t, title, cancelled, n, tags, put, bytes, keys, anyJson];
}
