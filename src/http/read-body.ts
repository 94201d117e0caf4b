import { Code, ConnectError } from "@connectrpc/connect";
import type { NodeRequest } from "./respond.js";

/** The body, or how large it grew past `limit` (reading stops there) and whether the caller declared that size. */
export function readBody(req: NodeRequest, limit: number): Promise<Uint8Array | { tooLarge: number; declared: boolean }> {
  const declared = Number(req.headers["content-length"]);
  if (declared > limit) {
    req.resume();
    return Promise.resolve({ tooLarge: declared, declared: true });
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.resume();
        resolve({ tooLarge: size, declared: false });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(new ConnectError("the caller went away", Code.Canceled, undefined, undefined, error));
    };
    const onAborted = () => onError(new Error("aborted"));
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("aborted", onAborted);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("aborted", onAborted);
  });
}
