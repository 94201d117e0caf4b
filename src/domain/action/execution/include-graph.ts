import { failedPrecondition } from "../../errors.js";
import { MAX_INCLUDE_DEPTH } from "./model.js";

type Graph = ReadonlyMap<string, readonly string[]>;

/**
 * Checks the include graph after `changed` got new includes. The graph was acyclic and
 * within the depth limit before, so only chains through `changed` can break either rule:
 * a cycle must pass through it, and the deepest new chain is the longest path above it
 * plus the longest path below it.
 */
export function checkIncludeGraph(graph: Graph, changed: string): void {
  const cycle = pathTo(graph, changed, changed);
  if (cycle) throw failedPrecondition(`includes form a cycle: ${[changed, ...cycle].join(" -> ")}`);
  const levels = longest(graph, changed) + longest(reverse(graph), changed);
  if (levels > MAX_INCLUDE_DEPTH) {
    throw failedPrecondition(`includes through ${changed} would nest ${levels} levels, deeper than ${MAX_INCLUDE_DEPTH}`);
  }
}

/** A path of includes from `from` (exclusive) to `to`, or undefined. */
function pathTo(graph: Graph, from: string, to: string, seen = new Set<string>()): string[] | undefined {
  for (const next of graph.get(from) ?? []) {
    if (next === to) return [next];
    if (seen.has(next)) continue;
    seen.add(next);
    const rest = pathTo(graph, next, to, seen);
    if (rest) return [next, ...rest];
  }
  return undefined;
}

function longest(graph: Graph, from: string, memo = new Map<string, number>()): number {
  const known = memo.get(from);
  if (known !== undefined) return known;
  let deepest = 0;
  for (const next of graph.get(from) ?? []) deepest = Math.max(deepest, 1 + longest(graph, next, memo));
  memo.set(from, deepest);
  return deepest;
}

function reverse(graph: Graph): Graph {
  const parents = new Map<string, string[]>();
  for (const [parent, children] of graph) {
    for (const child of children) parents.set(child, [...(parents.get(child) ?? []), parent]);
  }
  return parents;
}
