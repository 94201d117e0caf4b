import type { JsonObject } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PlatformOrganizations } from "../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformInstances } from "../../gen/platform/resources/instance/v3alpha/instance_service_pb.js";
import { PlatformBrandingSettings } from "../../gen/platform/settings/branding/v3alpha/branding_service_pb.js";
import { BUILT_IN_BRANDING, resolveBranding } from "../../src/domain/settings/branding.js";
import { PROTOCOLS, protocolClient, type CallResult, type Protocol } from "../support/clients.js";
import { comparable } from "../support/comparable.js";
import { DATABASE_KINDS } from "../support/database.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { SYSTEM_OWNER, createOrg, details, failed, instanceOwner, ok, orgOwner, type Msg } from "./helpers.js";

/**
 * PlatformBrandingSettings: colors, flags and font inherited system → instance → organization
 * with owners, resets, validation and lower-casing, contrast warnings; the images uploaded as
 * raw REST bodies and as HttpBody messages, checked by content, SVG sanitized, served from the
 * service's own origin with cache headers, inherited, removed, and kept apart per instance;
 * resolveBranding as the login pages call it.
 */

const BRANDING = PlatformBrandingSettings;
const MAX_IMAGE_BYTES = 16_384;
const MAX_BODY_BYTES = 65_536;
const COLORS = ["primaryColor", "backgroundColor", "warnColor", "fontColor", "primaryColorDark", "backgroundColorDark", "warnColorDark", "fontColorDark"];
const RESET_ALL = Object.fromEntries([...COLORS, "hideLoginNameSuffix", "disableWatermark", "font"].map((p) => [p, { reset: true }]));
const IMAGES = ["logo", "logo_dark", "icon", "icon_dark"] as const;

const b64 = (s: string) => Buffer.from(s, "base64");
/** Small real images of each type (1×1 pixel), and one of a type not accepted. */
const PNG = b64("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==");
const JPEG = b64(
  "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=",
);
const WEBP = b64("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==");
const GIF = b64("R0lGODlhAQABAAAAACw=");
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height="10" fill="#5469d4"/></svg>');
const SAMPLES: Record<string, Buffer> = { "image/png": PNG, "image/jpeg": JPEG, "image/webp": WEBP, "image/svg+xml": SVG };

