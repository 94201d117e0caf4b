/**
 * Summarizes a V8 .cpuprofile (written by the service under `BENCH_CPU_PROFILE`): where the
 * busy time went, as self time by area (our folders, each package, Node's internals, GC) and
 * as self and inclusive time by function. Idle time is left out of every share.
 *
 *   node dist/bench/profile-summary.js <file.cpuprofile> [--top N] [--last S]
 *
 * `--last S` keeps only the last S seconds of the profile: the measured run of a single
 * scenario, without the start-up and seeding before it.
 */
import { readFileSync } from "node:fs";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** `src/rpc`, `@connectrpc/connect`, `node:internal/http2`, `(garbage collector)`: where a frame's code lives. */
function areaOf(frame: CallFrame): string {
  const url = frame.url;
  if (!url) return frame.functionName.startsWith("(") ? frame.functionName : "(native)";
  const modules = url.lastIndexOf("/node_modules/");
  if (modules >= 0) {
    const parts = url.slice(modules + "/node_modules/".length).split("/");
    return parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  if (url.startsWith("node:")) return url.split("/").slice(0, 2).join("/");
  const src = url.lastIndexOf("/dist/src/");
  if (src >= 0) {
    const parts = url.slice(src + "/dist/src/".length).split("/");
    return `src/${parts.length > 1 ? parts[0] : parts[0]!.replace(/\.js$/, "")}`;
  }
  return url.replace(/^file:\/\//, "");
}

function keyOf(frame: CallFrame): string {
  const file = frame.url.replace(/^.*\/(node_modules|dist)\//, "").replace(/^file:\/\//, "");
  return `${frame.functionName || "(anonymous)"} ${file ? `${file}:${frame.lineNumber + 1}` : ""}`.trim();
}

function summarize(profile: Profile, top: number, lastMs: number): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));

  const total = profile.timeDeltas.reduce((a, b) => a + b, 0);
  const from = total - lastMs * 1000;
  const self = new Map<number, number>();
  let busy = 0;
  let at = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    at += dt;
    if (idle.has(id) || at < from) return;
    self.set(id, (self.get(id) ?? 0) + dt);
    busy += dt;
  });

  const add = (map: Map<string, number>, key: string, dt: number) => map.set(key, (map.get(key) ?? 0) + dt);
  const selfByArea = new Map<string, number>();
  const selfByFunction = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const stackKeys = new Map<number, Set<string>>();
  const keysOf = (id: number): Set<string> => {
    let keys = stackKeys.get(id);
    if (keys) return keys;
    const up = parent.get(id);
    keys = new Set(up === undefined ? [] : keysOf(up));
    keys.add(keyOf(byId.get(id)!.callFrame));
    stackKeys.set(id, keys);
    return keys;
  };
  for (const [id, dt] of self) {
    const frame = byId.get(id)!.callFrame;
    add(selfByArea, areaOf(frame), dt);
    add(selfByFunction, keyOf(frame), dt);
    for (const key of keysOf(id)) add(inclusive, key, dt);
  }

  const table = (title: string, map: Map<string, number>, n: number) => {
    const rows = [...map].sort((a, b) => b[1] - a[1]).slice(0, n);
    return [
      `| ${title} | ms | share of busy |`,
      "|---|---:|---:|",
      ...rows.map(([k, v]) => `| \`${k}\` | ${(v / 1000).toFixed(0)} | ${((100 * v) / busy).toFixed(1)} % |`),
    ].join("\n");
  };
  return [
    `Busy ${(busy / 1000).toFixed(0)} ms of ${(Math.min(total, lastMs * 1000) / 1000).toFixed(0)} ms sampled.`,
    "",
    table("self time by area", selfByArea, top),
    "",
    table("self time by function", selfByFunction, top),
    "",
    table("inclusive time by function", inclusive, top * 2),
    "",
  ].join("\n");
}

const args = process.argv.slice(2);
const file = args.find((a, i) => !a.startsWith("--") && !["--top", "--last"].includes(args[i - 1] ?? ""));
const topIndex = args.indexOf("--top");
const top = topIndex >= 0 ? Number(args[topIndex + 1]) : 25;
const lastIndex = args.indexOf("--last");
const lastMs = lastIndex >= 0 ? Number(args[lastIndex + 1]) * 1000 : Infinity;
if (!file) {
  process.stderr.write("usage: node dist/bench/profile-summary.js <file.cpuprofile> [--top N] [--last S]\n");
  process.exitCode = 2;
} else {
  process.stdout.write(summarize(JSON.parse(readFileSync(file, "utf8")) as Profile, top, lastMs));
}
