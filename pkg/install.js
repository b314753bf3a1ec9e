// Called once by each entry file, right after its runtime instantiated the wasm module: hands the
// JS error classes to the Rust side so every rejection is an `instanceof`-able FencepostError.
import { installErrorClasses } from "./fencepost.js";
import * as errors from "./errors.js";

export function install() {
  installErrorClasses(errors);
}
