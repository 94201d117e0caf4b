/**
 * The floors of src/ (docs/architecture.md, "The floors"), checked by `npm run check:imports`
 * in CI. Each rule names a boundary the issue of closing the domain drew; a rule is added
 * here when the code it forbids is gone.
 */
module.exports = {
  forbidden: [
    {
      name: "domain-below-engines-pages-and-rpc",
      comment:
        "domain/ holds every rule and is called by the engines (actions/, notifications/), the login pages (oidc/) and the RPC layer, never the reverse: it may use only the store, crypto, caches, the log and HTTP helpers below it.",
      severity: "error",
      from: { path: "^src/domain/" },
      to: { path: "^src/", pathNot: "^src/(domain|store|crypto|cache|log|http|types)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".tsx", ".js"] },
  },
};
