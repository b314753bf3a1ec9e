// Authorization on the Azure and GCS stores, against the emulators (scripts/test.sh starts them):
// a wrong Azure key and a SAS token; GCS tokens from `accessToken`, `getAccessToken()` and a service
// account key (its JWT signed by WebCrypto, exchanged at a token endpoint played here, which checks
// the signature against the registered key). fake-gcs-server accepts any token, so GCS requests go
// through a small proxy here that records the Authorization header each one carried.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { createHmac, createPublicKey, verify } from "node:crypto";
import { readFileSync } from "node:fs";
import * as lib from "fencepost";
import { cloudOptions, freshPrefix, serverSettings } from "../../js/support/servers.js";

const env = serverSettings();
const azure = cloudOptions(env, "azurite");
const gcs = cloudOptions(env, "fakegcs");
const servers = [];
after(() => Promise.all(servers.map((s) => new Promise((done) => s.close(done)))));

/** Listen on 127.0.0.1 (a free port); the server is closed after the tests. */
async function listen(handler) {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  return `http://127.0.0.1:${server.address().port}`;
}

const body = (req) => new Promise((done) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => done(Buffer.concat(chunks)));
});

/** A proxy to fake-gcs-server that records each request's Authorization header. */
async function recordingProxy() {
  const seen = [];
  const upstream = new URL(gcs.endpoint);
  const url = await listen(async (req, res) => {
    seen.push(req.headers.authorization ?? "");
    const payload = await body(req);
    const forwarded = http.request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method,
      headers: { ...req.headers, host: upstream.host } }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    forwarded.end(payload);
  });
  return { url, seen };
}

const fixture = (name) => JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8"));

/** Google's token endpoint, played: an RS256 assertion signed by `registered` gets `tok-<n>`. */
async function tokenEndpoint(registered) {
  const publicKey = createPublicKey(registered.private_key);
  let served = 0;
  const url = await listen(async (req, res) => {
    const form = new URLSearchParams((await body(req)).toString());
    const [header, claims, signature] = (form.get("assertion") ?? "").split(".");
    const valid = form.get("grant_type") === "urn:ietf:params:oauth:grant-type:jwt-bearer" && signature !== undefined &&
      verify("RSA-SHA256", Buffer.from(`${header}.${claims}`), publicKey, Buffer.from(signature, "base64url"));
    served += 1;
    res.writeHead(valid ? 200 : 400, { "content-type": "application/json" });
    res.end(JSON.stringify(valid ? { access_token: `tok-${served}`, expires_in: 3599, token_type: "Bearer" }
      : { error: "invalid_grant", error_description: "Invalid JWT Signature." }));
  });
  return { url: `${url}/token`, served: () => served };
}

const noGcs = !gcs && "needs fake-gcs-server (scripts/test.sh)";
const noAzure = !azure && "needs Azurite (scripts/test.sh)";
const bucket = () => `${gcs.bucket}-node`;

test("gcsStore: a service account's token is fetched once, signed by WebCrypto, and sent on every request",
  { skip: noGcs }, async () => {
    const key = fixture("gcs-service-account.json");
    const endpoint = await tokenEndpoint(key);
    const proxy = await recordingProxy();
    const store = lib.gcsStore({ endpoint: proxy.url, bucket: bucket(), prefix: freshPrefix("node-sa"),
      credentials: JSON.stringify({ ...key, token_uri: endpoint.url }) });
    const db = new lib.Fencepost(store);
    assert.equal((await db.claim("tick", "a")).won, true);
    assert.equal((await db.claim("tick", "b")).won, false);
    assert.equal(endpoint.served(), 1);
    assert.ok(proxy.seen.length >= 3 && proxy.seen.every((h) => h === "Bearer tok-1"), proxy.seen.join(", "));
  });

