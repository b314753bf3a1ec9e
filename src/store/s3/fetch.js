// The S3 store's fetch transport, JS side: a request's headers arrive from wasm as one
// "name:value\n" text and a response's leave as one, instead of one boundary crossing (and one
// string copy) per name and per value — about a dozen headers each way on every S3 request.
// No logic lives here: what the headers are, and what the response means, is the Rust side's.

/** `fetch(url, {method, headers, body, signal})`, headers given as "name:value\n" lines. */
export function fetchWithHeaderText(url, method, headerText, body, signal) {
  const headers = [];
  for (const line of headerText.split("\n")) {
    if (line === "") continue;
    const colon = line.indexOf(":");
    headers.push([line.slice(0, colon), line.slice(colon + 1)]);
  }
  /** @type {RequestInit} */
  const init = { method, headers };
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
