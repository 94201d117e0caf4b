import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { escapeFilterValue, ldapSignIn, searchBase, timeoutMs, userFilter, type LdapConfig } from "../../src/upstream-idps/ldap.js";
import { UpstreamError } from "../../src/upstream-idps/fetch.js";
import {
  BASE_DN,
  BIND_DN,
  BIND_PASSWORD,
  HAS_SLAPD,
  LDAP_ATTRIBUTES,
  SLAPD_SKIP,
  anotherCa,
  freePort,
  silentServer,
  startSlapd,
  type Directory,
} from "../support/slapd.js";

/*
 * The directory side of LDAP sign-in (src/upstream-idps/ldap.ts) against a real slapd: the
 * transports, the certificate checks, the search's escaping and what a person's answer
 * tells. The login pages' side is test/oidc/ldap-login.test.ts.
 */

describe("LDAP filters (RFC 4515)", () => {
  it("escapes the characters that would end or widen an assertion value", () => {
    expect(escapeFilterValue("a*b(c)d\\e\0f")).toBe("a\\2ab\\28c\\29d\\5ce\\00f");
    expect(escapeFilterValue("plain.name@example.org ü")).toBe("plain.name@example.org ü");
    expect(userFilter({ userObjectClasses: ["inetOrgPerson", "person"], userFilters: ["uid", "mail"] }, "x)(uid=*")).toBe(
      "(&(objectClass=inetOrgPerson)(objectClass=person)(|(uid=x\\29\\28uid=\\2a)(mail=x\\29\\28uid=\\2a)))",
    );
  });

  it("searches under userBase relative to baseDn, or as given when it is a DN under it", () => {
    expect(searchBase({ baseDn: BASE_DN })).toBe(BASE_DN);
    expect(searchBase({ baseDn: BASE_DN, userBase: "ou=people" })).toBe(`ou=people,${BASE_DN}`);
    expect(searchBase({ baseDn: BASE_DN, userBase: "ou=people, DC=example,dc=org" })).toBe("ou=people, DC=example,dc=org");
  });

  it("caps the provider's timeout, and takes the cap without one", () => {
    expect(timeoutMs("2.500s", 10_000)).toBe(2500);
    expect(timeoutMs("60s", 10_000)).toBe(10_000);
    expect(timeoutMs(undefined, 10_000)).toBe(10_000);
  });
});

const PASSWORD = "Alice-pw-1";