/** Everything sanitizing must take out, beside what it must keep (the drawing, a reference within the image). */
const HOSTILE_SVG = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10" onload="alert(1)">
  <script>alert(2)</script>
  <style>@import url(https://evil.example/x.css);</style>
  <style>@\\69mport "https://evil.example/y.css"; .n { fill: image-set("https://evil.example/i.png" 1x) }</style>
  <style>.mark { fill: #123456 }</style>
  <defs><linearGradient id="g"><stop offset="0" stop-color="#fff"/></linearGradient></defs>
  <a href="javascript:alert(3)"><rect id="r" class="mark" width="5" height="5" onclick="alert(4)"/></a>
  <image href="https://evil.example/tracker.png" width="1" height="1"/>
  <use xlink:href="https://evil.example/sprite.svg#x"/>
  <use href="#r" x="5"/>
  <rect style="fill: url(https://evil.example/p)" fill="url(#g)" width="1" height="1"/>
  <rect stroke="\\75 rl(https://evil.example/s)" width="1" height="1"/>
  <foreignObject width="10" height="10"><div xmlns="http://www.w3.org/1999/xhtml">html</div></foreignObject>
  <set attributeName="onclick" to="alert(5)"/>
</svg>`;

function resolvedBranding(m: Msg) {
  const s = m.settings ?? {};
  const one = (v: Msg, zero: unknown) => ({ value: v?.value ?? zero, ...(v?.owner && { owner: v.owner }) });
  return {
    ...Object.fromEntries(COLORS.map((c) => [c, one(s[c], "")])),
    hideLoginNameSuffix: one(s.hideLoginNameSuffix, false),
    disableWatermark: one(s.disableWatermark, false),
    font: one(s.font, "BRANDING_FONT_UNSPECIFIED"),
    logoUrl: one(s.logoUrl, ""),
    logoDarkUrl: one(s.logoDarkUrl, ""),
    iconUrl: one(s.iconUrl, ""),
    iconDarkUrl: one(s.iconDarkUrl, ""),
  } as Record<string, { value: unknown; owner?: unknown }>;
}

const upload = (image: string, contentType: string, data: Buffer, ctx?: JsonObject): JsonObject => ({
  image,
  content: { contentType, data: data.toString("base64") },
  ...(ctx && { ctx }),
});

describe.each(DATABASE_KINDS)("PlatformBrandingSettings (%s)", (kind) => {
  let server: TestServer;
  let orgA: string;
  let orgB: string;
  let counter = 0;
  const client = (protocol: Protocol = "grpc", baseUrl?: string) => {
    const c = protocolClient(BRANDING, protocol, baseUrl ?? server.baseUrl);
    return {
      set: (settings: JsonObject, ctx?: JsonObject, token = server.adminToken) => c.call("SetBrandingSettings", { settings, ...(ctx && { ctx }) }, token),
      resolve: (ctx?: JsonObject, token = server.adminToken) => c.call("ResolveBrandingSettings", { ...(ctx && { ctx }) }, token),
      upload: (image: string, contentType: string, data: Buffer, ctx?: JsonObject, token = server.adminToken) =>
        c.call("SetBrandingImage", upload(image, contentType, data, ctx), token),
      remove: (image: string, ctx?: JsonObject, token = server.adminToken) => c.call("RemoveBrandingImage", { image, ...(ctx && { ctx }) }, token),
    };
  };
  const SYSTEM = { system: true };
  const inst = () => ({ instanceId: server.instanceId });
  const resolve = async (ctx?: JsonObject, protocol: Protocol = "grpc") =>
    resolvedBranding(ok(await client(protocol).resolve(ctx), `resolve ${JSON.stringify(ctx)}`));
  const get = (path: string, headers: Record<string, string> = {}, baseUrl = server.baseUrl, method = "GET") => fetch(`${baseUrl}${path}`, { method, headers });
  /** POST /settings/v3alpha/branding/{image} as curl sends it: the file as the body. */
  const post = (image: string, contentType: string | undefined, data: Buffer, query = "", token = server.adminToken, baseUrl = server.baseUrl) =>
    fetch(`${baseUrl}/settings/v3alpha/branding/${image}${query}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, ...(contentType && { "content-type": contentType }) },
      body: new Uint8Array(data),
    });

  beforeAll(async () => {
    server = await startTestServer(kind, { PLATFORM_BRANDING_MAX_IMAGE_BYTES: String(MAX_IMAGE_BYTES), PLATFORM_MAX_BODY_BYTES: String(MAX_BODY_BYTES) });
    orgA = await createOrg(server, `Branding A ${++counter}`);
    orgB = await createOrg(server, `Branding B ${counter}`);
  });
  afterAll(() => server?.close());
  afterEach(async () => {
    for (const ctx of [{ orgId: orgA }, { orgId: orgB }, inst(), SYSTEM]) {
      ok(await client().set(RESET_ALL, ctx), `reset ${JSON.stringify(ctx)}`);
      for (const image of IMAGES) ok(await client().remove(image, ctx), `remove ${image} in ${JSON.stringify(ctx)}`);
    }
  });

  it("resolves the built-in branding, owned by the system, and resolveBranding gives it to the login pages", async () => {
    const builtIn = (owned: boolean) => {
      const owner = owned ? { owner: SYSTEM_OWNER } : {};
      return {
        primaryColor: { value: "#5469d4", ...owner },
        backgroundColor: { value: "#fafafa", ...owner },
        warnColor: { value: "#cd3d56", ...owner },
        fontColor: { value: "#000000", ...owner },
        primaryColorDark: { value: "#4a90e2", ...owner },
        backgroundColorDark: { value: "#111827", ...owner },
        warnColorDark: { value: "#ff3b5b", ...owner },
        fontColorDark: { value: "#ffffff", ...owner },
        hideLoginNameSuffix: { value: false, ...owner },
        disableWatermark: { value: false, ...owner },
        font: { value: "BRANDING_FONT_SYSTEM_UI", ...owner },
        logoUrl: { value: "", ...owner },
        logoDarkUrl: { value: "", ...owner },
        iconUrl: { value: "", ...owner },
        iconDarkUrl: { value: "", ...owner },
      };
    };
    expect(await resolve({ orgId: orgA })).toEqual(builtIn(true));
    expect(await resolve()).toEqual(builtIn(true));
    expect(await resolve(SYSTEM)).toEqual(builtIn(false));
    expect(details(ok(await client().resolve({ orgId: orgA })))).toEqual({ sequence: 0, changeDate: undefined, owner: orgOwner(orgA) });
    expect(await resolveBranding(server.service.store.db, { instanceId: server.instanceId, orgId: orgA })).toEqual(BUILT_IN_BRANDING);
    expect(await resolveBranding(server.service.store.db, { instanceId: server.instanceId })).toEqual(BUILT_IN_BRANDING);
  });

  it("inherits system → instance → organization per property, resets fall back to the parent, and resolveBranding follows", async () => {
    const I = instanceOwner(server.instanceId);
    ok(await client().set({ primaryColor: { set: "#0b5cad" }, disableWatermark: { set: true } }, SYSTEM));
    const set = ok(await client().set({ backgroundColor: { set: "#ffffff" }, font: { set: "BRANDING_FONT_HUMANIST" } }, inst()));
    expect(details(set)).toEqual({ sequence: 1, changeDate: expect.any(String), owner: I });
    ok(
      await client("rest").set(
        { fontColor: { set: "#1a1a1a" }, hideLoginNameSuffix: { set: true }, font: { set: "BRANDING_FONT_MONOSPACE" } },
        { orgId: orgA },
      ),
    );

    expect(await resolve({ orgId: orgA })).toMatchObject({
      primaryColor: { value: "#0b5cad", owner: SYSTEM_OWNER },
      backgroundColor: { value: "#ffffff", owner: I },
      fontColor: { value: "#1a1a1a" },
      warnColor: { value: "#cd3d56", owner: SYSTEM_OWNER },
      hideLoginNameSuffix: { value: true },
      disableWatermark: { value: true, owner: SYSTEM_OWNER },
      font: { value: "BRANDING_FONT_MONOSPACE" },
    });
    expect((await resolve({ orgId: orgA })).fontColor).toEqual({ value: "#1a1a1a" });
    expect(await resolve({ orgId: orgB })).toMatchObject({
      fontColor: { value: "#000000", owner: SYSTEM_OWNER },
      font: { value: "BRANDING_FONT_HUMANIST", owner: I },
      hideLoginNameSuffix: { value: false, owner: SYSTEM_OWNER },
    });
    expect(await resolveBranding(server.service.store.db, { instanceId: server.instanceId, orgId: orgA })).toEqual({
      ...BUILT_IN_BRANDING,
      primaryColor: "#0b5cad",
      backgroundColor: "#ffffff",
      fontColor: "#1a1a1a",
      hideLoginNameSuffix: true,
      disableWatermark: true,
      font: "monospace",
    });
    expect(await resolveBranding(server.service.store.db, { instanceId: server.instanceId })).toMatchObject({
      fontColor: "#000000",
      font: "humanist",
      backgroundColor: "#ffffff",
    });

    const reset = ok(await client().set({ font: { reset: true }, fontColor: { reset: true } }, { orgId: orgA }));
    expect(details(reset)).toMatchObject({ sequence: 2, owner: orgOwner(orgA) });
    expect(await resolve({ orgId: orgA })).toMatchObject({
      font: { value: "BRANDING_FONT_HUMANIST", owner: I },
      fontColor: { value: "#000000", owner: SYSTEM_OWNER },
    });
    ok(await client().set({ font: { reset: true } }, inst()));
    expect((await resolve({ orgId: orgA })).font).toEqual({ value: "BRANDING_FONT_SYSTEM_UI", owner: SYSTEM_OWNER });
    // Writing what is already set changes nothing.
    const same = ok(await client().set({ backgroundColor: { set: "#FFFFFF" } }, inst()));
    expect(details(same).sequence).toBe(details(ok(await client().resolve(inst()))).sequence);
    // Each change is an event of the context's branding.
    const events = await server.service.store.db
      .selectFrom("events")
      .select(["event_type", "payload"])
      .where("aggregate_type", "=", "settings.branding")
      .where("aggregate_id", "=", orgA)
      .orderBy("sequence")
      .execute();
    expect(events.map((e) => e.event_type)).toEqual(["settings.branding.set", "settings.branding.set"]);
    expect(events[1]!.payload).toEqual({ set: {}, reset: ["font_color", "font"] });
  });

  it("keeps colors in lower case and refuses what is not #rrggbb, an unspecified font and an empty change", async () => {
    ok(await client().set({ primaryColor: { set: "#ABCDEF" }, warnColorDark: { set: "#Ff00aA" } }, { orgId: orgA }));
    expect(await resolve({ orgId: orgA })).toMatchObject({ primaryColor: { value: "#abcdef" }, warnColorDark: { value: "#ff00aa" } });
    expect(await resolveBranding(server.service.store.db, { instanceId: server.instanceId, orgId: orgA })).toMatchObject({
      primaryColor: "#abcdef",
      warnColorDark: "#ff00aa",
    });
    for (const protocol of ["grpc", "connect", "rest"] as const) {
      for (const bad of ["abcdef", "#abcd", "#abcdefa", "#ggg000", "red", "", " #abcdef"]) {
        const r = await client(protocol).set({ fontColor: { set: bad } }, { orgId: orgA });
        expect(failed(r, Code.InvalidArgument, `${protocol} ${JSON.stringify(bad)}`)).toContain("font_color");
        if (protocol === "rest") expect(r.httpStatus).toBe(400);
      }
      failed(await client(protocol).set({ font: { set: "BRANDING_FONT_UNSPECIFIED" } }, { orgId: orgA }), Code.InvalidArgument, `${protocol} font`);
      failed(await client(protocol).set({ primaryColor: {} }, { orgId: orgA }), Code.InvalidArgument, `${protocol} empty`);
      failed(await client(protocol).set({ primaryColor: { reset: false } }, { orgId: orgA }), Code.InvalidArgument, `${protocol} reset false`);
    }
    expect((await resolve({ orgId: orgA })).fontColor).toEqual({ value: "#000000", owner: SYSTEM_OWNER });
  });

  it("warns about color pairs below WCAG AA after the change, as resolved in the context written, and makes the change", async () => {
    // The built-in colors pass.
    expect(ok(await client().set({ disableWatermark: { set: true } }, inst())).warnings).toBeUndefined();
    const grey = ok(await client().set({ fontColor: { set: "#777777" }, backgroundColor: { set: "#ffffff" } }, inst()));
    expect(grey.warnings).toEqual([
      {
        foreground: "font_color",
        background: "background_color",
        ratio: 4.48,
        minimum: 4.5,
        message: "light mode: font_color #777777 on background_color #ffffff has a contrast of 4.48:1, below the 4.5:1 of WCAG AA",
      },
    ]);
    expect((await resolve()).fontColor).toEqual({ value: "#777777" });
    // In the organization the instance's grey is inherited: a change of another color there still reports it.
    const navy = ok(await client("rest").set({ primaryColorDark: { set: "#1a2a6c" } }, { orgId: orgA }));
    expect(navy.warnings.map((w: Msg) => [w.foreground, w.background])).toEqual([
      ["font_color", "background_color"],
      ["primary_color_dark", "background_color_dark"],
    ]);
    expect(navy.warnings[1].message).toMatch(/^dark mode: primary_color_dark #1a2a6c on background_color_dark #111827 has a contrast of 1\.\d+:1/);
    // Errors are text too: a pale warn color on the dark background.
    const warn = ok(await client().set({ warnColorDark: { set: "#400000" } }, { orgId: orgB }));
    expect(warn.warnings.map((w: Msg) => w.foreground)).toEqual(["font_color", "warn_color_dark"]);
    ok(await client().set({ fontColor: { reset: true }, backgroundColor: { reset: true } }, inst()));
    expect(ok(await client().set({ warnColorDark: { reset: true } }, { orgId: orgB })).warnings).toBeUndefined();
  });

  it.each(PROTOCOLS)("uploads PNG, JPEG, WebP and SVG (%s: a raw REST body, else an HttpBody message) and serves each from its URL", async (protocol) => {
    for (const [type, data] of Object.entries(SAMPLES)) {
      const label = `${protocol} ${type}`;
      const m = ok(await client(protocol).upload("logo", type, data, { orgId: orgA }), label);
      expect(m.url, label).toMatch(new RegExp(`^/assets/v3alpha/branding/${orgA}/logo/[A-Za-z0-9_-]{43}$`));
      expect(m.details.owner, label).toEqual(orgOwner(orgA));
      expect(m.removed, label).toBeUndefined();
      expect((await resolve({ orgId: orgA })).logoUrl, label).toEqual({ value: m.url });
      const served = await get(m.url);
      expect(served.status, label).toBe(200);
      expect(served.headers.get("content-type"), label).toBe(type);
      expect(Buffer.from(await served.arrayBuffer()).equals(data), label).toBe(true);
    }
  });

  it("takes an upload as curl sends it: the file as the body, ctx in the query", async () => {
    // A content type with parameters is read by its type.
    const curl = await post("icon_dark", "image/png; charset=binary", PNG, `?ctx.orgId=${orgB}`);
    expect(curl.status).toBe(200);
    const body = (await curl.json()) as Msg;
    expect(body.details.owner).toEqual(orgOwner(orgB));
    expect((await resolve({ orgId: orgB })).iconDarkUrl).toEqual({ value: body.url });
    expect(await resolveBranding(server.service.store.db, { instanceId: server.instanceId, orgId: orgB })).toEqual({
      ...BUILT_IN_BRANDING,
      iconDarkUrl: body.url,
    });
  });

  it("serves images with long caching, an ETag answered by 304, nosniff, and a policy that lets an SVG load and run nothing", async () => {
    const png = ok(await client().upload("icon", "image/png", PNG));
    expect(png.url).toMatch(/^\/assets\/v3alpha\/branding\/instance\/icon\//);
    const res = await get(png.url);
    expect(res.status).toBe(200);
    const etag = res.headers.get("etag")!;
    expect(etag).toBe(`"${png.url.split("/").pop()}"`);
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-length")).toBe(String(PNG.length));
    expect(res.headers.get("content-security-policy")).toBeNull();
    const again = await get(png.url, { "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(again.headers.get("etag")).toBe(etag);
    expect(await again.text()).toBe("");
    expect((await get(png.url, { "if-none-match": `"other", W/${etag}` })).status).toBe(304);
    expect((await get(png.url, { "if-none-match": '"other"' })).status).toBe(200);
    const head = await get(png.url, {}, server.baseUrl, "HEAD");
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(PNG.length));

    const svg = ok(await client().upload("logo", "image/svg+xml", SVG, { orgId: orgA }));
    const served = await get(svg.url);
    expect(served.headers.get("content-type")).toBe("image/svg+xml");
    expect(served.headers.get("content-security-policy")).toBe("default-src 'none'; style-src 'unsafe-inline'");

    const missing = png.url.replace(/[^/]+$/, "A".repeat(43));
    for (const path of [
      missing,
      "/assets/v3alpha/branding/instance/banner/abc",
      `/assets/v3alpha/branding/${orgB}/icon/${png.url.split("/").pop()}`,
      "/assets/v3alpha/branding/",
      "/assets/v3alpha/branding/instance/icon/a/b",
    ]) {
      const r = await get(path);
      expect(r.status, path).toBe(404);
      expect(((await r.json()) as Msg).code, path).toBe(Code.NotFound);
    }
    const posted = await fetch(`${server.baseUrl}${png.url}`, { method: "POST" });
    expect(posted.status).toBe(405);
    expect(posted.headers.get("allow")).toBe("GET, HEAD");
  });

  it("refuses content that is not what its type says, types not accepted, empty and too large images, with InvalidArgument", async () => {
    const cases: [string, Buffer, RegExp][] = [
      ["image/jpeg", PNG, /the content is image\/png, not image\/jpeg/],
      ["image/png", WEBP, /the content is image\/webp, not image\/png/],
      ["image/webp", Buffer.from("RIFF\u0000\u0000\u0000\u0000WAVEfmt "), /not image\/webp/],
      ["image/png", Buffer.from("just text, no picture"), /of no image type known here, not image\/png/],
      ["image/svg+xml", PNG, /the content is image\/png, not image\/svg\+xml/],
      ["image/svg+xml", Buffer.from("<svg><g></svg>"), /not an SVG image: it is not well-formed XML/],
      ["image/svg+xml", Buffer.from("<svg>no namespace</svg>"), /root element is not <svg> in the SVG namespace/],
      ["image/svg+xml", Buffer.from('<html xmlns="http://www.w3.org/1999/xhtml"/>'), /root element is not <svg>/],
      [
        "image/svg+xml",
        Buffer.from('<!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa">]><svg xmlns="http://www.w3.org/2000/svg"><text>&a;&a;</text></svg>'),
        /declares entities/,
      ],
      ["image/svg+xml", Buffer.from([0x3c, 0x73, 0x76, 0x67, 0xff, 0xfe]), /not UTF-8/],
      ["image/gif", GIF, /content type "image\/gif" is not accepted: send image\/png, image\/jpeg, image\/webp, image\/svg\+xml/],
      ["text/html", Buffer.from("<p>"), /content type "text\/html" is not accepted/],
      ["image/png", Buffer.alloc(0), /the image is empty/],
      [
        "image/png",
        Buffer.concat([PNG, Buffer.alloc(MAX_IMAGE_BYTES + 1 - PNG.length)]),
        new RegExp(`has ${MAX_IMAGE_BYTES + 1} bytes, more than the ${MAX_IMAGE_BYTES} allowed \\(PLATFORM_BRANDING_MAX_IMAGE_BYTES\\)`),
      ],
    ];
    for (const protocol of ["grpc", "connect", "rest"] as const) {
      for (const [type, data, message] of cases) {
        const label = `${protocol} ${type} ${message}`;
        const r = await client(protocol).upload("logo", type, data, { orgId: orgA });
        expect(failed(r, Code.InvalidArgument, label), label).toMatch(message);
        if (protocol === "rest") expect(r.httpStatus, label).toBe(400);
      }
      failed(await client(protocol).upload("banner", "image/png", PNG, { orgId: orgA }), Code.InvalidArgument, `${protocol} unknown image`);
    }
    // Exactly at the limit is fine.
    ok(await client().upload("logo", "image/png", Buffer.concat([PNG, Buffer.alloc(MAX_IMAGE_BYTES - PNG.length)]), { orgId: orgA }));
    ok(await client().remove("logo", { orgId: orgA }));
    // No content type at all, over REST.
    const bare = await post("logo", undefined, PNG, `?ctx.orgId=${orgA}`);
    expect(bare.status).toBe(400);
    expect(((await bare.json()) as Msg).message).toMatch(/is not accepted/);
    // Above the request body limit, every call's: 413 over REST, ResourceExhausted over gRPC.
    const huge = Buffer.concat([PNG, Buffer.alloc(MAX_BODY_BYTES + 1)]);
    const tooLarge = await post("logo", "image/png", huge, `?ctx.orgId=${orgA}`);
    expect(tooLarge.status).toBe(413);
    expect(((await tooLarge.json()) as Msg).code).toBe(Code.ResourceExhausted);
    failed(await client("grpc").upload("logo", "image/png", huge, { orgId: orgA }), Code.ResourceExhausted);
    expect((await resolve({ orgId: orgA })).logoUrl).toEqual({ value: "", owner: SYSTEM_OWNER });
    expect(await server.service.store.db.selectFrom("settings_files").select("name").where("org_id", "=", orgA).execute()).toEqual([]);
  });

  it("sanitizes SVG: no script, event handler, foreign object, animation or reference outside the image (CSS escapes included); the drawing stays", async () => {
    for (const protocol of ["grpc", "rest"] as const) {
      const m = ok(await client(protocol).upload("logo_dark", "image/svg+xml", Buffer.from(HOSTILE_SVG), { orgId: orgA }), protocol);
      expect([...m.removed].sort(), protocol).toEqual(
        [
          "foreignObject element",
          "href attribute",
          "onclick attribute",
          "onload attribute",
          "script element",
          "set element",
          "stroke attribute",
          "style attribute",
          "style element with an external reference",
          "xlink:href attribute",
        ].sort(),
      );
      const served = await (await get(m.url)).text();
      for (const gone of ["<script", "alert", "onload", "onclick", "foreignObject", "evil.example", "javascript:", "@import", "<set"])
        expect(served, `${protocol} ${gone}`).not.toContain(gone);
      for (const kept of ['viewBox="0 0 10 10"', 'class="mark"', ".mark { fill: #123456 }", 'href="#r"', 'fill="url(#g)"', "<linearGradient"])
        expect(served, `${protocol} ${kept}`).toContain(kept);
      expect(served.startsWith("<svg")).toBe(true);
    }
  });

  it("inherits images like colors; removing one shows the parent's again and retires its URL; the same image again changes nothing", async () => {
    const I = instanceOwner(server.instanceId);
    const before = details(ok(await client().resolve({ orgId: orgA }))).sequence;
    const instanceLogo = ok(await client().upload("logo", "image/png", PNG));
    const orgLogo = ok(await client().upload("logo", "image/webp", WEBP, { orgId: orgA }));
    const systemIcon = ok(await client().upload("icon", "image/svg+xml", SVG, SYSTEM));
    expect(systemIcon.url).toMatch(/^\/assets\/v3alpha\/branding\/system\/icon\//);
    expect(await resolve({ orgId: orgA })).toMatchObject({ logoUrl: { value: orgLogo.url }, iconUrl: { value: systemIcon.url, owner: SYSTEM_OWNER } });
    expect(await resolve({ orgId: orgB })).toMatchObject({
      logoUrl: { value: instanceLogo.url, owner: I },
      iconUrl: { value: systemIcon.url, owner: SYSTEM_OWNER },
    });
    expect(await resolveBranding(server.service.store.db, { instanceId: server.instanceId, orgId: orgB })).toEqual({
      ...BUILT_IN_BRANDING,
      logoUrl: instanceLogo.url,
      iconUrl: systemIcon.url,
    });
    // The system's images are served on every instance's host.
    expect((await get(systemIcon.url)).status).toBe(200);

    const again = ok(await client().upload("logo", "image/webp", WEBP, { orgId: orgA }));
    expect(again).toEqual(orgLogo);
    const replaced = ok(await client("connect").upload("logo", "image/jpeg", JPEG, { orgId: orgA }));
    expect(replaced.url).not.toBe(orgLogo.url);
    expect(details(replaced).sequence).toBe(details(orgLogo).sequence + 1);
    expect((await get(orgLogo.url)).status).toBe(404);
    expect((await get(replaced.url)).status).toBe(200);

    const removed = await fetch(`${server.baseUrl}/settings/v3alpha/branding/logo?ctx.orgId=${orgA}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${server.adminToken}` },
    });
    expect(removed.status).toBe(200);
    expect(details((await removed.json()) as Msg)).toMatchObject({ sequence: details(replaced).sequence + 1, owner: orgOwner(orgA) });
    expect((await resolve({ orgId: orgA })).logoUrl).toEqual({ value: instanceLogo.url, owner: I });
    expect((await get(replaced.url)).status).toBe(404);
    // Removing what is not there changes nothing.
    const nothing = ok(await client().remove("logo", { orgId: orgA }));
    expect(details(nothing).sequence).toBe(details(replaced).sequence + 1);
    failed(await client().remove("banner", { orgId: orgA }), Code.InvalidArgument);
    const events = await server.service.store.db
      .selectFrom("events")
      .select(["event_type", "payload"])
      .where("aggregate_type", "=", "settings.branding")
      .where("aggregate_id", "=", orgA)
      .where("sequence", ">", before)
      .orderBy("sequence")
      .execute();
    expect(events.map((e) => e.payload)).toEqual([
      { set: { logo_url: orgLogo.url }, reset: [] },
      { set: { logo_url: replaced.url }, reset: [] },
      { set: {}, reset: ["logo_url"] },
    ]);
  });

  it("gives the same answers over every protocol", async () => {
    const run = async (protocol: Protocol) => {
      const org = await createOrg(server, `Branding ${protocol}`);
      const c = client(protocol);
      const ctx = { orgId: org };
      const steps: CallResult[] = [
        await c.resolve(ctx),
        await c.set({ primaryColor: { set: "#FFD700" }, font: { set: "BRANDING_FONT_TRANSITIONAL" } }, ctx),
        await c.set({ primaryColor: { set: "nope" } }, ctx),
        await c.upload("icon", "image/png", PNG, ctx),
        await c.upload("icon", "image/png", GIF, ctx),
        await c.resolve(ctx),
        await c.remove("icon", ctx),
        await c.set({ primaryColor: { reset: true }, font: { reset: true } }, ctx),
        await c.resolve(ctx),
      ];
      // URLs name the organization too: replaced inside strings, not only as whole values.
      return JSON.parse(JSON.stringify(steps.map((s) => comparable(s, { org }))).replaceAll(org, "<org>")) as unknown[];
    };
    const reference = await run("grpc");
    expect(reference[1]).toMatchObject({ warnings: [{ foreground: "primary_color", background: "background_color" }] });
    expect(reference[2]).toEqual({ code: Code.InvalidArgument });
    expect(reference[5]).toMatchObject({
      settings: { primaryColor: { value: "#ffd700" }, iconUrl: { value: expect.stringMatching(/^\/assets\/v3alpha\/branding\/<org>\/icon\//) } },
    });
    for (const protocol of PROTOCOLS.filter((p) => p !== "grpc")) expect(await run(protocol), protocol).toEqual(reference);
  });

  it("keeps instances apart: an image is served on its own instance's host only, and goes with its organization and instance", async () => {
    const other = await server.createInstance("127.0.0.1");
    const theirs = ok(await client("grpc", other.baseUrl).upload("logo", "image/png", PNG, { orgId: other.orgId }, other.adminToken));
    const theirInstanceIcon = ok(await client("rest", other.baseUrl).upload("icon", "image/svg+xml", SVG, undefined, other.adminToken));
    const ours = ok(await client().upload("icon", "image/png", PNG));
    expect((await get(theirs.url, {}, other.baseUrl)).status).toBe(200);
    // Our host, their organization's path: nothing.
    expect((await get(theirs.url)).status).toBe(404);
    // "instance" is the Host's instance: each serves its own icon at its own URL only.
    expect((await get(theirInstanceIcon.url)).status).toBe(404);
    expect((await get(ours.url, {}, other.baseUrl)).status).toBe(404);
    // Their administrator cannot name our organization, nor upload in it.
    failed(await client("grpc", other.baseUrl).upload("logo", "image/png", PNG, { orgId: orgA }, other.adminToken), Code.NotFound);
    expect((await resolve({ orgId: orgA })).logoUrl).toEqual({ value: "", owner: SYSTEM_OWNER });
    // An unknown host serves nothing.
    expect((await fetch(`${server.baseUrl}${theirs.url}`, { headers: { host: "nobody.example" } })).status).toBe(404);

    // Removing an organization removes its images, removing the instance the rest.
    const orgs = protocolClient(PlatformOrganizations, "grpc", other.baseUrl);
    const doomed = ok(await orgs.call("CreateOrganization", { organization: { name: "Doomed" } }, other.adminToken)).details.id as string;
    const doomedLogo = ok(await client("grpc", other.baseUrl).upload("logo", "image/jpeg", JPEG, { orgId: doomed }, other.adminToken));
    ok(await orgs.call("DeleteOrganization", { id: doomed }, other.adminToken));
    expect((await get(doomedLogo.url, {}, other.baseUrl)).status).toBe(404);
    const files = () =>
      server.service.store.db.selectFrom("settings_files").select(["org_id", "name"]).where("instance_id", "=", other.instanceId).orderBy("name").execute();
    expect(await files()).toEqual([
      { org_id: "", name: "icon" },
      { org_id: other.orgId, name: "logo" },
    ]);
    ok(await protocolClient(PlatformInstances, "grpc", server.baseUrl).call("DeleteInstance", { id: other.instanceId }, server.adminToken));
    expect(await files()).toEqual([]);
    expect((await get(ours.url)).status).toBe(200);
  });

  it("previews unsaved values as the sign-in page, on every protocol, storing nothing; refuses what Set would refuse", async () => {
    ok(await client().set({ backgroundColor: { set: "#fffdf5" } }, { orgId: orgA }));
    const changes = { primaryColor: { set: "#0B7285" }, disableWatermark: { set: true } };
    // REST: the page itself, under a CSP that runs nothing.
    const res = await fetch(`${server.baseUrl}/settings/v3alpha/branding/_preview?ctx.orgId=${orgA}&language=de`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(changes),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    const html = await res.text();
    expect(html).toMatch(/^<!doctype html><html lang="de">/);
    // The unsaved color, the organization's saved background beneath it, no watermark.
    expect(html).toContain("#0b7285");
    expect(html).toContain("#fffdf5");
    expect(html).not.toContain("<footer>");
    for (const protocol of PROTOCOLS) {
      const page = ok(
        await protocolClient(BRANDING, protocol, server.baseUrl).call(
          "PreviewBrandingSettings",
          { settings: changes, ctx: { orgId: orgA } },
          server.adminToken,
        ),
        protocol,
      ).page as Msg;
      expect(page.contentType, protocol).toBe("text/html; charset=utf-8");
      const shown = Buffer.from(String(page.data), "base64").toString();
      expect(shown, protocol).toContain("#0b7285");
      expect(shown, protocol).toContain('lang="en"');
    }
    // Nothing stored: the primary color is still the built-in one.
    expect((await resolve({ orgId: orgA })).primaryColor).toEqual({ value: "#5469d4", owner: SYSTEM_OWNER });
    // With no changes, the branding in effect; a reset shows the parent's value.
    ok(await client().set({ primaryColor: { set: "#112233" } }, { orgId: orgA }));
    const preview = async (settings: JsonObject, extra: JsonObject = {}) =>
      protocolClient(BRANDING, "connect", server.baseUrl).call("PreviewBrandingSettings", { settings, ctx: { orgId: orgA }, ...extra }, server.adminToken);
    const text = (r: CallResult) => Buffer.from(String((ok(r).page as Msg).data), "base64").toString();
    expect(text(await preview({}))).toContain("#112233");
    expect(text(await preview({ primaryColor: { reset: true } }))).not.toContain("#112233");
    expect(failed(await preview({ primaryColor: { set: "blue" } }), Code.InvalidArgument)).toMatch(/primary/i);
    expect(failed(await preview({}, { language: "xx" }), Code.InvalidArgument)).toMatch(/language: "xx"/);
  });
});
