import { randomUUID } from "node:crypto";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../../log/logger.js";
import { abortedCode, codeName, outcomeOf, protocolOf, STOPPED_READING, traceIdKey, wireStatus, type Outcome } from "../../telemetry/call.js";
import { toConnectError } from "../errors.js";

const REQUEST_ID = "x-request-id";

const ABORTED_MESSAGES = {
  [Code.Canceled]: "the caller canceled the call",
  [Code.DeadlineExceeded]: "the call's deadline passed",
};

/**
 * Outermost of the chain (only metrics and traces, added in app.ts, observe it from
 * outside): gives the request an id (the caller's, when it sent a sane one), logs one line
 * per call with its outcome, and turns every error into its client-facing form. A call whose
 * caller went away or whose deadline passed is an answer, not an incident: it logs at info
 * whatever the handler threw on its way out.
 */
export function requestLogInterceptor(logger: Logger): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    const sent = req.header.get(REQUEST_ID);
    const requestId = sent && /^[\w.:-]{1,128}$/.test(sent) ? sent : randomUUID();
    const traceId = req.contextValues.get(traceIdKey);
    const call = {
      requestId,
      procedure: `/${req.service.typeName}/${req.method.name}`,
      protocol: protocolOf(req),
      ...(traceId && { traceId }),
    };
    const log = (outcome: Outcome, error?: ConnectError, cause?: { err: unknown; incident: boolean }, answer?: unknown) => {
      if (!cause?.incident && !logger.isLevelEnabled("info")) return;
      const fields = { ...call, code: codeName(outcome), status: wireStatus(req, outcome, answer), ms: Math.round(performance.now() - started) };
      if (cause?.incident) logger.error({ ...fields, err: cause.err }, "rpc failed");
      else logger.info({ ...fields, ...(error && { message: error.rawMessage }), ...(cause && { err: cause.err }) }, "rpc");
    };
    /** Logs the error and returns what the client gets instead. */
    const fail = (thrown: unknown): ConnectError => {
      const { error, unexpected } = toConnectError(thrown);
      const aborted = abortedCode(req.signal);
      const shown =
        aborted === undefined || error.code === aborted ? error : new ConnectError(ABORTED_MESSAGES[aborted], aborted, undefined, undefined, thrown);
      shown.metadata.set(REQUEST_ID, requestId);
      // The cause of an unexpected error stays in the log only; the client reads "internal error".
      // Once the caller has gone, it is kept at info: what broke was most likely the abort itself.
      log(shown.code, shown, unexpected ? { err: error.cause ?? error, incident: aborted === undefined } : undefined);
      return shown;
    };

    let res;
    try {
      res = await next(req);
    } catch (thrown) {
      throw fail(thrown);
    }
    res.header.set(REQUEST_ID, requestId);
    if (!res.stream) {
      log(outcomeOf(req.signal), undefined, undefined, res.message);
      return res;
    }
    const messages = res.message;
    return {
      ...res,
      message: (async function* () {
        let ended = false;
        try {
          yield* messages;
          ended = true;
          log(outcomeOf(req.signal));
        } catch (thrown) {
          ended = true;
          throw fail(thrown);
        } finally {
          if (!ended) log(outcomeOf(req.signal, STOPPED_READING));
        }
      })(),
    };
  };
}
