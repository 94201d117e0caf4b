import { Code } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SecretBox } from "../../src/crypto/encryption.js";
import { PROTOCOLS } from "../support/clients.js";
import { DATABASE_KINDS } from "../support/database.js";
import { okMessage } from "../support/results.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { ACTIVE, DEACTIVATE, INHERIT, createOrg, idpClient, instanceOwner, type Idps } from "./helpers.js";

/*
 * The LDAP provider type through the API (issue 38): created, read, patched and searched as
 * the other types over every protocol, its bind password write-only and sealed, and kept
 * only for the servers, transport and account it was given for.
 */

const MASTER_KEY = "0123456789abcdef0123456789abcdef";
const CA = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2FmZQ==\n-----END CERTIFICATE-----\n";

const attributes = {
  idAttribute: "entryUUID",
  usernameAttribute: "uid",
  emailAttribute: "mail",
  firstNameAttribute: "givenName",
  lastNameAttribute: "sn",
  preferredLanguageAttribute: "preferredLanguage",
  phoneAttribute: "telephoneNumber",
};

const config = (password: string): JsonObject => ({
  servers: ["ldaps://ldap1.example.com:636", "ldap://ldap2.example.com"],
  startTls: true,
  baseDn: "dc=example,dc=com",
  bindDn: "cn=reader,dc=example,dc=com",
  bindPassword: password,
  userBase: "ou=people",
  userObjectClasses: ["inetOrgPerson"],
  userFilters: ["uid", "mail"],
  timeout: "5s",
  rootCa: CA,
  attributes,
});

/** What reads answer: the configuration without the bind password. */
const { bindPassword: _omitted, ...shown } = config("x");

