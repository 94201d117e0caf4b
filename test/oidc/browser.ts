/**
 * A tiny browser for the login pages: fetch with a cookie jar (path-aware, honouring
 * deletions), redirects followed by hand (so that every hop is seen and the client's
 * redirect URI is never fetched), and forms parsed from the HTML by their field names.
 */

interface Hop {
  status: number;
  url: string;
  location?: string;
}

export interface Page {
  status: number;
  /** Where the page was answered from; or, when `left`, the URL outside the server we were sent to. */
  url: string;
  headers: Headers;
  html: string;
  /** True when the last redirect pointed outside the server (the client's redirect URI). */
  left: boolean;
  hops: Hop[];
}

export interface Form {
  id?: string;
  method: string;
  action: string;
  fields: Record<string, string>;
  /** Names of inputs that are not hidden (what a person types into). */
  visible: string[];
}

interface Cookie {
  name: string;
  value: string;
  path: string;
  /** As the attribute says; browsers take a cookie without one as Lax. */
  sameSite: "strict" | "lax" | "none";
}

/** A request's options; `crossSite`: sent from another site's page, as a form it posts. */
interface RequestInit {
  method?: string;
  form?: Record<string, string>;
  headers?: Record<string, string>;
  crossSite?: boolean;
}

const ENTITIES: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'", "&#x27;": "'" };
export const unescapeHtml = (s: string) => s.replace(/&(amp|lt|gt|quot|#39|#x27);/g, (e) => ENTITIES[e] ?? e);

function attributes(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+)))?/g)) {
    const name = m[1]!.toLowerCase();
    if (name === "input" || name === "form" || name === "button") continue;
    out[name] = unescapeHtml(m[2] ?? m[3] ?? m[4] ?? "");
  }
  return out;
}

/** Every form of a page with its inputs (and the buttons naming it by `form=`). */
export function parseForms(html: string): Form[] {
  const forms: Form[] = [];
  for (const m of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const attrs = attributes(m[1]!);
    const fields: Record<string, string> = {};
    const visible: string[] = [];
    for (const input of m[2]!.matchAll(/<input\b([^>]*?)\/?>/gi)) {
      const a = attributes(input[1]!);
      if (!a.name) continue;
      fields[a.name] = a.value ?? "";
      if ((a.type ?? "text").toLowerCase() !== "hidden") visible.push(a.name);
    }
    forms.push({ ...(attrs.id !== undefined && { id: attrs.id }), method: (attrs.method ?? "get").toLowerCase(), action: attrs.action ?? "", fields, visible });
  }
  return forms;
}

/** The one form with the named field (or id); throws with the page when there is none. */
export function formWith(html: string, field: string): Form {
  const form = parseForms(html).find((f) => f.id === field || field in f.fields);
  if (!form) throw new Error(`no form with "${field}" in:\n${html.slice(0, 2000)}`);
  return form;
}

/** The text of the element with role="alert" (the error line), if any. */
export function alertText(html: string): string | undefined {
  const m = /<p class="error" role="alert">([\s\S]*?)<\/p>/.exec(html);
  return m ? unescapeHtml(m[1]!) : undefined;
}

export function htmlLang(html: string): string | undefined {
  return /<html[^>]*\blang="([^"]*)"/.exec(html)?.[1];
}

export class Browser {
  readonly #cookies: Cookie[] = [];

  constructor(
    readonly baseUrl: string,
    /** Sent on every request (Accept-Language, say). */
    readonly headers: Record<string, string> = {},
  ) {}

  /**
   * The cookies the server would receive at a path. Cross site, as a browser does for a POST
   * (the requests a test makes so are top-level navigations): only SameSite=None ones.
   */
  cookieHeader(path: string, crossSitePost = false): string {
    return this.#cookies
      .filter((c) => !crossSitePost || c.sameSite === "none")
      .filter((c) => path === c.path || path.startsWith(c.path.endsWith("/") ? c.path : `${c.path}/`) || c.path === "/")
      .sort((a, b) => b.path.length - a.path.length)
      .map((c) => `${c.name}=${c.value}`)
      .join("; ");
  }

