import type { MessageTexts } from "./texts.js";

export const it: MessageTexts = {
  verify_email: {
    subject: "Conferma il tuo indirizzo email per {{.OrgName}}",
    body: `Ciao {{.DisplayName}},

conferma che questo indirizzo email è tuo. Il tuo codice di verifica è:

{{.Code}}

Puoi anche aprire questo link:
{{.URL}}

Il codice è valido per {{.ExpiresIn}}. Se non l’hai richiesto, puoi ignorare questa email.

{{.OrgName}}`,
  },
  verify_phone: {
    body: "Ciao {{.DisplayName}}, il tuo codice di verifica {{.OrgName}} è {{.Code}}. È valido per {{.ExpiresIn}}.",
  },
  password_reset_sms: {
    body: "{{.DisplayName}}, il tuo codice {{.OrgName}} per la nuova password è {{.Code}}, valido {{.ExpiresIn}}. Non richiesto? Ignoralo.",
  },
  password_reset: {
    subject: "Reimposta la tua password di {{.OrgName}}",
    body: `Ciao {{.DisplayName}},

abbiamo ricevuto una richiesta di reimpostazione della password del tuo account {{.OrgName}}. Il tuo codice è:

{{.Code}}

Puoi anche aprire questo link per scegliere una nuova password:
{{.URL}}

Il codice è valido per {{.ExpiresIn}}. Se non hai richiesto una nuova password, ignora questa email: la tua password resta invariata.

{{.OrgName}}`,
  },
  invite: {
    subject: "Invito a unirti a {{.OrgName}}",
    body: `Ciao {{.DisplayName}},

hai ricevuto un invito a unirti a {{.OrgName}}. Apri questo link per scegliere la tua password e attivare il tuo account:
{{.URL}}

Il link è valido per {{.ExpiresIn}}. Se non aspettavi questo invito, puoi ignorare questa email.

{{.OrgName}}`,
  },
  password_changed: {
    subject: "La password del tuo account {{.OrgName}} è stata modificata",
    body: `Ciao {{.DisplayName}},

la password del tuo account {{.OrgName}} è appena stata modificata. Se hai effettuato tu la modifica, non devi fare altro.

Altrimenti reimposta subito la password e avvisa il tuo amministratore.

{{.OrgName}}`,
  },
  otp_email: {
    subject: "Il tuo codice di accesso a {{.OrgName}}",
    body: `Ciao {{.DisplayName}},

il tuo codice per accedere a {{.OrgName}} è:

{{.Code}}

È valido {{.ExpiresIn}}. Se non stai accedendo in questo momento, qualcuno potrebbe conoscere la tua password: cambiala.

{{.OrgName}}`,
  },
  otp_sms: {
    body: "{{.DisplayName}}, {{.Code}} è il tuo codice di accesso a {{.OrgName}}, valido {{.ExpiresIn}}. Non sei tu? Cambia la password.",
  },
};
