// The few host calls that are cheaper written in JS than made piecemeal across the wasm boundary
// (declared in src/js.rs; wasm-bindgen ships this file in the package's snippets/). No logic lives
// here: what the headers are, what a response or a settled value means, is the Rust side's.

/**
 * Call `callback(true, value)` or `callback(false, reason)` when `value` (a Promise, a thenable or
 * a plain value) settles: one callback where awaiting a Promise from Rust otherwise takes two.
 */
export function onSettled(value, callback) {
  Promise.resolve(value).then(
    (v) => callback(true, v),
    (e) => callback(false, e),
  );
}

// The S3 store's fetch transport: a request's headers arrive as one "name:value\n" text and a
// response's leave as one, instead of one crossing (and one string copy) per name and per value —
// about a dozen headers each way on every S3 request.

/**
 * `fetch(url, {method, headers, body, signal})`, headers given as "name:value\n" lines. Redirects
 * are not followed: a request is signed for its endpoint, and the credentials it carries (a SAS in
 * the URL, a session token) must not go to another host, nor its answer be taken for the store's.
 * The 3xx (a browser's opaque redirect, status 0) is a storage error.
 */
export function fetchWithHeaderText(url, method, headerText, body, signal) {
  const headers = [];
  for (const line of headerText.split("\n")) {
    if (line === "") continue;
    const colon = line.indexOf(":");
    headers.push([line.slice(0, colon), line.slice(colon + 1)]);
  }
  /** @type {RequestInit} */
  const init = { method, headers, redirect: "manual" };
  if (body !== undefined) init.body = body;
  if (signal !== undefined) init.signal = signal;
  return fetch(url, init);
}

/** A response's headers as "name:value\n" lines (names as the host gives them: lowercase). */
export function responseHeaderText(response) {
  let text = "";
  for (const [name, value] of response.headers) text += `${name}:${value}\n`;
  return text;
}
