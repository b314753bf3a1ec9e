// Node: the downlevelled `await using` test (compiled by tsc into .run/ by scripts/test.sh).
import * as lib from "fencepost";
import { awaitUsingReleases } from "./await-using.js";
await awaitUsingReleases(lib);
console.log("1 passed, 0 failed");