test("gcsStore: a key the token endpoint refuses is a StorageError naming invalid_grant, with no secret",
  { skip: noGcs }, async () => {
    const endpoint = await tokenEndpoint(fixture("gcs-service-account.json"));
    const stranger = fixture("gcs-service-account-unregistered.json");
    const db = new lib.Fencepost(lib.gcsStore({ ...gcs, bucket: bucket(), prefix: freshPrefix("node-sa"),
      credentials: { ...stranger, token_uri: endpoint.url } }), { retry: { maxAttempts: 2 } });
    const e = await db.claim("tick", 1).then(() => assert.fail("claimed"), (e) => e);
    assert.ok(e instanceof lib.StorageError, String(e));
    assert.equal(e.s3Code, "invalid_grant");
    assert.equal(e.status, 400);
    assert.doesNotMatch(`${e.message} ${e.stack}`, /PRIVATE KEY|assertion=/);
  });

test("gcsStore: accessToken and getAccessToken() authorize each request; a failing getAccessToken is typed",
  { skip: noGcs }, async () => {
    const proxy = await recordingProxy();
    const fixed = new lib.Fencepost(lib.gcsStore({ endpoint: proxy.url, bucket: bucket(), prefix: freshPrefix("node-t"),
      accessToken: "ya29.fixed" }));
    await fixed.claim("k", 1);
    let asked = 0;
    const fresh = new lib.Fencepost(lib.gcsStore({ endpoint: proxy.url, bucket: bucket(), prefix: freshPrefix("node-t"),
      getAccessToken: async () => `ya29.call-${++asked}` }));
    await fresh.claim("k", 1);
    await fresh.claim("k", 2);
    assert.ok(asked >= 2, `asked ${asked} times`);
    assert.ok(proxy.seen.includes("Bearer ya29.fixed") && proxy.seen.includes("Bearer ya29.call-1"), proxy.seen.join(", "));
    const failing = new lib.Fencepost(lib.gcsStore({ ...gcs, bucket: bucket(), getAccessToken: () => {
      throw new Error("no metadata server");
    } }));
    const e = await failing.claim("k", 1).then(() => assert.fail("claimed"), (e) => e);
    assert.ok(e instanceof lib.StorageError && e.s3Code === "TokenFailed", String(e));
    assert.match(e.message, /no metadata server/);
  });

test("gcsStore: option mistakes are InvalidArgument before any request", () => {
  assert.throws(() => lib.gcsStore({ bucket: "b", credentials: "{not json" }), lib.InvalidArgument);
  assert.throws(() => lib.gcsStore({ bucket: "b", credentials: { client_email: "x" } }), /private_key/);
  assert.throws(() => lib.gcsStore({ bucket: "b", bukcet: "c" }), /bukcet/);
  assert.throws(() => lib.gcsStore({ bucket: "bucket", accessToken: "t", getAccessToken: () => "u" }),
    /one of accessToken, getAccessToken and credentials/);
});

test("azureStore: a wrong account key is a typed 403 naming Azure's code, with no secret", { skip: noAzure }, async () => {
  const wrongKey = Buffer.from("a wrong key that is long enough to look real").toString("base64");
  const db = new lib.Fencepost(lib.azureStore({ ...azure, accountKey: wrongKey, prefix: freshPrefix("node-az") }));
  const e = await db.claim("k", 1).then(() => assert.fail("claimed"), (e) => e);
  assert.ok(e instanceof lib.StorageError, String(e));
  assert.ok(["AuthenticationFailed", "AuthorizationFailure"].includes(e.s3Code), e.s3Code);
  assert.equal(e.status, 403);
  assert.ok(!`${e.message} ${e.stack}`.includes(wrongKey));
});

test("azureStore: a container SAS token works in place of the key", { skip: noAzure }, async () => {
  // A service SAS for the container (read, add, create, write, delete, list), signed with the key.
  const expiry = new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, "Z");
  const fields = ["racwdl", "", expiry, `/blob/${azure.account}/${azure.container}`, "", "", "", "2021-08-06", "c",
    "", "", "", "", "", "", ""];
  const sig = createHmac("sha256", Buffer.from(azure.accountKey, "base64")).update(fields.join("\n")).digest("base64");
  const sas = new URLSearchParams({ sp: "racwdl", se: expiry, sv: "2021-08-06", sr: "c", sig }).toString();
  const { accountKey: _, ...rest } = azure;
  const db = new lib.Fencepost(lib.azureStore({ ...rest, sasToken: `?${sas}`, prefix: freshPrefix("node-sas") }));
  assert.equal((await db.claim("tick", "a")).won, true);
  assert.equal((await db.claim("tick", "b")).value, "a");
  const bad = new lib.Fencepost(lib.azureStore({ ...rest, sasToken: sas.replace(/sig=[^&]+/, "sig=AAAA"),
    prefix: freshPrefix("node-sas") }));
  const e = await bad.claim("tick", 1).then(() => assert.fail("claimed"), (e) => e);
  assert.equal(e.status, 403);
  assert.ok(!e.message.includes("sig="), e.message);
});

