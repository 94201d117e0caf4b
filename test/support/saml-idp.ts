import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { inflateRawSync } from "node:zlib";
import { Constants, IdentityProvider, SamlLib, ServiceProvider, setSchemaValidator } from "samlify";
import { newSpKeyPair, type SpKeyPair } from "../../src/domain/idp/saml.js";
import { validateSamlXml } from "../../src/upstream-idps/saml-schema.js";

/*
 * A SAML 2.0 identity provider for the tests, samlify in its IdP role (the service is samlify
 * in its SP role) behind a small HTTP server: `/sso` takes an AuthnRequest by HTTP-Redirect or
 * HTTP-POST, finds the SP's metadata at the URL that is its entity ID (the service's
 * /idps/<id>/saml/metadata), checks the request's signature when it wants signed requests,
 * and answers the page a real identity provider answers after its own sign-in: a form that
 * posts the signed response and the RelayState to the SP's assertion consumer service.
 *
 * What the next response says, and how it is spoiled (unsigned, expired, another audience,
 * another signer), is set on `next` before the browser arrives; `responses` keeps each one
 * posted, so a test can post one again (a replay).
 */

setSchemaValidator({ validate: validateSamlXml });

export interface SamlPerson {
  nameId: string;
  attributes?: Record<string, string>;
}

export interface Spoil {
  /** The response carries no signature at all. */
  unsigned?: boolean;
  /** Signed by a key the metadata does not name. */
  foreignKey?: boolean;
  /** Conditions and subject confirmation that ended this long ago. */
  expiredMs?: number;
  /** The Audience, instead of the SP's entity ID. */
  audience?: string;
  /** The Recipient and Destination, instead of the SP's ACS. */
  recipient?: string;
  /** InResponseTo, instead of the request's ID. */
  inResponseTo?: string;
  /** The assertion's ID, instead of a new one. */
  assertionId?: string;
}

export interface SamlIdp {
  url: string;
  entityId: string;
  /** The metadata an SAML provider of the service is created with. */
  metadataXml(options?: { wantSignedRequests?: boolean; bindings?: ("post" | "redirect")[] }): string;
  /** Who the next response names, and how it is spoiled. */
  next: { person: SamlPerson; spoil?: Spoil };
  /** Every response sent: where it was posted and its fields. */
  responses: { acs: string; fields: Record<string, string> }[];
  /** The requests received, as parsed (id, issuer, whether signed). */
  requests: { id: string; issuer: string; signed: boolean; binding: "post" | "redirect"; nameIdFormat?: string }[];
  close(): Promise<void>;
}

const XML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };
const xml = (s: string) => s.replace(/[&<>"]/g, (c) => XML_ESCAPES[c]!);

function attributeStatement(attributes: Record<string, string>): string {
  const entries = Object.entries(attributes);
  if (entries.length === 0) return "";
  return `<saml:AttributeStatement>${entries
    .map(
      ([name, value]) =>
        `<saml:Attribute Name="${xml(name)}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic"><saml:AttributeValue xsi:type="xs:string">${xml(value)}</saml:AttributeValue></saml:Attribute>`,
    )
    .join("")}</saml:AttributeStatement>`;
}

async function body(req: IncomingMessage): Promise<Record<string, string>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString()));
}

