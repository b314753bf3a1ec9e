#!/usr/bin/env node
// Serves the repository root on 127.0.0.1 (the playground imports the installed package from
// /node_modules/fencepost) and prints the playground's URL. `npm run playground`.
//
//   node js/playground/serve.mjs [--port N]     default: an ephemeral port (PORT also works)
//
// Only files of the repository, nothing under a dot-directory (.git, .run), GET and HEAD only.
import { createServer } from "node:http";
import { createReadStream, existsSync, statSync } from "node:fs";
import { extname, join, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const ROOT = resolve(fileURLToPath(new URL("../../", import.meta.url)));
export const PAGE = "/js/playground/";

const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm",
  ".json": "application/json; charset=utf-8",
  ".png": "image/png",
  ".svg": "image/svg+xml",
};

/** Start the server; resolves to {server, origin, notFound} once it listens. */
export function startServer({ port = 0, root = ROOT } = {}) {
  const notFound = [];
  const server = createServer((req, res) => {
    const send = (status, body, headers = {}) => {
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", ...headers });
      res.end(req.method === "HEAD" ? undefined : body);
    };
    if (req.method !== "GET" && req.method !== "HEAD") return send(405, "method not allowed\n");
    let path;
    try {
      path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    } catch {
      return send(400, "bad path\n");
    }
    if (path === "/") return send(302, "", { location: PAGE });
    const segments = path.split("/").filter(Boolean);
    if (path.includes("\0") || segments.some((s) => s.startsWith("."))) return send(404, "not found\n");
    let file = resolve(root, ...segments);
    if (file !== root && !file.startsWith(root + sep)) return send(404, "not found\n");
    try {
      if (statSync(file).isDirectory()) {
        if (!path.endsWith("/")) return send(301, "", { location: `${path}/` }); // relative URLs in index.html
        file = join(file, "index.html");
      }
      const size = statSync(file).size;
      res.writeHead(200, { "content-type": MIME[extname(file)] ?? "application/octet-stream", "content-length": size, "cache-control": "no-store" });
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

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const i = process.argv.indexOf("--port");
  const port = Number(i > 0 ? process.argv[i + 1] : process.env.PORT ?? 0);
  if (!existsSync(join(ROOT, "node_modules", "fencepost", "browser.js"))) {
    console.error("node_modules/fencepost is missing: run `npm run build` first (it builds and installs the package)");
    process.exit(1);
  }
  const { server, origin } = await startServer({ port });
  console.log(`serving ${ROOT} on ${origin} (Ctrl-C stops)`);
  console.log(`open ${origin}${PAGE}`);
  console.log(`     ${origin}${PAGE}?autorun=1&workers=4&seed=1`);
  for (const sig of ["SIGINT", "SIGTERM"]) process.once(sig, () => stopServer(server).then(() => process.exit(0)));
}
