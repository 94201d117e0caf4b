import type { MessageTexts } from "./texts.js";

export const fr: MessageTexts = {
  verify_email: {
    subject: "Confirmez votre adresse e-mail pour {{.OrgName}}",
    body: `Bonjour {{.DisplayName}},

Veuillez confirmer que cette adresse e-mail vous appartient. Votre code de vérification est :

{{.Code}}

Vous pouvez aussi ouvrir ce lien :
{{.URL}}

Ce code est valable {{.ExpiresIn}}. Si vous ne l'avez pas demandé, vous pouvez ignorer cet e-mail.

{{.OrgName}}`,
  },
  verify_phone: {
    body: "Bonjour {{.DisplayName}}, votre code de vérification {{.OrgName}} est {{.Code}}. Il est valable {{.ExpiresIn}}.",
  },
  password_reset_sms: {
    body: "{{.DisplayName}}, votre code {{.OrgName}} pour un nouveau mot de passe : {{.Code}}, valable {{.ExpiresIn}}. Pas demandé ? Ignorez-le.",
  },
  password_reset: {
    subject: "Réinitialisez votre mot de passe pour {{.OrgName}}",
    body: `Bonjour {{.DisplayName}},

Nous avons reçu une demande de réinitialisation du mot de passe de votre compte {{.OrgName}}. Votre code est :

{{.Code}}

Vous pouvez aussi ouvrir ce lien pour choisir un nouveau mot de passe :
{{.URL}}

Ce code est valable {{.ExpiresIn}}. Si vous n'avez pas demandé de nouveau mot de passe, ignorez cet e-mail : votre mot de passe reste inchangé.

{{.OrgName}}`,
  },
  invite: {
    subject: "Invitation à rejoindre {{.OrgName}}",
    body: `Bonjour {{.DisplayName}},

Vous avez reçu une invitation à rejoindre {{.OrgName}}. Ouvrez ce lien pour choisir votre mot de passe et activer votre compte :
{{.URL}}

Ce lien est valable {{.ExpiresIn}}. Si vous n'attendiez pas cette invitation, vous pouvez ignorer cet e-mail.

{{.OrgName}}`,
  },
  password_changed: {
    subject: "Le mot de passe de votre compte {{.OrgName}} a été modifié",
    body: `Bonjour {{.DisplayName}},

Le mot de passe de votre compte {{.OrgName}} vient d'être modifié. Si c'est vous, vous n'avez rien d'autre à faire.

Sinon, réinitialisez votre mot de passe immédiatement et prévenez votre administrateur.

{{.OrgName}}`,
  },
  otp_email: {
    subject: "Votre code de connexion {{.OrgName}}",
    body: `Bonjour {{.DisplayName}},

Votre code pour vous connecter à {{.OrgName}} est :

{{.Code}}

Il est valable {{.ExpiresIn}}. Si vous n'êtes pas en train de vous connecter, quelqu'un connaît peut-être votre mot de passe : changez-le.

{{.OrgName}}`,
  },
  otp_sms: {
    body: "{{.DisplayName}}, {{.Code}} est votre code de connexion {{.OrgName}}, valable {{.ExpiresIn}}. Pas vous ? Changez votre mot de passe.",
  },
};
