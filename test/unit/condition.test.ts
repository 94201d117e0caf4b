import { describe, expect, it } from "vitest";
import { conditionId, parseConditionId, type Condition } from "../../src/domain/action/execution/condition.js";
import { DomainError } from "../../src/domain/errors.js";

const METHOD = "/platform.resources.action.v3alpha.PlatformActions/GetTarget";
const SERVICE = "platform.resources.action.v3alpha.PlatformActions";

const CASES: [string, Condition][] = [
  [`request${METHOD}`, { type: "request", method: METHOD }],
  [`request/${SERVICE}`, { type: "request", service: SERVICE }],
  ["request", { type: "request", all: true }],
  [`response${METHOD}`, { type: "response", method: METHOD }],
  [`response/${SERVICE}`, { type: "response", service: SERVICE }],
  ["response", { type: "response", all: true }],
  ["function/preuserinfo", { type: "function", name: "preuserinfo" }],
  ["event/user.human.added", { type: "event", event: "user.human.added" }],
  ["event/user.human.*", { type: "event", group: "user.human" }],
  ["event", { type: "event", all: true }],
];

describe("execution condition ids", () => {
  it.each(CASES)("%s round-trips", (id, condition) => {
    expect(conditionId(condition)).toBe(id);
    expect(parseConditionId(id)).toEqual(condition);
    expect(conditionId(parseConditionId(id))).toBe(id);
  });

  it("gives every condition kind a distinct id", () => {
    expect(new Set(CASES.map(([, c]) => conditionId(c))).size).toBe(CASES.length);
  });

  it.each(["", "function", "function/", "unknown", "unknown/x", "Request", "requests/x", "/request", "events/x"])("rejects %j as an InvalidArgument", (id) => {
    let thrown: unknown;
    try {
      parseConditionId(id);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(DomainError);
    expect(thrown).toMatchObject({ kind: "invalid_argument", message: expect.stringContaining("not an execution id") });
  });
});
