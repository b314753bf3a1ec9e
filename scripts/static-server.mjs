// The one static file server of the test tooling and the playground: serves a folder on 127.0.0.1
// (an ephemeral port unless told), GET and HEAD only, nothing under a dot-directory (.git, .run
// with its credentials, .tools), no path outside the folder. A directory serves its index.html
// (redirecting to the slash form first, so relative URLs in it resolve).
//
//   const { server, origin, notFound } = await startServer({ root, index: "/page/", routes });
//
// `index`: where "/" redirects; `routes`: {"/path": () => ({type, body}) | null} answered before
// files (null: 404). `notFound` collects every path answered 404.
import { createServer } from "node:http";
import { createReadStream, statSync } from "node:fs";
import { extname, join, resolve, sep } from "node:path";

export const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".png": "image/png",
  ".svg": "image/svg+xml",
};

/** Start serving `root`; resolves to {server, origin, notFound} once it listens. */
export function startServer({ root, port = 0, index = null, routes = {} }) {
  const base = resolve(root);
  const notFound = [];
  const server = createServer((req, res) => {
    const send = (status, body, headers = {}) => {
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff", ...headers });
      res.end(req.method === "HEAD" ? undefined : body);
    };
    if (req.method !== "GET" && req.method !== "HEAD") return send(405, "method not allowed\n");
    let path;
    try {
      path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    } catch {
      return send(400, "bad path\n");
    }
    if (path === "/" && index) return send(302, "", { location: index });
    if (Object.hasOwn(routes, path)) {
      const answer = routes[path]();
      return answer ? send(200, answer.body, { "content-type": answer.type }) : send(404, "not found\n");
    }
    const segments = path.split("/").filter(Boolean);
    if (path.includes("\0") || segments.some((s) => s.startsWith("."))) return send(404, "not found\n");
    let file = resolve(base, ...segments);
    if (file !== base && !file.startsWith(base + sep)) return send(404, "not found\n");
    try {
      if (statSync(file).isDirectory()) {
        if (!path.endsWith("/")) return send(301, "", { location: `${path}/` });
        file = join(file, "index.html");
      }
      const size = statSync(file).size;
      res.writeHead(200, {
        "content-type": MIME[extname(file)] ?? "application/octet-stream",
        "content-length": size,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      });
      if (req.method === "HEAD") return res.end();
      createReadStream(file).on("error", () => res.destroy()).pipe(res);
    } catch {
      notFound.push(path);
      send(404, "not found\n");
    }
  });
  return new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(port, "127.0.0.1", () => ok({ server, notFound, origin: `http://127.0.0.1:${server.address().port}` }));
  });
}

export function stopServer(server) {
  return new Promise((ok) => {
    server.close(() => ok());
    server.closeAllConnections?.();
  });
}
