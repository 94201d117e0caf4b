import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Each file starts its own server and database; two cores run two at a time.
    pool: "forks",
    // Some suites start the built service as its own process, as npm start does.
    globalSetup: ["test/support/build.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
