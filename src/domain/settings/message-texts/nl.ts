import type { MessageTexts } from "./texts.js";

export const nl: MessageTexts = {
  verify_email: {
    subject: "Bevestig uw e-mailadres voor {{.OrgName}}",
    body: `Hallo {{.DisplayName}},

Bevestig dat dit e-mailadres van u is. Uw verificatiecode is:

{{.Code}}

U kunt ook deze link openen:
{{.URL}}

De code is {{.ExpiresIn}} geldig. Hebt u hier niet om gevraagd, dan kunt u deze e-mail negeren.

{{.OrgName}}`,
  },
  verify_phone: {
    body: "Hallo {{.DisplayName}}, uw verificatiecode voor {{.OrgName}} is {{.Code}}. Deze is {{.ExpiresIn}} geldig.",
  },
  password_reset_sms: {
    body: "{{.DisplayName}}, uw {{.OrgName}}-code voor een nieuw wachtwoord: {{.Code}}, {{.ExpiresIn}} geldig. Niet aangevraagd? Negeer dit.",
  },
  password_reset: {
    subject: "Stel uw wachtwoord voor {{.OrgName}} opnieuw in",
    body: `Hallo {{.DisplayName}},

We hebben een verzoek ontvangen om het wachtwoord van uw account bij {{.OrgName}} opnieuw in te stellen. Uw code is:

{{.Code}}

U kunt ook deze link openen om een nieuw wachtwoord te kiezen:
{{.URL}}

De code is {{.ExpiresIn}} geldig. Hebt u geen nieuw wachtwoord aangevraagd, negeer deze e-mail dan: uw wachtwoord blijft ongewijzigd.

{{.OrgName}}`,
  },
  invite: {
    subject: "Uitnodiging voor {{.OrgName}}",
    body: `Hallo {{.DisplayName}},

U bent uitgenodigd voor {{.OrgName}}. Open deze link om uw wachtwoord te kiezen en uw account te activeren:
{{.URL}}

De link is {{.ExpiresIn}} geldig. Verwachtte u deze uitnodiging niet, dan kunt u deze e-mail negeren.

{{.OrgName}}`,
  },
  password_changed: {
    subject: "Het wachtwoord van uw account bij {{.OrgName}} is gewijzigd",
    body: `Hallo {{.DisplayName}},

Het wachtwoord van uw account bij {{.OrgName}} is zojuist gewijzigd. Hebt u dit zelf gedaan, dan hoeft u niets te doen.

Zo niet, stel dan meteen een nieuw wachtwoord in en breng uw beheerder op de hoogte.

{{.OrgName}}`,
  },
  otp_email: {
    subject: "Uw aanmeldcode voor {{.OrgName}}",
    body: `Hallo {{.DisplayName}},

Uw code om u aan te melden bij {{.OrgName}} is:

{{.Code}}

Deze is {{.ExpiresIn}} geldig. Meldt u zich nu niet aan, dan kent iemand misschien uw wachtwoord: wijzig het.

{{.OrgName}}`,
  },
  otp_sms: {
    body: "{{.DisplayName}}, {{.Code}} is uw {{.OrgName}}-aanmeldcode, {{.ExpiresIn}} geldig. Niet u? Wijzig uw wachtwoord.",
  },
};
