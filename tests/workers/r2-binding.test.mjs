// What the Workers R2 store (src/store/r2.rs) relies on in the R2 binding, checked against the
// local R2 simulator these tests (and the workerd and demo stages) run on. When a Miniflare
// upgrade breaks the r2 conformance cases, this file says which answer changed.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

const B = () => env.BUCKET;
let n = 0;
const fresh = (name) => `r2-binding/${Date.now().toString(36)}-${++n}/${name}`;

describe("R2 binding: the calls fencepost's r2Store makes", () => {
  it("put returns the etag unquoted and httpEtag quoted; get returns the same etag", async () => {
    const key = fresh("k");
    const put = await B().put(key, "one");
    expect(put.etag).toMatch(/^[0-9a-f]{32}$/);
    expect(put.httpEtag).toBe(`"${put.etag}"`);
    expect((await B().get(key)).etag).toBe(put.etag);
  });

  it("create-only: onlyIf {etagDoesNotMatch: '*'} writes an absent key, returns null on an existing one", async () => {
    const key = fresh("k");
    expect(await B().put(key, "first", { onlyIf: { etagDoesNotMatch: "*" } })).not.toBeNull();
    expect(await B().put(key, "second", { onlyIf: { etagDoesNotMatch: "*" } })).toBeNull();
    expect(await (await B().get(key)).text()).toBe("first");
  });

  it("compare-and-swap: onlyIf {etagMatches} writes on the current etag, returns null on another", async () => {
    const key = fresh("k");
    const v1 = await B().put(key, "v1");
    expect(await B().put(key, "x", { onlyIf: { etagMatches: "00000000000000000000000000000000" } })).toBeNull();
    const v2 = await B().put(key, "v2", { onlyIf: { etagMatches: v1.etag } });
    expect(v2?.etag).toBeTruthy();
    expect(await B().put(key, "x", { onlyIf: { etagMatches: v1.etag } })).toBeNull(); // stale etag
    expect(await (await B().get(key)).text()).toBe("v2");
  });

  it("etagMatches on a missing key returns null and writes nothing", async () => {
    const key = fresh("k");
    const other = await B().put(fresh("other"), "x");
    expect(await B().put(key, "x", { onlyIf: { etagMatches: other.etag } })).toBeNull();
    expect(await B().get(key)).toBeNull();
  });

  it("customMetadata (the write token and its history) comes back on get", async () => {
    const key = fresh("k");
    const meta = { "fencepost-token": "t1", "fencepost-history": "t0", "fencepost-origin": "t0" };
    await B().put(key, "x", { customMetadata: meta, httpMetadata: { contentType: "application/json" } });
    const got = await B().get(key);
    expect(got.customMetadata).toEqual(meta);
    expect(got.httpMetadata.contentType).toBe("application/json");
  });

  it("delete of a missing key is a no-op", async () => {
    await expect(B().delete(fresh("nothing-here"))).resolves.toBeUndefined();
  });

  it("list pages by cursor until truncated is false", async () => {
    const prefix = fresh("list/");
    for (const k of ["c", "a", "b"]) await B().put(prefix + k, k);
    const keys = [];
    let cursor;
    for (let page = 0; page < 10; page++) {
      const res = await B().list({ prefix, limit: 2, cursor });
      keys.push(...res.objects.map((o) => o.key.slice(prefix.length)));
      if (!res.truncated) break;
      expect(res.cursor).toBeTruthy();
      cursor = res.cursor;
    }
    expect(keys).toEqual(["a", "b", "c"]);
  });
});
