import { createHmac, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";

/**
 * The signature check the README gives receivers (action targets, `http` notification
 * providers), taken from README.md itself: what users copy is what is tested.
 */
export function readmeVerify(): (header: string, body: string, key: string) => boolean {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const block = /```js\n(import \{ createHmac, timingSafeEqual \} from "node:crypto";[\s\S]*?function verify\([\s\S]*?)```/.exec(readme);
  if (!block) throw new Error("README.md has no js block with the verify function");
  const source = block[1]!.replace(/^import .*$/m, "");
  return new Function("createHmac", "timingSafeEqual", "Buffer", `${source}\nreturn verify;`)(createHmac, timingSafeEqual, Buffer) as never;
}
