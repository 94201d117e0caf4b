import { describe, expect, it } from "vitest";
import { onwardPath } from "../../src/oidc/login/kit/code-links.js";

describe("where a reset or invitation page leads once the password is set", () => {
  it("leads to the console's pages on this origin", () => {
    for (const path of ["/ui/console/", "/ui/console/organizations/01a2?tab=domains", "/ui/console/users/x%20y"]) expect(onwardPath(path)).toBe(path);
  });

  it("leads nowhere else: other sites, other pages, ways out of the console", () => {
    for (const path of [
      undefined,
      null,
      "",
      "https://evil.example/ui/console/",
      "//evil.example/ui/console/",
      "/ui/console//evil.example",
      "/ui/console/\\evil.example",
      "/ui/console/../login/",
      "/ui/login/",
      "/ui/console",
      "javascript:alert(1)",
      "/ui/console/<script>",
      "/ui/console/a\nb",
      `/ui/console/${"a".repeat(500)}`,
    ]) {
      expect(onwardPath(path), String(path)).toBeUndefined();
    }
  });
});