export async function startSamlIdp(): Promise<SamlIdp> {
  const [keys, foreign] = (await Promise.all([newSpKeyPair(), newSpKeyPair()])).map((s) => JSON.parse(s) as SpKeyPair) as [SpKeyPair, SpKeyPair];
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const entityId = `${url}/metadata`;
  const sso = `${url}/sso`;
  const settings = (wantSignedRequests: boolean, bindings: ("post" | "redirect")[], key: SpKeyPair) =>
    IdentityProvider({
      entityID: entityId,
      privateKey: key.privateKey,
      signingCert: keys.certificate,
      wantAuthnRequestsSigned: wantSignedRequests,
      singleSignOnService: bindings.map((b) => ({ Binding: Constants.namespace.binding[b], Location: sso })),
      singleLogoutService: [{ Binding: Constants.namespace.binding.redirect, Location: `${url}/slo` }],
      nameIDFormat: [
        "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
        "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
        "urn:oasis:names:tc:SAML:2.0:nameid-format:transient",
      ],
    });
  const spByEntity = new Map<string, ReturnType<typeof ServiceProvider>>();
  const idp: SamlIdp = {
    url,
    entityId,
    metadataXml: ({ wantSignedRequests = false, bindings = ["post", "redirect"] as ("post" | "redirect")[] } = {}) =>
      settings(wantSignedRequests, bindings, keys).getMetadata(),
    next: { person: { nameId: "" } },
    responses: [],
    requests: [],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };

  async function spOf(entity: string) {
    let sp = spByEntity.get(entity);
    if (!sp) {
      const res = await fetch(entity);
      if (!res.ok) throw new Error(`SP metadata at ${entity}: ${res.status}`);
      sp = ServiceProvider({ metadata: await res.text() });
      spByEntity.set(entity, sp);
    }
    return sp;
  }

  server.on("request", (req, res) => {
    void (async () => {
      const at = new URL(req.url ?? "/", url);
      if (at.pathname !== "/sso") return void res.writeHead(404).end();
      const binding = req.method === "POST" ? "post" : "redirect";
      const fields = binding === "post" ? await body(req) : Object.fromEntries(at.searchParams);
      const raw = Buffer.from(fields.SAMLRequest ?? "", "base64");
      const requestXml = binding === "redirect" ? inflateRawSync(raw).toString() : raw.toString();
      const issuer = /<(?:saml2?:)?Issuer[^>]*>([^<]+)</.exec(requestXml)?.[1] ?? "";
      const sp = await spOf(issuer);
      const signed = binding === "redirect" ? "Signature" in fields : /<(?:ds:)?Signature\b/.test(requestXml);
      const wants = signed;
      const checking = settings(wants, ["post", "redirect"], keys);
      const octetString = at.search.slice(1).split("&Signature=")[0]!;
      const parsed = await checking.parseLoginRequest(
        sp,
        binding,
        binding === "redirect" ? ({ query: fields, octetString } as never) : ({ body: fields } as never),
      );
      const request = parsed.extract.request as { id: string };
      const nameIdFormat = (parsed.extract as { nameIDPolicy?: { format?: string } }).nameIDPolicy?.format;
      idp.requests.push({ id: request.id, issuer, signed, binding, ...(nameIdFormat && { nameIdFormat }) });
      const { person, spoil = {} } = idp.next;
      const signer = settings(false, ["post", "redirect"], spoil.foreignKey ? foreign : keys);
      const acs = sp.entityMeta.getAssertionConsumerService("post") as string;
      const now = Date.now();
      const notOnOrAfter = new Date(spoil.expiredMs ? now - spoil.expiredMs : now + 5 * 60_000).toISOString();
      const values = {
        ID: `_${crypto.randomUUID()}`,
        AssertionID: spoil.assertionId ?? `_${crypto.randomUUID()}`,
        Destination: spoil.recipient ?? acs,
        Audience: spoil.audience ?? sp.entityMeta.getEntityID(),
        SubjectRecipient: spoil.recipient ?? acs,
        Issuer: entityId,
        IssueInstant: new Date(spoil.expiredMs ? now - spoil.expiredMs - 60_000 : now).toISOString(),
        StatusCode: "urn:oasis:names:tc:SAML:2.0:status:Success",
        ConditionsNotBefore: new Date(spoil.expiredMs ? now - spoil.expiredMs - 60_000 : now - 1000).toISOString(),
        ConditionsNotOnOrAfter: notOnOrAfter,
        SubjectConfirmationDataNotOnOrAfter: notOnOrAfter,
        NameIDFormat: nameIdFormat ?? "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified",
        NameID: xml(person.nameId),
        InResponseTo: spoil.inResponseTo ?? request.id,
        AuthnStatement: `<saml:AuthnStatement AuthnInstant="${new Date(now).toISOString()}" SessionIndex="_s${now}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`,
        AttributeStatement: attributeStatement(person.attributes ?? {}),
      };
      // The statements are XML; every other value is text, escaped (NameID already is).
      const markup = new Set(["AuthnStatement", "AttributeStatement", "NameID"]);
      const rendered = SamlLib.defaultLoginResponseTemplate.context.replace(/\{(\w+)\}/g, (_, tag: string) => {
        const value = values[tag as keyof typeof values];
        return markup.has(tag) ? value : xml(value);
      });
      let samlResponse: string;
      if (spoil.unsigned) samlResponse = Buffer.from(rendered).toString("base64");
      else {
        const made = await signer.createLoginResponse(
          sp,
          parsed as never,
          "post",
          {},
          { relayState: fields.RelayState ?? "", customTagReplacement: () => ({ id: values.ID, context: rendered }) },
        );
        samlResponse = (made as { context: string }).context;
      }
      const posted = { SAMLResponse: samlResponse, ...(fields.RelayState !== undefined && { RelayState: fields.RelayState }) };
      idp.responses.push({ acs, fields: posted });
      const hidden = Object.entries(posted)
        .map(([name, value]) => `<input type="hidden" name="${xml(name)}" value="${xml(value)}">`)
        .join("");
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(
        `<!doctype html><html><body><form method="post" action="${xml(acs)}">${hidden}<button type="submit">Continue</button></form><script>document.forms[0].submit()</script></body></html>`,
      );
    })().catch((error: unknown) => {
      res.writeHead(400, { "content-type": "text/plain" });
      res.end(`test IdP refused the request: ${(error as Error).message}`);
    });
  });
  return idp;
}
