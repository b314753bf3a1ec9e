// The operations benches/run.mjs (sections 3 and 4) and benches/profile.mjs time. Each runs on a
// fencepost `Fencepost` or a baseline `Coord` (the same method names).

/** Settings for `s3Store` / `aws4fetchCoord` against the instant in-process S3 (nothing is sent). */
export const INSTANT_S3_SETTINGS = {
  endpoint: "http://instant-s3.invalid", bucket: "bench", region: "us-east-1",
  accessKeyId: "AKIDINSTANTS3BENCH", secretAccessKey: "instant/s3/bench/secret/key/0123456789",
};

/**
 * Each runs on a fencepost `Fencepost` or a baseline `Coord` (same method names), with fresh keys
 * where the operation needs them. `check` validates one result after the warm-up.
 * @type {{name: string, id: string, setup: (db: any) => Promise<any>, op: (db: any, ctx: any, i: number) => Promise<any>, check: (r: any) => boolean}[]}
 */
export const SCENARIOS = [
  { name: "claim (won)", id: "claimWon", setup: async () => null, op: (db, _, i) => db.claim(`bench/claim/${i}`, { i }), check: (r) => r.won === true },
  { name: "claim (lost)", id: "claimLost", setup: (db) => db.claim("bench/taken", { first: true }), op: (db, _, i) => db.claim("bench/taken", { i }), check: (r) => r.won === false && r.value.first === true },
  {
    name: "lease acquire+renew+release", id: "leaseCycle", setup: async () => null, check: (r) => r.epoch > 1,
    op: async (db) => {
      const l = await db.lease("bench/cycle", { ttl: 30 });
      await l.renew();
      await l.release();
      return l;
    },
  },
  { name: "lease held (refused)", id: "leaseHeld", setup: (db) => db.lease("bench/held", { ttl: 3600 }), op: (db) => db.lease("bench/held", { ttl: 30 }), check: (r) => r === null },
  { name: "doc.update (counter)", id: "docUpdate", setup: async (db) => db.doc("bench/doc"), op: (_, d) => d.update((/** @type {number} */ v) => v + 1, { create: 0 }), check: (r) => r > 1 },
  {
    name: "doc.get", id: "docGet", check: (r) => r.value.a.length === 3, op: (_, d) => d.get(),
    setup: async (db) => {
      const d = db.doc("bench/get");
      await d.update(() => ({ a: [1, 2, 3], name: "fencepost", n: 42 }), { create: {} });
      return d;
    },
  },
];
