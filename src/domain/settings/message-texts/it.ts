import type { MessageTexts } from "./texts.js";

export const it: MessageTexts = {
  verify_email: {
    subject: "Confermi il suo indirizzo email per {{.OrgName}}",
    body: `Gentile {{.DisplayName}},

confermi che questo indirizzo email è suo. Il suo codice di verifica è:

{{.Code}}

Può anche aprire questo link:
{{.URL}}

Il codice è valido per {{.ExpiresIn}}. Se non l'ha richiesto, può ignorare questa email.

{{.OrgName}}`,
  },
  verify_phone: {
    body: "Gentile {{.DisplayName}}, il suo codice di verifica {{.OrgName}} è {{.Code}}. È valido per {{.ExpiresIn}}.",
  },
  password_reset_sms: {
    body: "{{.DisplayName}}, il suo codice {{.OrgName}} per la nuova password è {{.Code}}, valido {{.ExpiresIn}}. Non richiesto? Lo ignori.",
  },
  password_reset: {
    subject: "Reimposti la sua password di {{.OrgName}}",
    body: `Gentile {{.DisplayName}},

abbiamo ricevuto una richiesta di reimpostazione della password del suo account {{.OrgName}}. Il suo codice è:

{{.Code}}

Può anche aprire questo link per scegliere una nuova password:
{{.URL}}

Il codice è valido per {{.ExpiresIn}}. Se non ha richiesto una nuova password, ignori questa email: la sua password resta invariata.

{{.OrgName}}`,
  },
  invite: {
    subject: "Invito a unirsi a {{.OrgName}}",
    body: `Gentile {{.DisplayName}},

ha ricevuto un invito a unirsi a {{.OrgName}}. Apra questo link per scegliere la sua password e attivare il suo account:
{{.URL}}

Il link è valido per {{.ExpiresIn}}. Se non aspettava questo invito, può ignorare questa email.

{{.OrgName}}`,
  },
  password_changed: {
    subject: "La password del suo account {{.OrgName}} è stata modificata",
    body: `Gentile {{.DisplayName}},

la password del suo account {{.OrgName}} è appena stata modificata. Se ha effettuato lei la modifica, non deve fare altro.

Altrimenti reimposti subito la password e avvisi il suo amministratore.

{{.OrgName}}`,
  },
  otp_email: {
    subject: "Il suo codice di accesso a {{.OrgName}}",
    body: `Gentile {{.DisplayName}},

il suo codice per accedere a {{.OrgName}} è:

{{.Code}}

È valido {{.ExpiresIn}}. Se non sta accedendo in questo momento, qualcuno potrebbe conoscere la sua password: la cambi.

{{.OrgName}}`,
  },
  otp_sms: {
    body: "{{.DisplayName}}, {{.Code}} è il suo codice di accesso a {{.OrgName}}, valido {{.ExpiresIn}}. Non è lei? Cambi la password.",
  },
};
