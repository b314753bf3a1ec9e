// Diagnostic (not a test stage): prints how Miniflare's local R2 simulator answers the exact
// conditional calls src/store/r2.rs makes. Run: node tests/js/workerd/r2-probe.mjs
import { Miniflare } from "miniflare";

process.env.WRANGLER_SEND_METRICS ??= "false";
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";

const script = `
async function attempt(f) {
  try { const r = await f(); return r === null ? "null" : r === undefined ? "undefined" : { etag: r.etag, httpEtag: r.httpEtag, customMetadata: r.customMetadata }; }
  catch (e) { return "THROWS " + e.name + ": " + e.message; }
}
export default {
  async fetch(req, env) {
    const B = env.BUCKET, out = {};
    const first = await B.put("k", "one", { customMetadata: { "fencepost-token": "t1", "fencepost-history": "t0" } });
    out["put k (unconditional)"] = { etag: first.etag, httpEtag: first.httpEtag };
    out["put k onlyIf {etagDoesNotMatch:'*'} (k exists)"] = await attempt(() => B.put("k", "x", { onlyIf: { etagDoesNotMatch: "*" } }));
    out["put new onlyIf {etagDoesNotMatch:'*'} (absent)"] = await attempt(() => B.put("new", "x", { onlyIf: { etagDoesNotMatch: "*" } }));
    out["put k onlyIf {etagMatches: wrong}"] = await attempt(() => B.put("k", "x", { onlyIf: { etagMatches: "00000000000000000000000000000000" } }));
    out["put missing onlyIf {etagMatches: k's etag}"] = await attempt(() => B.put("missing", "x", { onlyIf: { etagMatches: first.etag } }));
    out["get missing after that"] = await attempt(() => B.get("missing"));
    out["put k onlyIf {etagMatches: quoted httpEtag}"] = await attempt(() => B.put("k", "q", { onlyIf: { etagMatches: first.httpEtag } }));
    const now = await B.head("k");
    out["put k onlyIf {etagMatches: current etag}"] = await attempt(() => B.put("k", "two", { onlyIf: { etagMatches: now.etag }, customMetadata: { "fencepost-token": "t2" } }));
    out["get k customMetadata"] = (await B.get("k")).customMetadata;
    out["put k onlyIf Headers{If-None-Match:*}"] = await attempt(() => B.put("k", "x", { onlyIf: new Headers({ "If-None-Match": "*" }) }));
    out["delete missing"] = await attempt(() => B.delete("nothing-here"));
    return Response.json(out);
  },
};`;

const mf = new Miniflare({ host: "127.0.0.1", modules: true, script, compatibilityDate: "2026-04-01", r2Buckets: ["BUCKET"], r2Persist: false });
try {
  console.log(JSON.stringify(await (await mf.dispatchFetch("http://127.0.0.1/")).json(), null, 2));
} finally {
  await mf.dispose();
}
