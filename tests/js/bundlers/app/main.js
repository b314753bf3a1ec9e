// The page's entry for Vite, Rollup, webpack and esbuild with the `.wasm` copied next to the bundle:
// nothing to set up, the package finds its `.wasm` on the first call.
import { runPage } from "./page.js";

runPage();
