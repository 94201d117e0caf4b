import type { MessageTexts } from "./texts.js";

export const de: MessageTexts = {
  verify_email: {
    subject: "Bestätigen Sie Ihre E-Mail-Adresse für {{.OrgName}}",
    body: `Hallo {{.DisplayName}},

bitte bestätigen Sie, dass diese E-Mail-Adresse Ihnen gehört. Ihr Bestätigungscode lautet:

{{.Code}}

Sie können auch diesen Link öffnen:
{{.URL}}

Der Code ist {{.ExpiresIn}} gültig. Falls Sie ihn nicht angefordert haben, können Sie diese E-Mail ignorieren.

{{.OrgName}}`,
  },
  verify_phone: {
    body: "Hallo {{.DisplayName}}, Ihr Bestätigungscode für {{.OrgName}} lautet {{.Code}}. Er ist {{.ExpiresIn}} gültig.",
  },
  password_reset_sms: {
    body: "{{.DisplayName}}, Ihr {{.OrgName}}-Code für ein neues Passwort: {{.Code}}, {{.ExpiresIn}} gültig. Nicht angefordert? Ignorieren.",
  },
  password_reset: {
    subject: "Passwort für {{.OrgName}} zurücksetzen",
    body: `Hallo {{.DisplayName}},

wir haben eine Anfrage erhalten, das Passwort Ihres Kontos bei {{.OrgName}} zurückzusetzen. Ihr Code lautet:

{{.Code}}

Sie können auch diesen Link öffnen, um ein neues Passwort zu wählen:
{{.URL}}

Der Code ist {{.ExpiresIn}} gültig. Falls Sie kein neues Passwort angefordert haben, ignorieren Sie diese E-Mail: Ihr Passwort bleibt unverändert.

{{.OrgName}}`,
  },
  invite: {
    subject: "Einladung zu {{.OrgName}}",
    body: `Hallo {{.DisplayName}},

Sie wurden zu {{.OrgName}} eingeladen. Öffnen Sie diesen Link, um Ihr Passwort festzulegen und Ihr Konto zu aktivieren:
{{.URL}}

Der Link ist {{.ExpiresIn}} gültig. Falls Sie diese Einladung nicht erwartet haben, können Sie diese E-Mail ignorieren.

{{.OrgName}}`,
  },
  password_changed: {
    subject: "Ihr Passwort für {{.OrgName}} wurde geändert",
    body: `Hallo {{.DisplayName}},

das Passwort Ihres Kontos bei {{.OrgName}} wurde soeben geändert. Wenn Sie das waren, ist nichts weiter zu tun.

Falls nicht, setzen Sie Ihr Passwort sofort zurück und wenden Sie sich an Ihren Administrator.

{{.OrgName}}`,
  },
  otp_email: {
    subject: "Ihr Anmeldecode für {{.OrgName}}",
    body: `Hallo {{.DisplayName}},

Ihr Code für die Anmeldung bei {{.OrgName}} lautet:

{{.Code}}

Er ist {{.ExpiresIn}} gültig. Wenn Sie sich gerade nicht anmelden, kennt vielleicht jemand Ihr Passwort: Ändern Sie es.

{{.OrgName}}`,
  },
  otp_sms: {
    body: "{{.DisplayName}}, {{.Code}} ist Ihr {{.OrgName}}-Anmeldecode, {{.ExpiresIn}} gültig. Nicht Sie? Ändern Sie Ihr Passwort.",
  },
};
