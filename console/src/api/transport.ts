import { Code, ConnectError, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import type { Session } from "../auth/session";

/**
 * The service's own API over Connect (JSON on the console's origin: `connect-src 'self'`),
 * with the person's access token. A token the service no longer takes (revoked, signed out
 * elsewhere) sends the person to sign in again, back to the page they were on.
 */
export function apiTransport(session: Session): Transport {
  const bearer: Interceptor = (next) => async (req) => {
    const token = await session.accessToken();
    if (token) req.header.set("authorization", `Bearer ${token}`);
    try {
      return await next(req);
    } catch (error) {
      if (error instanceof ConnectError && error.code === Code.Unauthenticated) {
        await session.manager.removeUser();
        await session.signIn(window.location.pathname + window.location.search);
      }
      throw error;
    }
  };
  return createConnectTransport({ baseUrl: window.location.origin, interceptors: [bearer] });
}
