// Compile-time checks of pkg/index.d.ts (run by `tsc --noEmit` in the test suite): the generics
// flow through, and misuse is a type error (each @ts-expect-error must really be an error).
import {
  Fencepost, memoryStore, s3Store, countingStore, objects, LeaseLost, StorageError, InvalidArgument,
  type Lease, type Doc, type ClaimResult, type Json, type StandardSchemaV1,
} from "fencepost";

type Job = { step: number; cancel?: boolean };

export async function typed(): Promise<void> {
  const db = new Fencepost(countingStore(memoryStore()), { retry: { maxAttempts: 3 }, now: () => Date.now() });

  const c: ClaimResult<{ by: string }> = await db.claim("k", { by: "me" });
  const by: string = c.value.by;

  const lease: Lease<Job> | null = await db.lease<Job>("jobs/1", { ttl: 30, stateFn: (s) => s ?? { step: 0 } });
  if (lease) {
    const step: number = lease.state.step;
    const next: Job = await lease.updateState((s) => ({ ...s, step: s.step + 1 }));
    const when: Date = lease.deadlineAt;
    const epoch: number = lease.epoch;
    await lease.renew();
    await lease.release({ state: { step, cancel: true } });
    void [next, when, epoch];
  }
  const cancelled: Job | null = await db.cooperativeWrite<Job>("jobs/1", (s) => ({ ...s, cancel: true }));

  const doc: Doc<{ n: number }> = db.doc<{ n: number }>("stats");
  const n: { n: number } = await doc.update((v) => ({ n: v.n + 1 }), { create: { n: 0 }, maxAttempts: 5 });
  const got = await doc.get();
  if (got) {
    const value: number = got.value.n;
    const etag: string = got.etag;
    void [value, etag];
  }

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
    if (e instanceof LeaseLost) { const reason: string = e.reason; void reason; }
    if (e instanceof StorageError) { const status: number | undefined = e.status; void status; }
    if (e instanceof InvalidArgument) { const code: "INVALID_ARGUMENT" = e.code; void code; }
  }

  s3Store({ endpoint: "http://127.0.0.1:8333", bucket: "b", accessKeyId: "a", secretAccessKey: "s", prefix: "app" });

  // @ts-expect-error ttl is required
  await db.lease("jobs/2", {});
  // @ts-expect-error a BigInt is not JSON
  await db.claim("k", 10n);
  // @ts-expect-error the update function must return the document type
  await doc.update(() => "nope");
  // @ts-expect-error s3Store needs credentials
  s3Store({ endpoint: "http://x", bucket: "b" });

  const anyJson: Json = { a: [1, "x", null, { b: true }] };
  void [by, cancelled, n, tags, put, bytes, keys, anyJson];
}
