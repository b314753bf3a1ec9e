#!/usr/bin/env node
// Serves the repository root on 127.0.0.1 (the playground imports the installed package from
// /node_modules/fencepost) and prints the playground's URL. `npm run playground`.
//
//   node js/playground/serve.mjs [--port N]     default: an ephemeral port (PORT also works)
//
// Only files of the repository, nothing under a dot-directory (.git, .run), GET and HEAD only.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startServer as serveFolder, stopServer } from "../../scripts/static-server.mjs";

export const ROOT = resolve(fileURLToPath(new URL("../../", import.meta.url)));
export const PAGE = "/js/playground/";

/** Serve the repository root ("/" opens the playground). */
export function startServer({ port = 0, root = ROOT } = {}) {
  return serveFolder({ root, port, index: PAGE });
}

export { stopServer };

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const i = process.argv.indexOf("--port");
  const port = Number(i > 0 ? process.argv[i + 1] : process.env.PORT ?? 0);
  if (!existsSync(join(ROOT, "node_modules", "fencepost", "dist", "browser.js"))) {
    console.error("node_modules/fencepost is missing: run `npm run build` first (it builds and installs the package)");
    process.exit(1);
  }
  const { server, origin } = await startServer({ port });
  console.log(`serving ${ROOT} on ${origin} (Ctrl-C stops)`);
  console.log(`open ${origin}${PAGE}`);
  console.log(`     ${origin}${PAGE}?autorun=1&workers=4&seed=1`);
  for (const sig of ["SIGINT", "SIGTERM"]) process.once(sig, () => stopServer(server).then(() => process.exit(0)));
}
