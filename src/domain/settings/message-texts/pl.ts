import type { MessageTexts } from "./texts.js";

// ExpiresIn is worded in the nominative ("1 godzina"): the sentences name it after a colon.
export const pl: MessageTexts = {
  verify_email: {
    subject: "Potwierdź swój adres e-mail w {{.OrgName}}",
    body: `Witaj {{.DisplayName}},

potwierdź, że ten adres e-mail należy do Ciebie. Twój kod weryfikacyjny to:

{{.Code}}

Możesz też otworzyć ten link:
{{.URL}}

Czas ważności kodu: {{.ExpiresIn}}. Jeśli ta prośba nie pochodzi od Ciebie, zignoruj tę wiadomość.

{{.OrgName}}`,
  },
  verify_phone: {
    body: "Witaj {{.DisplayName}}, Twój kod weryfikacyjny {{.OrgName}} to {{.Code}}. Czas ważności: {{.ExpiresIn}}.",
  },
  password_reset_sms: {
    body: "{{.DisplayName}}, Twój kod {{.OrgName}} do nowego hasła: {{.Code}}, ważny {{.ExpiresIn}}. To nie Ty? Zignoruj to.",
  },
  password_reset: {
    subject: "Resetowanie hasła w {{.OrgName}}",
    body: `Witaj {{.DisplayName}},

otrzymaliśmy prośbę o zresetowanie hasła do Twojego konta w {{.OrgName}}. Twój kod to:

{{.Code}}

Możesz też otworzyć ten link, aby ustawić nowe hasło:
{{.URL}}

Czas ważności kodu: {{.ExpiresIn}}. Jeśli ta prośba nie pochodzi od Ciebie, zignoruj tę wiadomość – Twoje hasło pozostanie bez zmian.

{{.OrgName}}`,
  },
  invite: {
    subject: "Zaproszenie do {{.OrgName}}",
    body: `Witaj {{.DisplayName}},

otrzymujesz zaproszenie do {{.OrgName}}. Otwórz ten link, aby ustawić hasło i aktywować swoje konto:
{{.URL}}

Czas ważności linku: {{.ExpiresIn}}. Jeśli nie spodziewasz się tego zaproszenia, zignoruj tę wiadomość.

{{.OrgName}}`,
  },
  password_changed: {
    subject: "Hasło do Twojego konta w {{.OrgName}} zostało zmienione",
    body: `Witaj {{.DisplayName}},

hasło do Twojego konta w {{.OrgName}} zostało właśnie zmienione. Jeśli to Ty, nie musisz nic robić.

Jeśli nie, natychmiast zresetuj hasło i powiadom swojego administratora.

{{.OrgName}}`,
  },
  otp_email: {
    subject: "Twój kod logowania do {{.OrgName}}",
    body: `Witaj {{.DisplayName}},

Twój kod logowania do {{.OrgName}} to:

{{.Code}}

Jest ważny {{.ExpiresIn}}. Jeśli się teraz nie logujesz, ktoś może znać Twoje hasło: zmień je.

{{.OrgName}}`,
  },
  otp_sms: {
    body: "{{.DisplayName}}, {{.Code}} to Twój kod logowania do {{.OrgName}}, ważny {{.ExpiresIn}}. To nie Ty? Zmień hasło.",
  },
};
