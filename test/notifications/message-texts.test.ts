import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { SUPPORTED_LANGUAGES } from "../../src/domain/settings/language.js";
import { MESSAGE_KINDS, type MessageData, type MessageKind } from "../../src/domain/notification/kinds.js";
import { KINDS } from "../../src/domain/notification/kinds.js";
import { DEFAULT_TEXTS } from "../../src/domain/settings/message-texts/defaults.js";
import { expiresIn, renderMessage, type RenderedEmail, type RenderedSms } from "../../src/engines/notifications/texts/index.js";
import { checkTemplate } from "../../src/domain/notification/template.js";

/**
 * The default message texts in every language, and rendering one body template into the
 * text and HTML parts of an email or into an SMS.
 */

const LINK = "https://login.example.com/verify?code=K7PX4Q&user=1";
const DATA: MessageData = { DisplayName: "Ada Lovelace", OrgName: "Acme", ExpiresIn: "1 hour", Code: "K7PX4Q", URL: LINK };
const defaults = (language: (typeof SUPPORTED_LANGUAGES)[number], kind: MessageKind): { subject?: string; body: string } => DEFAULT_TEXTS[language][kind];
const email = (kind: MessageKind, template: { subject?: string; body: string }, data = DATA, language: (typeof SUPPORTED_LANGUAGES)[number] = "en") =>
  renderMessage(kind, language, template, data) as RenderedEmail;

/** The InvalidArgument message checkTemplate throws, or undefined when it accepts. */
function refusal(kind: MessageKind, part: "subject" | "body", text: string): string | undefined {
  try {
    checkTemplate(kind, part, text);
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    expect((e as DomainError).kind).toBe("invalid_argument");
    return (e as DomainError).message;
  }
}

describe("default message texts", () => {
  it("exist for exactly the supported languages, each with every kind; email kinds with a subject, SMS kinds without", () => {
    expect(Object.keys(DEFAULT_TEXTS).sort()).toEqual([...SUPPORTED_LANGUAGES].sort());
    for (const language of SUPPORTED_LANGUAGES) {
      expect(Object.keys(DEFAULT_TEXTS[language]).sort(), language).toEqual([...MESSAGE_KINDS].sort());
      for (const kind of MESSAGE_KINDS) {
        const texts = defaults(language, kind);
        expect(texts.body.trim(), `${language}.${kind}`).not.toBe("");
        if (KINDS[kind].channel === "email") expect(texts.subject?.trim(), `${language}.${kind}`).toBeTruthy();
        else expect(texts.subject, `${language}.${kind}`).toBeUndefined();
      }
    }
  });

  it("are translated: no language but English repeats an English subject or body", () => {
    for (const language of SUPPORTED_LANGUAGES.filter((l) => l !== "en")) {
      for (const kind of MESSAGE_KINDS) {
        expect(defaults(language, kind).body, `${language}.${kind}`).not.toBe(defaults("en", kind).body);
        if (KINDS[kind].channel === "email") expect(defaults(language, kind).subject, `${language}.${kind}`).not.toBe(defaults("en", kind).subject);
      }
    }
  });

  it("use every placeholder of their kind (nothing expires in password_changed) and pass the rules custom texts must pass", () => {
    for (const language of SUPPORTED_LANGUAGES) {
      for (const kind of MESSAGE_KINDS) {
        const { subject, body } = defaults(language, kind);
        const expected = KINDS[kind].placeholders.filter((p) => !(kind === "password_changed" && p === "ExpiresIn"));
        for (const p of expected) expect(body, `${language}.${kind} ${p}`).toContain(`{{.${p}}}`);
        expect(refusal(kind, "body", body), `${language}.${kind}`).toBeUndefined();
        if (subject !== undefined) expect(refusal(kind, "subject", subject), `${language}.${kind}`).toBeUndefined();
      }
    }
  });

  it("render in every language with no placeholder left, the code and link in each part", () => {
    for (const language of SUPPORTED_LANGUAGES) {
      for (const kind of MESSAGE_KINDS) {
        const label = `${language}.${kind}`;
        const rendered = renderMessage(kind, language, defaults(language, kind), DATA);
        const parts = rendered.channel === "email" ? [rendered.subject, rendered.text, rendered.html] : [rendered.sms];
        expect(rendered.channel, label).toBe(KINDS[kind].channel);
        for (const part of parts) expect(part, label).not.toMatch(/\{\{|\}\}/);
        for (const part of parts) expect(part, label).toContain("Acme");
        const placeholders = KINDS[kind].placeholders;
        if (rendered.channel === "sms") {
          expect(rendered.sms, label).toContain("K7PX4Q");
          expect(rendered.sms.length, label).toBeLessThanOrEqual(160);
          continue;
        }
        expect(rendered.text, label).toContain("Ada Lovelace");
        if (placeholders.includes("Code")) expect(rendered.html, label).toContain("<strong");
        if (placeholders.includes("URL")) {
          expect(rendered.text, label).toContain(DATA.URL);
          expect(rendered.html, label).toContain(`<a href="https://login.example.com/verify?code=K7PX4Q&amp;user=1"`);
        }
        expect(rendered.html, label).toContain(`<html lang="${language}"`);
      }
    }
  });
});

