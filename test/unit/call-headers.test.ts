import { describe, expect, it } from "vitest";
import { CallHeaders } from "../../src/rpc/unary/call-headers.js";

/** A unary call's headers (rpc/unary/call-headers.ts) behave as fetch's Headers where callers can tell. */
describe("CallHeaders", () => {
  it("reads names in any case, combines appended values and replaces on set, as fetch's Headers", () => {
    const ours = new CallHeaders({ "Content-Type": "application/json" });
    const theirs = new Headers({ "Content-Type": "application/json" });
    for (const h of [ours, theirs]) {
      h.append("X-Trace", "a");
      h.append("x-trace", " b\t");
      h.set("Retry-After", "2");
      h.delete("RETRY-after");
      h.set("www-authenticate", "Bearer");
    }
    for (const name of ["content-type", "CONTENT-TYPE", "x-trace", "retry-after", "www-authenticate", "absent"]) {
      expect(ours.get(name)).toBe(theirs.get(name));
      expect(ours.has(name)).toBe(theirs.has(name));
    }
    expect(ours.get("x-trace")).toBe("a, b");
    expect(Object.fromEntries(ours)).toEqual(Object.fromEntries(theirs));
    expect(new Headers(ours).get("x-trace")).toBe("a, b");
  });

  it("keeps Set-Cookie values apart when iterated, and combined when read", () => {
    const h = new CallHeaders();
    h.append("Set-Cookie", "a=1");
    h.append("set-cookie", "b=2");
    expect(h.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(h.get("set-cookie")).toBe("a=1, b=2");
    const seen: [string, string][] = [];
    h.forEach((value, key) => seen.push([key, value]));
    expect(seen).toEqual([
      ["set-cookie", "a=1"],
      ["set-cookie", "b=2"],
    ]);
    expect([...h.entries()]).toEqual(seen);
    expect([...h.keys()]).toEqual(["set-cookie", "set-cookie"]);
    h.set("set-cookie", "c=3");
    expect(h.getSetCookie()).toEqual(["c=3"]);
  });

  it("refuses what fetch refuses: a name that is no token, a value with NUL, CR, LF or a character above U+00FF", () => {
    const h = new CallHeaders();
    expect(() => h.set("bad name", "x")).toThrow(TypeError);
    expect(() => h.append("", "x")).toThrow(TypeError);
    expect(() => h.get("bad:name")).toThrow(TypeError);
    expect(() => h.set("x-ok", "line\r\nInjected: yes")).toThrow(TypeError);
    expect(() => h.set("x-ok", "nul\0")).toThrow(TypeError);
    expect(() => h.set("x-ok", "caf\u00e9")).not.toThrow();
    expect(() => h.set("x-ok", "\u20ac")).toThrow(TypeError);
    expect(() => new Headers().set("x-ok", "\u20ac")).toThrow(TypeError);
    h.delete("x-ok");
    expect(() => new Headers().set("x-ok", "line\r\nInjected: yes")).toThrow(TypeError);
    expect([...h]).toEqual([]);
  });

  it("takes a request's headers as Node parsed them, without its pseudo-headers", () => {
    const h = CallHeaders.fromIncoming({
      ":authority": "localhost",
      ":path": "/x",
      "content-type": "application/grpc",
      "set-cookie": ["a=1", "b=2"],
      te: "trailers",
    });
    expect(Object.fromEntries(h)).toEqual({ "content-type": "application/grpc", "set-cookie": "b=2", te: "trailers" });
    expect(h.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect([...h.keys()]).toEqual(["content-type", "set-cookie", "set-cookie", "te"]);
  });
});
