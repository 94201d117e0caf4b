/**
 * The floors of src/ (docs/architecture.md, "The floors"), checked by `npm run check:imports`
 * in CI. Each rule names a boundary that closing the domain (issue 37) drew.
 */
const BOTTOM = "^src/(store|crypto|cache|http|log|dns|types)/";
const ENGINES = "^src/(engines|upstream-idps|org-domain-checks)/";
const WAYS_IN = "^src/(rpc|gateway|oidc|server|cli|telemetry)/|^src/main\\.ts$";

module.exports = {
  forbidden: [
    {
      name: "domain-below-engines-pages-and-rpc",
      comment:
        "domain/ holds every rule and is called by the engines (engines/, upstream-idps/, org-domain-checks/), the login pages (oidc/) and the RPC layer, never the reverse: it may use only the floor below it.",
      severity: "error",
      from: { path: "^src/domain/" },
      to: { path: "^src/", pathNot: `^src/domain/|${BOTTOM}` },
    },
    {
      name: "engines-below-the-ways-in",
      comment:
        "The engines deliver what the domain recorded and the outbound clients call the world for it; the RPC layer, the gateway, the provider and the server call them, never the reverse.",
      severity: "error",
      from: { path: ENGINES },
      to: { path: WAYS_IN },
    },
    {
      name: "bottom-floor-stays-below",
      comment: "What the domain stands on (the store, crypto, caches, HTTP helpers, the log) knows nothing of the floors above it.",
      severity: "error",
      from: { path: BOTTOM },
      to: { path: "^src/", pathNot: BOTTOM },
    },
    {
      name: "no-circular",
      comment: "An import circle ties modules into one that must change together: split out what both need.",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".tsx", ".js"] },
  },
};