describe.each(DATABASE_KINDS)("LDAP identity providers through the API (%s)", (kind) => {
  let server: TestServer;
  let idps: Idps;
  beforeAll(async () => {
    server = await startTestServer(kind);
    idps = idpClient(server.baseUrl, server.adminToken);
  });
  afterAll(() => server?.close());

  const sealed = async (id: string) => {
    const row = await server.service.store.db.selectFrom("idps").select("client_secret").where("id", "=", id).executeTakeFirstOrThrow();
    return row.client_secret;
  };

  it.each(PROTOCOLS)("creates, reads, patches and deletes over %s, never answering the bind password", async (protocol) => {
    const api = idpClient(server.baseUrl, server.adminToken, protocol);
    const password = `bind-pw-${protocol}`;
    const made = await api.call("CreateLDAPIDP", {
      idp: { idp: { name: `LDAP ${protocol}`, options: { isAutoCreation: true, isManualLinkingAllowed: true } }, config: config(password) },
    });
    expect(made).toMatchObject({ ok: true });
    if (protocol === "rest") expect(made.httpStatus).toBe(201);
    const id = okMessage(made).details.id as string;
    const got = await api.call("GetLDAPIDP", { id });
    expect(okMessage(got)).toEqual({
      idp: {
        details: { id, sequence: "1", changeDate: expect.any(String), resourceOwner: instanceOwner(server.instanceId) },
        state: ACTIVE,
        type: "PROVIDER_TYPE_LDAP",
        idp: { idp: { name: `LDAP ${protocol}`, statePolicy: INHERIT, options: { isAutoCreation: true, isManualLinkingAllowed: true } }, config: shown },
      },
    });
    expect((await api.ok("GetIDP", { id })).idp.type).toBe("PROVIDER_TYPE_LDAP");
    expect(await api.call("GetOIDCIDP", { id })).toMatchObject({ ok: false, code: Code.NotFound });
    expect(await api.call("PatchGitLabIDP", { id, idp: { idp: { name: "x" } } })).toMatchObject({ ok: false, code: Code.NotFound });
    const patched = await api.call("PatchLDAPIDP", { id, idp: { idp: { name: `LDAP ${protocol} 2` }, config: { userFilters: ["uid"], timeout: "2.500s" } } });
    expect(okMessage(patched).details.sequence).toBe("2");
    const after = okMessage(await api.call("GetLDAPIDP", { id }));
    expect(after.idp.idp.config).toEqual({ ...shown, userFilters: ["uid"], timeout: "2.500s" });
    const found = okMessage(await api.call("SearchIDPs", { filters: [{ id: { id } }] }));
    expect(found.result.map((r: JsonObject) => [r.type, (r.idp as JsonObject).name])).toEqual([["PROVIDER_TYPE_LDAP", `LDAP ${protocol} 2`]]);
    for (const answer of [made, got, patched, found]) expect(JSON.stringify(answer)).not.toContain(password);
    expect(await sealed(id)).not.toContain(password);
    expect(new SecretBox(MASTER_KEY).decrypt(await sealed(id))).toBe(password);
    expect(okMessage(await api.call("DeleteIDP", { id })).details.sequence).toBe("3");
  });

  it("keeps the bind password only for the servers, StartTLS, root CA and bind DN it was given for", async () => {
    const id = (await idps.ok("CreateLDAPIDP", { idp: { idp: { name: "LDAP aimed" }, config: config("first-pw") } })).details.id as string;
    const before = await idps.ok("GetLDAPIDP", { id });
    for (const [field, value] of Object.entries({
      servers: ["ldaps://elsewhere.example"],
      startTls: false,
      rootCa: "",
      bindDn: "cn=admin,dc=example,dc=com",
    })) {
      const refused = await idps.call("PatchLDAPIDP", { id, idp: { config: { [field]: value } } });
      expect(refused, field).toMatchObject({
        ok: false,
        code: Code.InvalidArgument,
        message: expect.stringMatching(new RegExp(`^changing ${field} needs bindPassword `)),
      });
    }
    expect(await idps.ok("GetLDAPIDP", { id })).toEqual(before);
    // The same servers in the same order, and settings that do not aim it, keep it.
    const same = await idps.ok("PatchLDAPIDP", { id, idp: { config: { servers: shown.servers!, baseDn: "dc=example,dc=net", userBase: "" } } });
    expect(same.details.sequence).toBe("2");
    expect(new SecretBox(MASTER_KEY).decrypt(await sealed(id))).toBe("first-pw");
    // A new bind password is a change, whatever else.
    expect((await idps.ok("PatchLDAPIDP", { id, idp: { config: { bindPassword: "first-pw" } } })).details.sequence).toBe("3");
    await idps.ok("PatchLDAPIDP", { id, idp: { config: { servers: ["ldaps://elsewhere.example"], bindPassword: "second-pw" } } });
    expect((await idps.ok("GetLDAPIDP", { id })).idp.idp.config.servers).toEqual(["ldaps://elsewhere.example"]);
    expect(new SecretBox(MASTER_KEY).decrypt(await sealed(id))).toBe("second-pw");
    await idps.ok("DeleteIDP", { id });
  });

  it("validates the configuration, naming the field", async () => {
    const invalid: [string, (c: JsonObject) => void][] = [
      ["servers", (c) => (c.servers = [])],
      ["servers", (c) => (c.servers = ["https://ldap.example.com"])],
      ["servers", (c) => (c.servers = ["ldap://ldap.example.com/dc=x?uid"])],
      ["base_dn", (c) => delete c.baseDn],
      ["bind_dn", (c) => delete c.bindDn],
      ["bind_password", (c) => delete c.bindPassword],
      ["user_object_classes", (c) => (c.userObjectClasses = [])],
      ["user_filters", (c) => (c.userFilters = ["uid)(cn=*"])],
      ["timeout", (c) => (c.timeout = "0s")],
      ["timeout", (c) => (c.timeout = "301s")],
      ["root_ca", (c) => (c.rootCa = "not a certificate")],
      ["attributes", (c) => delete c.attributes],
      ["id_attribute", (c) => (c.attributes = { ...attributes, idAttribute: "" })],
    ];
    for (const [field, change] of invalid) {
      const c = config("pw");
      change(c);
      const r = await idps.call("CreateLDAPIDP", { idp: { idp: { name: "LDAP invalid" }, config: c } });
      expect(r, `${field}: ${JSON.stringify(r)}`).toMatchObject({ ok: false, code: Code.InvalidArgument });
      expect((r as { message: string }).message).toContain(field);
    }
    // Optional settings may be left out.
    const { timeout: _t, rootCa: _r, userBase: _u, startTls: _s, ...minimal } = config("pw");
    const made = await idps.ok("CreateLDAPIDP", { idp: { idp: { name: "LDAP minimal" }, config: { ...minimal, attributes: { idAttribute: "uid" } } } });
    expect((await idps.ok("GetLDAPIDP", { id: made.details.id })).idp.idp.config).toEqual({
      servers: shown.servers,
      baseDn: shown.baseDn,
      bindDn: shown.bindDn,
      userObjectClasses: ["inetOrgPerson"],
      userFilters: ["uid", "mail"],
      attributes: { idAttribute: "uid" },
    });
    await idps.ok("DeleteIDP", { id: made.details.id });
  });

  it("is reused below its owner with the child's own state policy, its configuration changed only by the owner", async () => {
    const id = (await idps.ok("CreateLDAPIDP", { idp: { idp: { name: "LDAP shared" }, config: config("pw") } })).details.id as string;
    const org = await createOrg(server.baseUrl, server.adminToken, "LDAP Org");
    expect(await idps.call("PatchLDAPIDP", { id, ctx: { orgId: org }, idp: { config: { baseDn: "dc=x" } } })).toMatchObject({
      ok: false,
      code: Code.FailedPrecondition,
    });
    await idps.ok("PatchLDAPIDP", { id, ctx: { orgId: org }, idp: { idp: { statePolicy: DEACTIVATE } } });
    expect((await idps.ok("GetLDAPIDP", { id, ctx: { orgId: org } })).idp).toMatchObject({
      state: "EFFECTIVE_STATE_INACTIVE",
      idp: { idp: { statePolicy: DEACTIVATE } },
    });
    expect((await idps.ok("GetLDAPIDP", { id })).idp.state).toBe(ACTIVE);
    await idps.ok("DeleteIDP", { id });
  });
});
