import type { OutboundClient, OutboundRequest } from "../../../http/outbound.js";
import { httpFailure, outboundFailure } from "./failures.js";

/**
 * One call to an HTTP provider through the outbound client (its address policy, timeout and
 * size limit): anything but a 2xx answer is a SendFailed in the provider's words, which
 * `words` picks out of the answer's body.
 */
export async function callProvider(
  outbound: OutboundClient,
  who: string,
  url: string,
  request: OutboundRequest,
  words: (body: Buffer) => string = (body) => body.toString("utf8"),
): Promise<void> {
  let answer;
  try {
    answer = await outbound.request(url, { method: "POST", ...request });
  } catch (error) {
    throw outboundFailure(who, error);
  }
  if (answer.status < 200 || answer.status > 299) throw httpFailure(who, answer.status, words(answer.body));
}