describe("renderMessage", () => {
  const hostile: MessageData = { ...DATA, DisplayName: `<script>alert("x")</script>`, OrgName: "Q & A <Ltd>" };

  it("escapes values in the HTML part and leaves them as they are in the text part and the subject", () => {
    const m = email("password_reset", defaults("en", "password_reset"), hostile);
    expect(m.html).toContain("Hello &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;,");
    expect(m.html).toContain("Q &amp; A &lt;Ltd&gt;");
    expect(m.html).not.toContain("<script");
    expect(m.html).not.toContain("<Ltd>");
    expect(m.text).toContain(`Hello <script>alert("x")</script>,`);
    expect(m.subject).toBe("Reset your password for Q & A <Ltd>");
  });

  it("escapes the template's own text too: a custom text is plain text, not HTML", () => {
    const m = email("password_changed", { subject: "<b>Hi</b>", body: "Dear <b>{{.DisplayName}}</b> & co" });
    expect(m.html).toContain('<p style="margin:0 0 16px">Dear &lt;b&gt;Ada Lovelace&lt;/b&gt; &amp; co</p>');
    expect(m.text).toBe("Dear <b>Ada Lovelace</b> & co\n");
    expect(m.html).toContain("<title>&lt;b&gt;Hi&lt;/b&gt;</title>");
  });

  it("makes paragraphs of blank-line separated blocks and keeps single line breaks", () => {
    const m = email("invite", { subject: "s", body: "One\r\nstill one\r\n\r\n  \r\nTwo:\n{{.URL}}\n\n\n" });
    expect(m.html.match(/<p /g)).toHaveLength(2);
    expect(m.html).toContain(">One<br>still one</p>");
    expect(m.html).toContain(`>Two:<br><a href="${LINK.replace("&", "&amp;")}"`);
    expect(m.text).toBe(`One\nstill one\n\n  \nTwo:\n${LINK}\n`);
  });

  it("builds a self-contained document: nothing loads, nothing runs, nothing tracks", () => {
    for (const kind of ["verify_email", "password_reset", "invite", "password_changed"] as const) {
      const { html } = email(kind, defaults("de", kind), hostile, "de");
      expect(html.startsWith("<!doctype html>")).toBe(true);
      expect(html).toMatch(/<meta charset="utf-8">/);
      expect(html).toMatch(/role="article" aria-roledescription="email" aria-label="[^"]+" lang="de"/);
      for (const forbidden of [/<script/i, /<img/i, /<link/i, /<iframe/i, /<style/i, /\ssrc=/i, /url\(/i, /@import/i, /\son[a-z]+=/i])
        expect(html, `${kind} ${forbidden}`).not.toMatch(forbidden);
      // The one link is the message's own.
      expect([...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1])).toEqual(kind === "password_changed" ? [] : [LINK.replace("&", "&amp;")]);
    }
  });

  it("links only http(s) URLs", () => {
    const m = email("invite", { subject: "s", body: "Open {{.URL}}" }, { ...DATA, URL: "javascript:alert(1)" });
    expect(m.html).not.toContain("href");
    expect(m.html).toContain("Open javascript:alert(1)");
  });

  it("leaves unknown placeholders and those of other kinds as written, and never expands a value", () => {
    const m = email(
      "invite",
      { subject: "{{.Nickname}} {{ .OrgName }}", body: "Hi {{.DisplayNam}} {{.Code}} {{ .URL }} {{.DisplayName}}" },
      { ...DATA, DisplayName: "{{.URL}}" },
    );
    expect(m.subject).toBe("{{.Nickname}} Acme");
    expect(m.text).toBe(`Hi {{.DisplayNam}} {{.Code}} ${LINK} {{.URL}}\n`);
    expect(m.html).toContain("Hi {{.DisplayNam}} {{.Code}} <a href=");
  });

  it("keeps the subject on one line whatever the values hold", () => {
    const m = email("invite", { subject: "For {{.DisplayName}}", body: "{{.URL}}" }, { ...DATA, DisplayName: "Eve\r\nBcc: all@example.com" });
    expect(m.subject).toBe("For Eve Bcc: all@example.com");
  });

  it("renders an SMS from the body only", () => {
    const m = renderMessage("verify_phone", "fr", { body: "  {{.Code}} pour {{.DisplayName}} <{{.OrgName}}>\n" }, hostile) as RenderedSms;
    expect(m).toEqual({ channel: "sms", sms: `K7PX4Q pour <script>alert("x")</script> <Q & A <Ltd>>` });
  });

  it("throws when the data lacks a placeholder of the kind (a bug of the caller)", () => {
    const { URL: _url, ...noUrl } = DATA;
    expect(() => renderMessage("invite", "en", defaults("en", "invite"), noUrl)).toThrow(/invite message needs a value for URL/);
    expect(renderMessage("password_changed", "en", defaults("en", "password_changed"), { DisplayName: "A", OrgName: "B", ExpiresIn: "" }).channel).toBe(
      "email",
    );
  });
});