test("no store follows a redirect: the credentials stay with the endpoint, and a 3xx is a StorageError", async () => {
  let elsewhere = 0;
  const other = await listen((req, res) => {
    elsewhere++;
    res.writeHead(404).end();
  });
  const redirecting = await listen((req, res) => res.writeHead(307, { location: `${other}${req.url}` }).end());
  const retry = { maxAttempts: 1 };
  const stores = {
    s3: lib.s3Store({ endpoint: redirecting, bucket: "box", region: "us-east-1", accessKeyId: "AKIDEXAMPLE",
      secretAccessKey: "a-secret-key-of-forty-characters-or-so00", sessionToken: "a-session-token-to-keep-home" }),
    azure: lib.azureStore({ account: "acct", container: "box", endpoint: `${redirecting}/acct`,
      sasToken: "sv=2022-11-02&sp=rwdl&sig=a%2Bsecret%2Fsignature%3D" }),
    gcs: lib.gcsStore({ endpoint: redirecting, bucket: "box", accessToken: "ya29.a-token-to-keep-home" }),
  };
  for (const [name, store] of Object.entries(stores)) {
    const db = new lib.Fencepost(store, { retry });
    const e = await db.objects.get("k").then((got) => assert.fail(`${name} read ${got}`), (err) => err);
    assert.ok(e instanceof lib.StorageError && e.status === 307, `${name}: ${e}`);
  }
  assert.equal(elsewhere, 0, "nothing reached the host the redirect named");
});

test("gcsStore: a getAccessToken that never settles fails each attempt after the timeout", async () => {
  const never = await listen((req, res) => res.writeHead(500).end());
  const db = new lib.Fencepost(lib.gcsStore({ endpoint: never, bucket: "box", timeout: 0.2, getAccessToken: () => new Promise(() => {}) }),
    { retry: { maxAttempts: 2, baseDelay: 0.01, maxDelay: 0.01 } });
  const t0 = Date.now();
  const e = await db.objects.get("k").then(() => assert.fail("read"), (err) => err);
  assert.ok(e instanceof lib.StorageError, String(e));
  assert.match(e.message, /the access token function gave no token within 0\.2 s/);
  assert.ok(Date.now() - t0 < 5_000, `bounded: ${Date.now() - t0} ms`);
});

test("azureStore: a SAS signature echoed back on its own is redacted: decoded, and as sent", async () => {
  const forms = {
    decoded: (/** @type {string} */ url) => new URL(url, "http://x").searchParams.get("sig"), // a+secret/signature=
    "as sent": (/** @type {string} */ url) => /sig=([^&]+)/.exec(url)[1],
  };
  for (const [form, echoed] of Object.entries(forms)) {
    let sent = "";
    const echo = await listen(async (req, res) => {
      sent = echoed(req.url);
      res.writeHead(403, { "content-type": "application/xml" })
        .end(`<?xml version="1.0"?><Error><Code>AuthenticationFailed</Code><Message>Signature ${sent} did not match</Message></Error>`);
    });
    const db = new lib.Fencepost(lib.azureStore({ account: "acct", container: "box", endpoint: `${echo}/acct`,
      sasToken: "sv=2022-11-02&sp=rwdl&sig=a%2Bsecret%2Fsignature%3D" }));
    const e = await db.objects.get("k").then(() => assert.fail("read"), (err) => err);
    assert.ok(e instanceof lib.StorageError && e.status === 403, String(e));
    assert.ok(sent.length > 10 && !e.message.includes(sent) && !String(e.stack).includes(sent) && e.message.includes("[redacted]"), `${form}: ${e.message}`);
  }
});
