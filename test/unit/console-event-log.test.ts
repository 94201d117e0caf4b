import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { followLog, retryDelay, type LiveState, type OpenStream } from "../../console/src/pages/events/follow.js";
import { comparePositions, followFrom, withoutRepeats } from "../../console/src/pages/events/positions.js";
import { EventSchema, type Event } from "../../gen/platform/resources/event/v3alpha/event_pb.js";
import { WatchEventsResponseSchema, type WatchEventsResponse } from "../../gen/platform/resources/event/v3alpha/event_service_pb.js";

/*
 * The console's event lists where they decide something without a browser: how a page
 * follows the log's stream (resuming after the last position it was told, a heartbeat's
 * too, waiting longer after each failure, stopping for good on a refusal), and how the
 * streamed events sit above the searched ones, each once.
 */

const event = (position: string, type = "project.added") => create(EventSchema, { position, type });
const answer = (position: string, e?: Event): WatchEventsResponse => create(WatchEventsResponseSchema, { position, ...(e && { event: e }) });

/** One scripted connection: its answers, then its end (undefined: the stream ends as the service's longest duration ends it). */
type Connection = { answers: WatchEventsResponse[]; then?: Error };

/**
 * A service that answers each connection by the script, recording the `after` each was
 * opened with; when the script runs out, the page is closed (the signal aborts).
 */
function scripted(connections: Connection[], abort: AbortController) {
  const opened: string[] = [];
  const open: OpenStream = (after) => {
    opened.push(after);
    const connection = connections.shift();
    return (async function* () {
      if (!connection) {
        abort.abort();
        return;
      }
      yield* connection.answers;
      if (connection.then) throw connection.then;
    })();
  };
  return { open, opened };
}

async function follow(connections: Connection[], from = "10.1") {
  const abort = new AbortController();
  const { open, opened } = scripted(connections, abort);
  const shown: string[] = [];
  const states: LiveState["state"][] = [];
  const waits: number[] = [];
  await followLog(open, from, abort.signal, { event: (e) => shown.push(e.position), state: (s) => states.push(s.state) }, async (ms) => void waits.push(ms));
  return { opened, shown, states, waits };
}

describe("followLog", () => {
  it("opens the stream again after the last position it was told, a heartbeat's too, and shows each event once", async () => {
    const { opened, shown, states, waits } = await follow([
      { answers: [answer("10.1"), answer("11.2", event("11.2")), answer("11.3", event("11.3"))] },
      // The service read further without a match: the next stream starts there, not at the last event.
      { answers: [answer("11.3"), answer("15.9")] },
      { answers: [answer("15.9"), answer("16.1", event("16.1"))] },
    ]);
    expect(opened).toEqual(["10.1", "11.3", "15.9", "16.1"]);
    expect(shown).toEqual(["11.2", "11.3", "16.1"]);
    expect(states).toEqual(["live", "live", "live"]);
    expect(waits).toEqual([]);
  });

  it("waits longer after each failure in a row, and an answer starts the count again", async () => {
    const cut = new ConnectError("connection reset", Code.Unavailable);
    const { opened, shown, states, waits } = await follow([
      { answers: [answer("10.1"), answer("12.1", event("12.1"))], then: cut },
      { answers: [], then: cut },
      // A stream that ends without a word is a failure too: no tight loop against a service that closes at once.
      { answers: [] },
      { answers: [answer("12.1"), answer("13.4", event("13.4"))], then: cut },
    ]);
    expect(opened).toEqual(["10.1", "12.1", "12.1", "12.1", "13.4"]);
    expect(shown).toEqual(["12.1", "13.4"]);
    expect(states).toEqual(["live", "retrying", "connecting", "retrying", "connecting", "retrying", "connecting", "live", "retrying", "connecting"]);
    // A second, two, four; after the answer, a second again (each drawn within 20%).
    expect(waits.map((ms, i) => ms / [1000, 2000, 4000, 1000][i]!).every((f) => f >= 0.8 && f <= 1.2)).toBe(true);
    expect(waits).toHaveLength(4);
  });

  it("stops for good when the service refuses the stream (no permission), saying why", async () => {
    const abort = new AbortController();
    const { open, opened } = scripted(
      [{ answers: [], then: new ConnectError("missing permission events.read", Code.PermissionDenied) }, { answers: [answer("1.1")] }],
      abort,
    );
    const states: LiveState[] = [];
    await followLog(open, "0.0", abort.signal, { event: () => {}, state: (s) => states.push(s) }, async () => {});
    expect(opened).toEqual(["0.0"]);
    expect(states).toEqual([{ state: "stopped", error: "missing permission events.read" }]);
  });
});

describe("retryDelay", () => {
  it("doubles from a second to at most 30, each within 20% either way", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map((n) => retryDelay(n, () => 0.5))).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
    expect(retryDelay(1, () => 0)).toBe(800);
    expect(retryDelay(6, () => 1)).toBeCloseTo(36_000);
  });
});

describe("event positions", () => {
  it("orders by transaction first, as numbers beyond 2^53", () => {
    expect(comparePositions("9007199254740993.1", "9007199254740992.7")).toBe(1);
    expect(comparePositions("12.3", "12.10")).toBe(-1);
    expect(comparePositions("12.3", "12.3")).toBe(0);
  });

  it("follows after how far the search read the log, or after a later event shown, whatever its place in the list", () => {
    // A resource's history is in its sequence's order: the first row need not be the latest in the log.
    expect(followFrom("20.9", [event("20.4"), event("21.1"), event("19.9")])).toBe("21.1");
    expect(followFrom("22.0", [event("20.4"), event("21.1")])).toBe("22.0");
    expect(followFrom("22.0", [])).toBe("22.0");
    expect(followFrom(undefined, [])).toBe("0.0");
  });

  it("puts the streamed events above the searched ones, each event once", () => {
    const shown = withoutRepeats([event("31.1"), event("30.2")], [event("30.2"), event("29.5"), event("29.5")]);
    expect(shown.map((e) => e.position)).toEqual(["31.1", "30.2", "29.5"]);
  });
});