describe("checkTemplate (custom texts)", () => {
  it("refuses placeholders the kind does not have, typos and anything else in double braces, naming it and the allowed ones", () => {
    expect(refusal("invite", "body", "{{.URL}} {{.Code}}")).toBe(
      "body: {{.Code}} is no placeholder of invite messages; they may use {{.DisplayName}}, {{.OrgName}}, {{.ExpiresIn}}, {{.URL}}",
    );
    expect(refusal("verify_email", "subject", "Hi {{.DisplayNam}}")).toContain("subject: {{.DisplayNam}} is no placeholder of verify_email messages");
    expect(refusal("verify_email", "body", "{{Code}}")).toContain("{{Code}} is no placeholder");
    expect(refusal("verify_email", "body", "{{.Code}} {{ if .X }}")).toContain("{{ if .X }} is no placeholder");
    expect(refusal("password_changed", "body", "{{.URL}}")).toContain("{{.URL}} is no placeholder of password_changed");
    expect(refusal("verify_email", "body", "{{ .Code }} and {{.URL}}")).toBeUndefined();
    expect(refusal("verify_email", "body", "single {braces} are text, {{.Code}}")).toBeUndefined();
  });

  it("requires a body to carry what its kind is sent for", () => {
    expect(refusal("verify_phone", "body", "Hello {{.DisplayName}}")).toBe("body: verify_phone messages must contain {{.Code}}");
    expect(refusal("verify_email", "body", "Hello")).toBe("body: verify_email messages must contain {{.Code}} or {{.URL}}");
    expect(refusal("verify_email", "body", "Open {{.URL}}")).toBeUndefined();
    expect(refusal("password_reset", "body", "Code {{.Code}}")).toBeUndefined();
    expect(refusal("invite", "body", "Welcome")).toBe("body: invite messages must contain {{.URL}}");
    expect(refusal("password_changed", "body", "Changed.")).toBeUndefined();
    // A subject carries nothing.
    expect(refusal("verify_email", "subject", "Verify")).toBeUndefined();
  });
});

describe("expiresIn", () => {
  it("words whole days, hours or minutes in the message's language", () => {
    expect(expiresIn("en", 3600)).toBe("1 hour");
    expect(expiresIn("en", 600)).toBe("10 minutes");
    expect(expiresIn("en", 5400)).toBe("90 minutes");
    expect(expiresIn("en", 2 * 86_400)).toBe("2 days");
    expect(expiresIn("en", 30)).toBe("1 minute");
    expect(expiresIn("en", 119)).toBe("1 minute");
    expect(expiresIn("de", 3600)).toBe("1 Stunde");
    expect(expiresIn("fr", 600)).toBe("10 minutes");
    expect(expiresIn("pl", 7200)).toBe("2 godziny");
    expect(expiresIn("ja", 3600)).toBe("1 時間");
    expect(expiresIn("zh", 600)).toBe("10分钟");
  });
});
