import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Each file starts its own server and database. The files wait on PostgreSQL, sockets and
    // timers about a third of the time: one worker more than there are cores keeps them busy
    // (vitest's default, one fewer, runs one file at a time on two cores). TEST_WORKERS overrides.
    pool: "forks",
    maxWorkers: Number(process.env.TEST_WORKERS) || availableParallelism() + 1,
    // The files of a worker share its loaded (and JIT-warmed) modules: no file changes
    // globals, and each starts and closes its own services. About 40% less CPU than
    // re-importing the service for every file (docs/testing.md).
    isolate: false,
    // Some suites start the built service as its own process, as npm start does; PGlite
    // databases start from one migrated image, PostgreSQL ones are copies of one migrated
    // database.
    globalSetup: ["test/support/build.ts", "test/support/pglite-seed.ts", "test/support/postgres-template.ts"],
    // TEST_CPU_LOG=<file>: each file's CPU, one JSON line per file (docs/testing.md).
    setupFiles: process.env.TEST_CPU_LOG ? ["test/support/cpu-log.ts"] : [],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
