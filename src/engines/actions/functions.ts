import type { FeatureFlags } from "../../domain/feature/flags.js";
import { setUserMetadata } from "../../domain/user-metadata/commands.js";
import { allUserMetadata } from "../../domain/user-metadata/queries.js";
import type { OutboundClient } from "../../http/outbound.js";
import type { Logger } from "../../log/logger.js";
import type { Db, Tx } from "../../store/db.js";
import type { Account } from "../../domain/user/accounts.js";
import type { ExecutionPlans } from "./plans.js";
import { callTarget, EXECUTION_FAILED, type CallableTarget } from "./target-call.js";

export type FunctionName = "preuserinfo" | "preaccesstoken";

/** Claims under this prefix are the service's own: a function may not add them. */
const RESERVED_PREFIX = "urn:platform:iam";
const functionLogClaim = (name: FunctionName) => `urn:platform:iam:action:function/${name}:log`;

/** A function target refused the token or userinfo: `message` is safe to show the client. */
export class FunctionError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "FunctionError";
  }
}

export interface FunctionDeps {
  plans: ExecutionPlans;
  outbound: OutboundClient;
  flags: FeatureFlags;
  logger: Logger;
  /** Metadata a function sets is written in a transaction of its own. */
  transact<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
}

interface Answer {
  append_claims?: { key?: unknown; value?: unknown }[];
  set_user_metadata?: { key?: unknown; value?: unknown }[];
  append_log_claims?: unknown[];
}

/**
 * Function executions (`function/preuserinfo`, `function/preaccesstoken`): the targets of the
 * execution are called one after another with what the claims are about to be, and may add
 * claims, set user metadata and add log lines. They may not add claims under
 * `urn:platform:iam` nor overwrite a claim; each refusal is a log line, and the log goes
 * into `urn:platform:iam:action:function/<name>:log`. Nothing runs while the instance's
 * `actions` flag is off.
 */
export class ActionFunctions {
  constructor(private readonly deps: FunctionDeps) {}

  /**
   * The claims with what the function's targets add; `claims` itself is not changed. `user`
   * may be a loader, called only when the function has targets.
   */
  async run(
    db: Db,
    instanceId: string,
    name: FunctionName,
    user: Account | (() => Promise<Account | undefined>),
    claims: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    if (!(await this.deps.flags.forInstance(instanceId)).actions) return claims;
    const targets = await this.deps.plans.targets(db, instanceId, [`function/${name}`]);
    if (targets.length === 0) return claims;
    // Token paths pass a loader: the user is read only when a function will run.
    const account = typeof user === "function" ? await user() : user;
    if (!account) return claims;
    const result = { ...claims };
    const log: string[] = [];
    const metadata = await allUserMetadata(db, instanceId, account.userId);
    const grants = await db
      .selectFrom("user_grants")
      .select(["id", "project_id", "org_id", "role_keys"])
      .where("instance_id", "=", instanceId)
      .where("user_id", "=", account.userId)
      .execute();
    for (const target of targets) {
      const body = JSON.stringify({
        function: name,
        userinfo: result,
        user: userOf(account),
        user_metadata: metadata.map((m) => ({ key: m.key, value: Buffer.from(m.value).toString("base64") })),
        org: { id: account.orgId, name: account.orgName, primary_domain: account.primaryDomain },
        user_grants: grants.map((g) => ({ id: g.id, project_id: g.project_id, org_id: g.org_id, roles: g.role_keys })),
      });
      const answer = await this.#call(instanceId, name, target, body);
      if (!answer) continue;
      appendClaims(answer, result, log);
      const set = (answer.set_user_metadata ?? []).filter(
        (m): m is { key: string; value: string } => typeof m?.key === "string" && m.key !== "" && m.key.length <= 200 && typeof m.value === "string",
      );
      if (set.length > 0) {
        const entries = [...new Map(set.map((m) => [m.key, { key: m.key, value: Buffer.from(m.value, "base64") }])).values()].filter(
          (m) => m.value.length > 0 && m.value.length <= 65_536,
        );
        if (entries.length > 0) await this.deps.transact((tx) => setUserMetadata(tx, { instanceId, userId: `action/${target.id}` }, account.userId, entries));
      }
    }
    if (log.length > 0) result[functionLogClaim(name)] = log;
    return result;
  }

  /** The answer to read, or undefined; throws when an interrupting target failed. */
  async #call(instanceId: string, name: FunctionName, target: CallableTarget, body: string): Promise<Answer | undefined> {
    const log = this.deps.logger.child({ function: name, instance: instanceId, target: target.id });
    if (target.mode === "async") {
      void callTarget(this.deps.outbound, target, body).then((o) => {
        if (!o.ok) log.warn({ reason: o.reason }, "asynchronous function target failed");
      });
      return undefined;
    }
    const outcome = await callTarget(this.deps.outbound, target, body);
    let reason = outcome.ok ? undefined : outcome.reason;
    let answer: Answer | undefined;
    if (outcome.ok && target.kind === "rest_request_response") {
      try {
        const parsed = JSON.parse(outcome.body.toString("utf8") || "{}") as unknown;
        if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not a JSON object");
        answer = parsed as Answer;
      } catch (error) {
        reason = `the answer is not JSON of a function result: ${(error as Error).message}`;
      }
    }
    if (reason === undefined) return answer;
    log.warn({ reason, interrupting: target.mode === "interrupt_on_error" }, "function target failed");
    if (target.mode !== "interrupt_on_error") return undefined;
    // A relying party learns the target's own refusal, not how a target of the instance failed.
    const forwarded = !outcome.ok && outcome.forwarded === true;
    throw new FunctionError(forwarded ? 403 : 502, forwarded ? outcome.error.rawMessage : EXECUTION_FAILED);
  }
}

/** What a function may add: new claims outside the reserved prefix, and log lines. */
function appendClaims(answer: Answer, claims: Record<string, unknown>, log: string[]): void {
  for (const entry of answer.append_claims ?? []) {
    const key = entry?.key;
    if (typeof key !== "string" || key === "") continue;
    // Assigned, "__proto__" would set the prototype of the claims instead of adding one.
    if (key === "__proto__") {
      log.push(`key "${key}" is not allowed`);
      continue;
    }
    if (key.startsWith(RESERVED_PREFIX)) {
      log.push(`key "${key}" is reserved`);
      continue;
    }
    if (Object.hasOwn(claims, key)) {
      log.push(`key "${key}" already exists`);
      continue;
    }
    claims[key] = entry.value;
  }
  for (const line of answer.append_log_claims ?? []) if (typeof line === "string") log.push(line);
}

function userOf(account: Account) {
  const u = account.row;
  return {
    id: account.userId,
    username: account.username,
    login_name: account.loginName,
    type: u.type,
    ...(u.type === "human"
      ? {
          human: {
            given_name: u.given_name ?? "",
            family_name: u.family_name ?? "",
            nick_name: u.nick_name ?? "",
            display_name: u.name,
            preferred_language: u.preferred_language ?? "",
            gender: u.gender ?? "",
            email: u.email ?? "",
            email_verified: u.email_verified ?? false,
            phone: u.phone ?? "",
            phone_verified: u.phone_verified ?? false,
          },
        }
      : u.type === "schema"
        ? { schema: { schema_id: u.schema_id ?? "", revision: u.schema_revision ?? 0 } }
        : { machine: { name: u.name } }),
  };
}
