/**
 * The baseline: bare node:http and node:http2 (cleartext) servers doing the service's SQL
 * for each scenario, on a pg pool of the same size, with no auth, validation or protobuf;
 * new passwords are hashed with the service's own Argon2id call and parameters.
 * Run as a child process; prints {"http1":port,"http2":port} once listening.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { createPasswordHasher } from "../src/crypto/passwords.js";
import { instanceSequence } from "../src/store/instance-sequence.js";
import { baselineValidator } from "./schema-users.js";
import { ARGON2, HOST, POOL_SIZE } from "./settings.js";

const INT8 = 20;
const instanceId = process.env.BASELINE_INSTANCE_ID!;
const pool = new pg.Pool({
  connectionString: process.env.BASELINE_DATABASE_URL,
  max: POOL_SIZE,
  // As the service: int8 columns become numbers.
  types: {
    getTypeParser: ((oid: number, format?: "text" | "binary") =>
      oid === INT8 ? Number : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
  },
});

/** The service's hasher, with the parameters the service is given (bench/service.ts). */
const hasher = createPasswordHasher(ARGON2);

type Req = http.IncomingMessage | http2.Http2ServerRequest;
type Res = http.ServerResponse | http2.Http2ServerResponse;

interface TargetRow {
  instance_id: string;
  id: string;
  name: string;
  target_type: string;
  url: string;
  timeout_ms: number;
  execution_mode: string;
  created_at: Date;
  change_date: Date;
  sequence: number;
}

const details = (r: Pick<TargetRow, "id" | "sequence" | "change_date" | "instance_id">, owner = { type: "OWNER_TYPE_INSTANCE", id: r.instance_id }) => ({
  id: r.id,
  sequence: String(r.sequence),
  changeDate: r.change_date.toISOString(),
  resourceOwner: owner,
});

const view = (r: TargetRow) => ({
  details: details(r),
  target: { name: r.name, restWebhook: { url: r.url }, timeout: `${r.timeout_ms / 1000}s` },
});

async function getTarget(id: string) {
  const { rows } = await pool.query<TargetRow>('select * from "targets" where "instance_id" = $1 and "id" = $2', [instanceId, id]);
  return rows[0] ? { status: 200, body: { target: view(rows[0]) } } : { status: 404, body: { code: 5, message: "not found" } };
}

/**
 * The projection's state as two subqueries of a search page's statement, as the service reads
 * it (store/projection-state.ts, projectionStateColumns): the newest event of the aggregate type.
 */
const stateColumns = (instance: string, aggregateType: string) => {
  const newest = (column: string) =>
    `(select "${column}" from "events" where "instance_id" = ${instance} and "aggregate_type" = ${aggregateType} order by "position" desc limit 1)`;
  return `${newest("instance_position")} as "state_position", ${newest("created_at")} as "state_timestamp"`;
};

interface StateColumns {
  state_position: number | null;
  state_timestamp: Date | null;
}

/** A search's details from its first row's state (none on an empty page: position 0). */
const stateDetails = (first: StateColumns | undefined) => ({
  processedSequence: String(first?.state_position ?? 0),
  timestamp: first?.state_timestamp?.toISOString(),
});

async function searchTargets(limit: number) {
  const found = await pool.query<TargetRow & { total: number } & StateColumns>(
    `select *, count(*) over() as "total", ${stateColumns("$1", "$4")} from "targets" where "instance_id" = $1 order by "created_at" desc, "id" desc limit $2 offset $3`,
    [instanceId, limit, 0, "target"],
  );
  const total = found.rows[0]?.total ?? 0;
  return {
    status: 200,
    body: {
      details: {
        appliedLimit: limit,
        // proto3 JSON leaves out false, as the service does.
        ...(found.rows.length >= total && { endOfList: true }),
        totalResult: String(total),
        ...stateDetails(found.rows[0]),
      },
      result: found.rows.map(view),
    },
  };
}