describe.skipIf(!HAS_SLAPD)(`LDAP sign-in against slapd ${HAS_SLAPD ? "" : SLAPD_SKIP}`, () => {
  let dir: Directory;
  const settings = { maxTimeoutMs: 5_000, allowPrivate: true };
  beforeAll(async () => {
    dir = await startSlapd([
      {
        uid: "alice",
        cn: "Alice Liddell",
        givenName: "Alice",
        sn: "Liddell",
        mail: "alice@example.org",
        password: PASSWORD,
        preferredLanguage: "de-CH",
        telephoneNumber: "+41 44 555 01 01",
      },
      { uid: "st*r(x)", cn: "Star User", givenName: "Star", sn: "User", mail: "star@example.org", password: "Star-pw-1" },
    ]);
  }, 60_000);
  afterAll(() => dir?.stop());

  const config = (extra: Partial<LdapConfig> = {}): LdapConfig => ({
    servers: [dir.ldapsUrl],
    baseDn: BASE_DN,
    bindDn: BIND_DN,
    userBase: "ou=people",
    userObjectClasses: ["inetOrgPerson"],
    userFilters: ["uid", "mail"],
    timeout: "3s",
    rootCa: dir.caPem,
    attributes: LDAP_ATTRIBUTES,
    ...extra,
  });
  const signIn = (c: LdapConfig, loginName: string, password: string) => ldapSignIn(c, BIND_PASSWORD, loginName, password, settings);

  it("signs in over ldaps:// with the CA given as rootCa, by any filter attribute, and maps the attributes", async () => {
    for (const name of ["alice", "alice@example.org"]) {
      expect(await signIn(config(), name, PASSWORD)).toMatchObject({
        ok: true,
        user: {
          id: "alice",
          username: "alice",
          email: "alice@example.org",
          emailVerified: false,
          givenName: "Alice",
          familyName: "Liddell",
          displayName: "Alice Liddell",
          preferredLanguage: "de",
          phone: "+41 44 555 01 01",
        },
        raw: { dn: `cn=Alice Liddell,ou=people,${BASE_DN}`, uid: "alice" },
      });
    }
  });

  it("signs in over ldap:// and over ldap:// upgraded with StartTLS", async () => {
    expect(await signIn(config({ servers: [dir.ldapUrl], rootCa: "" }), "alice", PASSWORD)).toMatchObject({ ok: true });
    expect(await signIn(config({ servers: [dir.ldapUrl], startTls: true }), "alice", PASSWORD)).toMatchObject({ ok: true });
  });

  it("verifies certificates: without the CA, ldaps:// and StartTLS fail as an unusable server", async () => {
    for (const c of [config({ rootCa: "" }), config({ servers: [dir.ldapUrl], startTls: true, rootCa: "" })]) {
      const error = await signIn(c, "alice", PASSWORD).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UpstreamError);
      expect((error as UpstreamError).kind).toBe("unreachable");
      expect((error as UpstreamError).message).toMatch(/certificate/i);
    }
  });

  it("answers a wrong password and an unknown user alike, and refuses an empty password before any bind", async () => {
    expect(await signIn(config(), "alice", "wrong")).toEqual({ ok: false, reason: "wrong_password" });
    expect(await signIn(config(), "nobody", PASSWORD)).toEqual({ ok: false, reason: "unknown_name" });
    // slapd here lets a DN without password bind (allow bind_anon_cred): only the check before the bind refuses it.
    expect(await signIn(config(), "alice", "")).toMatchObject({ ok: false });
  });

  it("matches the login name as text: *, ( and ) find no one else and find the one who has them", async () => {
    for (const name of ["*", "a*", "alice)(uid=*", "*)(|(uid=*", "alice)(|(objectClass=*"]) {
      expect(await signIn(config(), name, PASSWORD), name).toMatchObject({ ok: false });
    }
    expect(await signIn(config(), "st*r(x)", "Star-pw-1")).toMatchObject({ ok: true, user: { id: "st*r(x)" } });
    expect(await signIn(config(), "st*", "Star-pw-1")).toMatchObject({ ok: false });
  });

  it("trusts the CAs of NODE_EXTRA_CA_CERTS as part of Node's store when a rootCa is given too", async () => {
    const other = await anotherCa();
    const saved = process.env.NODE_EXTRA_CA_CERTS;
    const file = join(tmpdir(), `ldap-extra-ca-${process.pid}.pem`);
    await writeFile(file, dir.caPem);
    try {
      // The provider's rootCa is not the server's CA; the file Node extends its store with is.
      process.env.NODE_EXTRA_CA_CERTS = file;
      expect(await signIn(config({ rootCa: other }), "alice", PASSWORD)).toMatchObject({ ok: true });
      delete process.env.NODE_EXTRA_CA_CERTS;
      await expect(signIn(config({ rootCa: other }), "alice", PASSWORD)).rejects.toMatchObject({ kind: "unreachable" });
    } finally {
      if (saved === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
      else process.env.NODE_EXTRA_CA_CERTS = saved;
      await rm(file, { force: true });
    }
  });

  it("tries the servers in order, and fails within the timeout when none answers", async () => {
    const refused = `ldap://127.0.0.1:${await freePort()}`;
    const hanging = await silentServer();
    try {
      expect(await signIn(config({ servers: [refused, hanging.url, dir.ldapsUrl], timeout: "0.500s" }), "alice", PASSWORD)).toMatchObject({ ok: true });
      const started = Date.now();
      const error = await signIn(config({ servers: [hanging.url], timeout: "0.500s" }), "alice", PASSWORD).catch((e: unknown) => e);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(error).toMatchObject({ kind: "unreachable" });
    } finally {
      await hanging.close();
    }
  });

  it("refuses internal addresses unless allowed, and a refused bind account is the provider's fault", async () => {
    await expect(ldapSignIn(config(), BIND_PASSWORD, "alice", PASSWORD, { ...settings, allowPrivate: false })).rejects.toMatchObject({
      kind: "unreachable",
      message: expect.stringContaining("internal address"),
    });
    await expect(ldapSignIn(config(), "not-the-bind-password", "alice", PASSWORD, settings)).rejects.toMatchObject({ kind: "invalid" });
  });
});
