import { failedPrecondition } from "../../errors.js";
import { MAX_INCLUDE_DEPTH } from "./model.js";

/**
 * Rejects an include graph where `changed` takes part in a cycle or where any chain of
 * includes through `changed` nests deeper than MAX_INCLUDE_DEPTH.
 */
export function checkIncludeGraph(graph: ReadonlyMap<string, readonly string[]>, changed: string): void {
  const depthBelow = new Map<string, number>();
  const visiting = new Set<string>();
  const depth = (id: string, path: string[]): number => {
    const known = depthBelow.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) {
      throw failedPrecondition(`includes form a cycle: ${[...path, id].join(" -> ")}`);
    }
    visiting.add(id);
    let deepest = 0;
    for (const child of graph.get(id) ?? []) deepest = Math.max(deepest, 1 + depth(child, [...path, id]));
    visiting.delete(id);
    depthBelow.set(id, deepest);
    return deepest;
  };
  for (const id of graph.keys()) {
    if (depth(id, []) > MAX_INCLUDE_DEPTH && reaches(graph, id, changed)) {
      throw failedPrecondition(`includes of ${id} would nest deeper than ${MAX_INCLUDE_DEPTH} levels`);
    }
  }
}

function reaches(graph: ReadonlyMap<string, readonly string[]>, from: string, to: string): boolean {
  const seen = new Set<string>();
  const stack = [from];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (id === to) return true;
    if (seen.has(id)) continue;
    seen.add(id);
    stack.push(...(graph.get(id) ?? []));
  }
  return false;
}