/** The same UUIDv7 layout as the service's ids. */
function newId(): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(Date.now(), 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** One transaction, as the service's CreateTarget: event, projection row; a name taken fails on the unique index. */
async function createTarget(input: { name: string; url: string }) {
  const spec = { name: input.name, kind: "rest_webhook", url: input.url, timeoutMs: 10_000, mode: "sync" };
  const id = newId();
  const signingKey = randomBytes(27).toString("base64url");
  const client = await pool.connect();
  try {
    await client.query("begin");
    const event = await client.query<{ sequence: number; created_at: Date }>(
      'insert into "events" ("instance_id", "aggregate_type", "aggregate_id", "sequence", "event_type", "payload", "creator", "instance_position") values ($1, $2, $3, $4, $5, $6, $7, nextval($8::regclass)) returning "sequence", "created_at"',
      [instanceId, "target", id, 1, "target.added", JSON.stringify(spec), "baseline", instanceSequence(instanceId)],
    );
    const { sequence, created_at } = event.rows[0]!;
    await client.query(
      'insert into "targets" ("instance_id", "id", "name", "target_type", "url", "timeout_ms", "execution_mode", "signing_key", "created_at", "change_date", "sequence") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
      [instanceId, id, spec.name, spec.kind, spec.url, spec.timeoutMs, spec.mode, signingKey, created_at, created_at, sequence],
    );
    await client.query("commit");
    return { status: 201, body: { details: details({ id, sequence, change_date: created_at, instance_id: instanceId }), signingKey } };
  } catch (error) {
    await client.query("rollback").catch(() => {});
    if ((error as { code?: unknown }).code === "23505") return { status: 409, body: { code: 6, message: "already exists" } };
    throw error;
  } finally {
    client.release();
  }
}

interface UserViewRow {
  instance_id: string;
  id: string;
  org_id: string;
  username: string;
  type: "human" | "machine";
  state: "active" | "inactive" | "locked";
  name: string;
  given_name: string | null;
  family_name: string | null;
  nick_name: string | null;
  preferred_language: string | null;
  gender: "female" | "male" | "diverse" | null;
  email: string | null;
  email_verified: boolean | null;
  phone: string | null;
  phone_verified: boolean | null;
  description: string | null;
  access_token_type: "bearer" | "jwt" | null;
  change_date: Date;
  sequence: number;
  primary_domain: string | null;
  password_changed_at: Date | null;
  password_change_required: boolean | null;
  has_secret: boolean;
}

/** The service's GetUser query (domain/user/queries.ts): the row with its login domain and credential flags. */
const GET_USER =
  'select "users".*, ' +
  '(select "d"."domain" from "org_domains" as "d" where "d"."instance_id" = "users"."instance_id" and "d"."org_id" = "users"."org_id" and "d"."is_primary" = $1) as "primary_domain", ' +
  '(select "p"."changed_at" from "user_secrets" as "p" where "p"."instance_id" = "users"."instance_id" and "p"."user_id" = "users"."id" and "p"."kind" = $2) as "password_changed_at", ' +
  '(select "p"."change_required" from "user_secrets" as "p" where "p"."instance_id" = "users"."instance_id" and "p"."user_id" = "users"."id" and "p"."kind" = $3) as "password_change_required", ' +
  'exists (select "s"."kind" from "user_secrets" as "s" where "s"."instance_id" = "users"."instance_id" and "s"."user_id" = "users"."id" and "s"."kind" = $4) as "has_secret" ' +
  'from "users" where "users"."instance_id" = $5 and "users"."id" = $6';

const userDetails = (r: Pick<UserViewRow, "id" | "sequence" | "change_date" | "instance_id" | "org_id">) =>
  details(r, { type: "OWNER_TYPE_ORG", id: r.org_id });

/** As the REST gateway answers: proto3 JSON, which leaves out empty strings, false and unset fields. */
function userView(r: UserViewRow) {
  const base = {
    details: userDetails(r),
    username: r.username,
    loginName: `${r.username}@${r.primary_domain ?? ""}`,
    state: `USER_STATE_${r.state.toUpperCase()}`,
  };
  if (r.type === "machine") {
    return {
      ...base,
      machine: {
        ...(r.name && { name: r.name }),
        ...(r.description && { description: r.description }),
        accessTokenType: `ACCESS_TOKEN_TYPE_${(r.access_token_type ?? "bearer").toUpperCase()}`,
        ...(r.has_secret && { hasSecret: true }),
      },
    };
  }
  return {
    ...base,
    human: {
      profile: {
        ...(r.given_name && { givenName: r.given_name }),
        ...(r.family_name && { familyName: r.family_name }),
        ...(r.name && { displayName: r.name }),
        ...(r.nick_name && { nickName: r.nick_name }),
        ...(r.preferred_language && { preferredLanguage: r.preferred_language }),
        ...(r.gender && { gender: `GENDER_${r.gender.toUpperCase()}` }),
      },
      email: { ...(r.email && { address: r.email }), ...(r.email_verified && { isVerified: true }) },
      ...(r.phone && { phone: { number: r.phone, ...(r.phone_verified && { isVerified: true }) } }),
      ...(r.password_changed_at && { hasPassword: true }),
      ...(r.password_change_required && { passwordChangeRequired: true }),
      ...(r.password_changed_at && { passwordChanged: r.password_changed_at.toISOString() }),
    },
  };
}

async function getUser(id: string) {
  const { rows } = await pool.query<UserViewRow>(GET_USER, [true, "password", "password", "client_secret", instanceId, id]);
  return rows[0] ? { status: 200, body: { user: userView(rows[0]) } } : { status: 404, body: { code: 5, message: "not found" } };
}

interface NewHuman {
  username: string;
  human: { profile: { givenName: string; familyName: string }; email: { address: string; isVerified?: boolean }; password: string };
}

/**
 * As the service's CreateUser of a human with a password (domain/user/commands.ts): the hash
 * first, outside the transaction; then organization check, username check (regardless of
 * case), event, projection row, password row. The organization is the instance's default,
 * as for a request without ctx; the service looks it up per request, this reads it once.
 */
async function createUser(input: NewHuman) {
  const { username, human } = input;
  const hash = await hasher.hash(human.password);
  const profile = {
    givenName: human.profile.givenName,
    familyName: human.profile.familyName,
    displayName: `${human.profile.givenName} ${human.profile.familyName}`,
    nickName: "",
    preferredLanguage: "",
  };
  const email = { address: human.email.address, verified: human.email.isVerified === true };
  const id = newId();
  const orgId = defaultOrgId;
  const client = await pool.connect();
  try {
    await client.query("begin");
    const org = await client.query('select "id" from "orgs" where "instance_id" = $1 and "id" = $2', [instanceId, orgId]);
    if (org.rows.length === 0) {
      await client.query("rollback");
      return { status: 404, body: { code: 5, message: "organization not found" } };
    }
    const taken = await client.query('select "id" from "users" where "instance_id" = $1 and lower("username") = lower($2)', [instanceId, username]);
    if (taken.rows.length > 0) {
      await client.query("rollback");
      return { status: 409, body: { code: 6, message: "already exists" } };
    }
    const payload = { orgId, username, profile, email, hasPassword: true };
    const event = await client.query<{ sequence: number; created_at: Date }>(
      'insert into "events" ("instance_id", "aggregate_type", "aggregate_id", "sequence", "event_type", "payload", "creator", "instance_position") values ($1, $2, $3, $4, $5, $6, $7, nextval($8::regclass)) returning "sequence", "created_at"',
      [instanceId, "user", id, 1, "user.human.added", JSON.stringify(payload), "baseline", instanceSequence(instanceId)],
    );
    const { sequence, created_at } = event.rows[0]!;
    await client.query(
      'insert into "users" ("instance_id", "id", "org_id", "username", "type", "created_at", "change_date", "sequence", "name", "given_name", "family_name", "nick_name", "preferred_language", "gender", "email", "email_verified", "phone", "phone_verified") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)',
      [
        instanceId,
        id,
        orgId,
        username,
        "human",
        created_at,
        created_at,
        sequence,
        profile.displayName,
        profile.givenName,
        profile.familyName,
        profile.nickName,
        profile.preferredLanguage,
        null,
        email.address,
        email.verified,
        null,
        null,
      ],
    );
    await client.query(
      'insert into "user_secrets" ("instance_id", "user_id", "kind", "hash", "change_required", "changed_at") values ($1, $2, $3, $4, $5, $6)',
      [instanceId, id, "password", hash, false, created_at],
    );
    await client.query("commit");
    return { status: 201, body: { details: userDetails({ id, sequence, change_date: created_at, instance_id: instanceId, org_id: orgId }) } };
  } catch (error) {
    await client.query("rollback").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** Compiled once per schema, as the service keeps its compiled validators. */
const validators = new Map<string, ReturnType<typeof baselineValidator>>();

/**
 * As the service's CreateUser of a schema user (domain/user/commands.ts, domain/user-schema/users.ts):
 * organization check, username check, the schema read with a share lock, Ajv validating the
 * data against it, event, projection row with the data, the searchable field's index row.
 */
async function createSchemaUser(input: { username: string; schema: { schemaId: string; data: Record<string, unknown> } }) {
  const { username } = input;
  const { schemaId, data } = input.schema;
  const id = newId();
  const orgId = defaultOrgId;
  const client = await pool.connect();
  try {
    await client.query("begin");
    const org = await client.query('select "id" from "orgs" where "instance_id" = $1 and "id" = $2', [instanceId, orgId]);
    const taken = await client.query('select "id" from "users" where "instance_id" = $1 and lower("username") = lower($2)', [instanceId, username]);
    const schema = await client.query<{ schema: object; revision: number; state: string }>(
      'select * from "user_schemas" where "instance_id" = $1 and "id" = $2 for share',
      [instanceId, schemaId],
    );
    if (org.rows.length === 0 || taken.rows.length > 0 || schema.rows.length === 0) {
      await client.query("rollback");
      return { status: 409, body: { code: 9, message: "refused" } };
    }
    let validate = validators.get(schemaId);
    if (!validate) validators.set(schemaId, (validate = baselineValidator(schema.rows[0]!.schema)));
    if (!validate(data)) {
      await client.query("rollback");
      return { status: 400, body: { code: 3, message: JSON.stringify(validate.errors) } };
    }
    const { revision } = schema.rows[0]!;
    const payload = { orgId, username, schemaId, revision, data };
    const event = await client.query<{ sequence: number; created_at: Date }>(
      'insert into "events" ("instance_id", "aggregate_type", "aggregate_id", "sequence", "event_type", "payload", "creator", "instance_position") values ($1, $2, $3, $4, $5, $6, $7, nextval($8::regclass)) returning "sequence", "created_at"',
      [instanceId, "user", id, 1, "user.schema.added", JSON.stringify(payload), "baseline", instanceSequence(instanceId)],
    );
    const { sequence, created_at } = event.rows[0]!;
    await client.query(
      'insert into "users" ("instance_id", "id", "org_id", "username", "type", "created_at", "change_date", "sequence", "name", "schema_id", "schema_revision", "data") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)',
      [instanceId, id, orgId, username, "schema", created_at, created_at, sequence, username, schemaId, revision, JSON.stringify(data)],
    );
    await client.query('insert into "user_search_values" ("instance_id", "user_id", "field", "value") values ($1, $2, $3, $4)', [
      instanceId,
      id,
      "/department",
      String(data.department),
    ]);
    await client.query("commit");
    return { status: 201, body: { details: userDetails({ id, sequence, change_date: created_at, instance_id: instanceId, org_id: orgId }) } };
  } catch (error) {
    await client.query("rollback").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

interface IdpRow {
  id: string;
  instance_id: string;
  org_id: string;
  type: string;
  name: string;
  state_policy: string;
  options: Record<string, unknown>;
  change_date: Date;
  sequence: number;
  org_policy: string | null;
  instance_policy: string | null;
  total: number;
}

/** The service's SearchIDPs query from an organization (domain/idp/queries.ts), first page by creation date. */
const SEARCH_IDPS_IN_ORG =
  `select "idps".*, "p_org"."policy" as "org_policy", "p_inst"."policy" as "instance_policy", count(*) over() as "total", ${stateColumns("$1", "$11")} from "idps" ` +
  'left join "idp_state_policies" as "p_org" on "p_org"."idp_id" = "idps"."id" and "p_org"."instance_id" = $1 and "p_org"."org_id" = $2 and true ' +
  'left join "idp_state_policies" as "p_inst" on "p_inst"."idp_id" = "idps"."id" and "p_inst"."instance_id" = $3 and "p_inst"."org_id" = $4 and true ' +
  'where ("idps"."instance_id" = $5 or ("idps"."instance_id" = $6 and "idps"."org_id" in ($7, $8))) ' +
  'order by "idps"."created_at" desc, "idps"."id" desc limit $9 offset $10';

const ownerOfRow = (instanceId: string, orgId: string) =>
  orgId ? { type: "OWNER_TYPE_ORG", id: orgId } : instanceId ? { type: "OWNER_TYPE_INSTANCE", id: instanceId } : { type: "OWNER_TYPE_SYSTEM" };
const stateOf = (policy: string | null | undefined) => (policy === "deactivate" ? "EFFECTIVE_STATE_INACTIVE" : "EFFECTIVE_STATE_ACTIVE");

/** A provider seen from an organization, as the service's GetIDP in proto3 JSON: parent and state for inherited ones. */
function idpView(r: IdpRow, orgId: string) {
  const owned = r.org_id === orgId;
  // In the instance: its own policy for a system provider, else the owner's.
  const inInstance = r.instance_id === "" ? (r.instance_policy ?? r.state_policy) : r.state_policy;
  return {
    details: { id: r.id, sequence: String(r.sequence), changeDate: r.change_date.toISOString(), resourceOwner: ownerOfRow(r.instance_id, r.org_id) },
    ...(!owned && { parent: { parent: { type: "OWNER_TYPE_INSTANCE", id: instanceId }, state: stateOf(inInstance) } }),
    state: stateOf(owned ? r.state_policy : (r.org_policy ?? inInstance)),
    type: `PROVIDER_TYPE_${r.type.toUpperCase()}`,
    idp: { name: r.name, statePolicy: `STATE_POLICY_${(owned ? r.state_policy : (r.org_policy ?? "inherit")).toUpperCase()}`, options: r.options },
  };
}

async function searchIdps(orgId: string, limit: number) {
  const found = await pool.query<IdpRow & StateColumns>(SEARCH_IDPS_IN_ORG, [instanceId, orgId, instanceId, "", "", instanceId, "", orgId, limit, 0, "idp"]);
  const total = found.rows[0]?.total ?? 0;
  return {
    status: 200,
    body: {
      details: {
        totalResult: String(total),
        ...(found.rows.length >= total && { endOfList: true }),
        appliedLimit: limit,
        ...stateDetails(found.rows[0]),
      },
      result: found.rows.map((r) => idpView(r, orgId)),
    },
  };
}

const SUPPORTED_LANGUAGES = ["en", "de", "fr", "it", "es", "pt", "nl", "pl", "ja", "zh"];

interface SettingsRow {
  instance_id: string;
  org_id: string;
  properties: Record<string, unknown>;
  change_date: Date;
  sequence: number;
}

/**
 * The service's ResolveLanguages in an organization (domain/settings/rows.ts): one query for
 * the rows of the organization, its instance and the system, then the nearest value per
 * property, the fallback to the first restricted language, and owners for inherited values.
 */
async function resolveLanguages(orgId: string) {
  const { rows } = await pool.query<SettingsRow>(
    'select * from "settings" where "kind" = $1 and (("instance_id" = $2 and "org_id" = $3) or ("instance_id" = $4 and "org_id" = $5) or ("instance_id" = $6 and "org_id" = $7))',
    ["language", instanceId, orgId, instanceId, "", "", ""],
  );
  const chain = [
    [instanceId, orgId],
    [instanceId, ""],
    ["", ""],
  ].map(([i, o]) => rows.find((r) => r.instance_id === i && r.org_id === o));
  const nearest = (name: string, builtIn: unknown) => {
    const at = chain.findIndex((r) => r && Object.hasOwn(r.properties, name));
    return at < 0 ? { value: builtIn, at: 2 } : { value: chain[at]!.properties[name], at };
  };
  let language = nearest("default_language", "en");
  const restricted = nearest("restricted_languages", []);
  const allowed = restricted.value as string[];
  if (allowed.length > 0 && !allowed.includes(language.value as string)) language = { value: allowed[0], at: restricted.at };
  const owners = [undefined, { type: "OWNER_TYPE_INSTANCE", id: instanceId }, { type: "OWNER_TYPE_SYSTEM" }];
  const own = chain[0];
  return {
    status: 200,
    body: {
      details: {
        sequence: String(own?.sequence ?? 0),
        ...(own && { changeDate: own.change_date.toISOString() }),
        owner: { type: "OWNER_TYPE_ORG", id: orgId },
      },
      settings: {
        defaultLanguage: { value: language.value, ...(owners[language.at] && { owner: owners[language.at] }) },
        restrictedLanguages: { value: allowed.map((key) => ({ key })), ...(owners[restricted.at] && { owner: owners[restricted.at] }) },
        supportedLanguages: { value: SUPPORTED_LANGUAGES.map((key) => ({ key })), owner: owners[2] },
      },
    },
  };
}

function readBody(req: Req): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (text += chunk));
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });
}

async function route(req: Req): Promise<{ status: number; body: unknown }> {
  const [path, query] = (req.url ?? "/").split("?", 2) as [string, string | undefined];
  const org = new URLSearchParams(query).get("org") ?? "";
  if (req.method === "GET" && path.startsWith("/targets/")) return getTarget(decodeURIComponent(path.slice(9)));
  if (req.method === "POST" && path === "/targets/_search") {
    await readBody(req);
    return searchTargets(100);
  }
  if (req.method === "POST" && path === "/targets") {
    const input = JSON.parse(await readBody(req)) as { name: string; url?: string };
    return createTarget({ name: input.name, url: input.url ?? "https://example.com/hook" });
  }
  if (req.method === "GET" && path.startsWith("/users/")) return getUser(decodeURIComponent(path.slice(7)));
  if (req.method === "POST" && path === "/users") return createUser(JSON.parse(await readBody(req)) as NewHuman);
  if (req.method === "POST" && path === "/schema_users") return createSchemaUser(JSON.parse(await readBody(req)) as Parameters<typeof createSchemaUser>[0]);
  if (req.method === "POST" && path === "/idps/_search") {
    await readBody(req);
    return searchIdps(org, 100);
  }
  if (req.method === "GET" && path === "/languages") return resolveLanguages(org);
  return { status: 404, body: { code: 5, message: `no endpoint at ${req.method} ${path}` } };
}

function handle(req: Req, res: Res): void {
  route(req).then(
    ({ status, body }) => send(res, status, body),
    (error: unknown) => send(res, 500, { code: 13, message: String(error) }),
  );
}

function send(res: Res, status: number, body: unknown): void {
  const json = Buffer.from(JSON.stringify(body));
  (res as http.ServerResponse).writeHead(status, { "content-type": "application/json", "content-length": json.length });
  res.end(json);
}

function listen(server: http.Server | http2.Http2Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, HOST, () => resolve((server.address() as AddressInfo).port));
  });
}

/** The instance's default organization: where the service creates users for a request without ctx. */
const defaultOrgId = (
  await pool.query<{ default_org_id: string }>('select "default_org_id" from "instances" where "instance_id" = $1 and "id" = $2', [instanceId, instanceId])
).rows[0]!.default_org_id;

const h1 = http.createServer({ keepAliveTimeout: 65_000 }, handle);
const h2 = http2.createServer({}, handle);
const ports = { http1: await listen(h1), http2: await listen(h2) };
process.stdout.write(JSON.stringify(ports) + "\n");

const stop = () => {
  h1.closeAllConnections();
  h1.close();
  h2.close();
  void pool.end().finally(() => process.exit(0));
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
