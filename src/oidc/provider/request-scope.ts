import { AsyncLocalStorage } from "node:async_hooks";
import type { Db } from "../../store/db.js";

/**
 * What the provider's callbacks (adapter, client lookup, accounts) need of the request they
 * serve but are not handed: its database handle, bounded by the request's deadline and
 * disconnect, and the grant being asked for.
 */
export interface RequestScope {
  db: Db;
  /** The token request asks for the jwt-bearer grant: clients are machine users by id. */
  jwtBearer: boolean;
}

const scope = new AsyncLocalStorage<RequestScope>();

export function inRequestScope<T>(value: RequestScope, fn: () => T): T {
  return scope.run(value, fn);
}

/** The request's database, or the process's when called outside a request (sweeps, tests). */
export function scopedDb(fallback: Db): Db {
  return scope.getStore()?.db ?? fallback;
}

export function isJwtBearerRequest(): boolean {
  return scope.getStore()?.jwtBearer ?? false;
}
