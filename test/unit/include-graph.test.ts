import { describe, expect, it } from "vitest";
import { checkIncludeGraph } from "../../src/domain/action/execution/include-graph.js";
import { MAX_INCLUDE_DEPTH } from "../../src/domain/action/execution/model.js";

/** "a>b>c" is a chain of includes: a includes b, b includes c. */
function graph(...chains: string[]): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const chain of chains) {
    const ids = chain.split(">");
    for (let i = 0; i + 1 < ids.length; i++) g.set(ids[i]!, [...(g.get(ids[i]!) ?? []), ids[i + 1]!]);
  }
  return g;
}

const check = (g: Map<string, string[]>, changed: string) => () => checkIncludeGraph(g, changed);
const failed = (message: RegExp) => expect.objectContaining({ kind: "failed_precondition", message: expect.stringMatching(message) });

describe("checkIncludeGraph", () => {
  it("allows three levels", () => {
    expect(MAX_INCLUDE_DEPTH).toBe(3);
    const g = graph("a>b>c>d");
    for (const id of ["a", "b", "c", "d"]) expect(check(g, id)).not.toThrow();
  });

  it("rejects four levels wherever the change sits on the chain", () => {
    const g = graph("a>b>c>d>e");
    for (const id of ["a", "b", "c", "d", "e"]) expect(check(g, id), id).toThrow(failed(/deeper than 3/));
  });

  it("rejects four levels reached through a branch", () => {
    expect(check(graph("a>b>c>d", "x>a"), "x")).toThrow(failed(/deeper/));
  });

  it("rejects a cycle and names it", () => {
    expect(check(graph("a>b>a"), "a")).toThrow(failed(/cycle: .*a -> b -> a|cycle: .*b -> a -> b/));
    expect(check(graph("a>b>c>a"), "c")).toThrow(failed(/cycle/));
  });

  it("rejects a self-include", () => {
    expect(check(graph("a>a"), "a")).toThrow(failed(/cycle/));
  });

  it("does not blame a change elsewhere for an unrelated deep chain", () => {
    const g = graph("p>q>r>s>t", "x>y");
    expect(check(g, "x")).not.toThrow();
    expect(check(g, "y")).not.toThrow();
  });

  it("does not blame a change for a deep chain that only shares an ancestor with it", () => {
    // a includes b and c; the deep chain goes through c. Every chain through b is a > b: one level.
    expect(check(graph("a>b", "a>c>d>e>f"), "b")).not.toThrow();
  });

  it("accepts diamonds and empty graphs", () => {
    expect(check(graph("a>b>d", "a>c>d"), "a")).not.toThrow();
    expect(check(new Map(), "a")).not.toThrow();
  });
});
