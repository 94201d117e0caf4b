import optimizeLocales from "@react-aria/optimize-locales-plugin";
import react from "@vitejs/plugin-react";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

/**
 * The console's build (scripts/build-if-changed.mjs runs it at `npm start` when a source
 * changed): hashed files under /ui/console/assets/, which the service caches for a year, and
 * an index.html that loads them with no inline script or style (the console's CSP allows
 * neither). Pages load on demand: the first page's JavaScript stays small.
 */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/ui/console/",
  // React Aria ships its built-in strings for 34 languages; the console speaks English.
  plugins: [react(), optimizeLocales.vite({ locales: ["en-US"] })],
  resolve: {
    alias: [{ find: /^@bufbuild\/protovalidate\/gen\/buf\/validate\/validate_pb\.js$/, replacement: fileURLToPath(new URL("src/api/validate-stub.ts", import.meta.url)) }],
  },
  build: {
    outDir: fileURLToPath(new URL("../dist/console", import.meta.url)),
    emptyOutDir: true,
    assetsDir: "assets",
    target: "es2022",
    // The polyfill would be an inline script.
    modulePreload: { polyfill: false },
    // Inlined assets would be data: URLs the CSP need not allow for scripts; keep everything a file.
    assetsInlineLimit: 0,
    // The first page's size is reported by scripts/build-if-changed.mjs (gzipped, against its 250 KB budget).
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1000,
  },
});
