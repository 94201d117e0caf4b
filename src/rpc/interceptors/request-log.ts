import { randomUUID } from "node:crypto";
import type { Interceptor } from "@connectrpc/connect";
import type { Logger } from "../../log/logger.js";
import { toConnectError } from "../errors.js";

const REQUEST_ID = "x-request-id";

/**
 * Outermost: gives the request an id (the caller's, when it sent a sane one), logs one
 * line per call, and turns every error into its client-facing form.
 */
export function requestLogInterceptor(logger: Logger): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    const sent = req.header.get(REQUEST_ID);
    const requestId = sent && /^[\w.:-]{1,128}$/.test(sent) ? sent : randomUUID();
    const procedure = `/${req.service.typeName}/${req.method.name}`;
    try {
      const res = await next(req);
      res.header.set(REQUEST_ID, requestId);
      logger.info({ requestId, procedure, code: "ok", ms: Math.round(performance.now() - started) }, "rpc");
      return res;
    } catch (thrown) {
      const { error, unexpected } = toConnectError(thrown);
      error.metadata.set(REQUEST_ID, requestId);
      const fields = { requestId, procedure, code: error.code, ms: Math.round(performance.now() - started) };
      if (unexpected) logger.error({ ...fields, err: error.cause ?? error }, "rpc failed");
      else logger.info({ ...fields, message: error.rawMessage }, "rpc");
      throw error;
    }
  };
}
