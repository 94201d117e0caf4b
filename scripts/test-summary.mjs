// Prints vitest's JSON results as the plain closing line CI reads: "N passed, N failed".
import { readFileSync } from "node:fs";

const results = JSON.parse(readFileSync(process.argv[2], "utf8"));
const failed = results.numFailedTests + (results.numFailedTestSuites ?? 0);
const skipped = results.numPendingTests + (results.numTodoTests ?? 0);
console.log(`${results.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
