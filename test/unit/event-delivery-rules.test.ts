import { describe, expect, it } from "vitest";
import { nextAttempt, retryDelay } from "../../src/engines/queue/retry-schedule.js";
import { resourceOwnerOf, withoutSecrets } from "../../src/engines/actions/event-body.js";
import { eventCandidates, eventGroups } from "../../src/domain/action/execution/events.js";

describe("event execution matching", () => {
  it("tries the type, then its groups from the longest, then all", () => {
    expect(eventCandidates("user.human.added")).toEqual(["event/user.human.added", "event/user.human.*", "event/user.*", "event"]);
    expect(eventCandidates("user")).toEqual(["event/user", "event"]);
  });

  it("lists every dotted prefix as a group", () => {
    expect(eventGroups(["user.grant.added", "user.locked", "org.added"])).toEqual(["org", "user", "user.grant"]);
  });
});

describe("event delivery bodies", () => {
  it("leave out fields named like secrets at any depth, whatever their spelling", () => {
    const payload = { name: "n", clientSecret: "s", nested: { password_hash: "h", keep: 1, list: [{ private_key: "k", id: "i" }] }, hasPassword: true };
    expect(withoutSecrets(payload)).toEqual({ name: "n", nested: { keep: 1, list: [{ id: "i" }] }, hasPassword: true });
  });

  it("name the organization that owns the aggregate", () => {
    expect(resourceOwnerOf("org", "o1", "i1", {})).toBe("o1");
    expect(resourceOwnerOf("user", "u1", "i1", { orgId: "o2" })).toBe("o2");
    expect(resourceOwnerOf("instance", "i1", "i1", { name: "x" })).toBe("i1");
  });
});

describe("retries", () => {
  it("double the pause up to an hour, cut by up to half at random", () => {
    expect(retryDelay(1, 1)).toBe(1000);
    expect(retryDelay(1, 0)).toBe(500);
    expect(retryDelay(3, 1)).toBe(4000);
    expect(retryDelay(40, 1)).toBe(3_600_000);
  });

  it("stop when the next attempt would fall past the maximum age", () => {
    const start = new Date(0);
    expect(nextAttempt(1, start, 10_000, 1000)).toBeInstanceOf(Date);
    expect(nextAttempt(6, start, 10_000, 1000)).toBeUndefined();
  });
});