  cookieNames(): string[] {
    return this.#cookies.map((c) => c.name);
  }

  /** Forgets every cookie (a fresh browser at the same place). */
  clearCookies(): void {
    this.#cookies.length = 0;
  }

  #store(res: Response, url: URL): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      let path = url.pathname.replace(/\/[^/]*$/, "") || "/";
      let expired = false;
      let sameSite: Cookie["sameSite"] = "lax";
      for (const attr of attrs) {
        const [k, v = ""] = attr.trim().split("=");
        const key = k!.toLowerCase();
        if (key === "path") path = v || "/";
        if (key === "max-age" && Number(v) <= 0) expired = true;
        if (key === "expires" && Date.parse(v) <= Date.now()) expired = true;
        if (key === "samesite" && ["strict", "lax", "none"].includes(v.toLowerCase())) sameSite = v.toLowerCase() as Cookie["sameSite"];
      }
      const at = this.#cookies.findIndex((c) => c.name === name && c.path === path);
      if (at >= 0) this.#cookies.splice(at, 1);
      if (!expired) this.#cookies.push({ name, value, path, sameSite });
    }
  }

  /** One request, without following redirects; cookies sent and kept. */
  async fetch(target: string | URL, init: RequestInit = {}): Promise<Response> {
    const url = new URL(target, this.baseUrl);
    // What a browser accepts: the provider answers errors as HTML then, not JSON.
    const headers: Record<string, string> = { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", ...this.headers, ...init.headers };
    const method = init.method ?? (init.form ? "POST" : "GET");
    const cookie = this.cookieHeader(url.pathname, init.crossSite === true && method !== "GET");
    if (cookie) headers.cookie = cookie;
    let body: string | undefined;
    if (init.form) {
      headers["content-type"] = "application/x-www-form-urlencoded";
      body = new URLSearchParams(init.form).toString();
    }
    const res = await fetch(url, {
      method,
      headers,
      redirect: "manual",
      ...(body !== undefined && { body }),
    });
    this.#store(res, url);
    return res;
  }

  /**
   * A request and the redirects after it, while they stay on the server; stops at a page,
   * or at a redirect elsewhere (not fetched: `left`, `url` is where it pointed).
   */
  async open(target: string | URL, init: RequestInit = {}): Promise<Page> {
    const own = new URL(this.baseUrl).origin;
    let url = new URL(target, this.baseUrl);
    let res = await this.fetch(url, init);
    const hops: Hop[] = [];
    for (let i = 0; i < 20; i++) {
      const location = res.headers.get("location");
      hops.push({ status: res.status, url: url.href, ...(location !== null && { location }) });
      if (res.status < 300 || res.status >= 400 || location === null) break;
      const next = new URL(location, url);
      if (next.origin !== own) {
        await res.arrayBuffer().catch(() => undefined);
        return { status: res.status, url: next.href, headers: res.headers, html: "", left: true, hops };
      }
      await res.arrayBuffer().catch(() => undefined);
      url = next;
      res = await this.fetch(url);
    }
    return { status: res.status, url: url.href, headers: res.headers, html: await res.text(), left: false, hops };
  }

  /** Submits a form of a page with some fields set (hidden ones kept as they are); `crossSite`: the page is another site's. */
  submit(form: Form, values: Record<string, string>, pageUrl?: string, crossSite = false): Promise<Page> {
    const action = new URL(form.action || pageUrl || "/", pageUrl ?? this.baseUrl);
    const fields = { ...form.fields, ...values };
    if (form.method === "get") {
      for (const [k, v] of Object.entries(fields)) action.searchParams.set(k, v);
      return this.open(action);
    }
    return this.open(action, { method: "POST", form: fields, crossSite });
  }
}
