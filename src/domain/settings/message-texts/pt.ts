import type { MessageTexts } from "./texts.js";

export const pt: MessageTexts = {
  verify_email: {
    subject: "Confirme o seu endereço de e-mail para {{.OrgName}}",
    body: `Olá {{.DisplayName}},

Confirme que este endereço de e-mail é seu. O seu código de verificação é:

{{.Code}}

Também pode abrir este link:
{{.URL}}

O código é válido durante {{.ExpiresIn}}. Se não o pediu, pode ignorar este e-mail.

{{.OrgName}}`,
  },
  verify_phone: {
    body: "Olá {{.DisplayName}}, o seu código de verificação {{.OrgName}} é {{.Code}}. É válido durante {{.ExpiresIn}}.",
  },
  password_reset_sms: {
    body: "{{.DisplayName}}, o seu código {{.OrgName}} para nova senha é {{.Code}}, válido {{.ExpiresIn}}. Não o pediu? Ignore.",
  },
  password_reset: {
    subject: "Redefina a sua senha de {{.OrgName}}",
    body: `Olá {{.DisplayName}},

Recebemos um pedido para redefinir a senha da sua conta {{.OrgName}}. O seu código é:

{{.Code}}

Também pode abrir este link para escolher uma nova senha:
{{.URL}}

O código é válido durante {{.ExpiresIn}}. Se não pediu uma nova senha, ignore este e-mail: a sua senha não será alterada.

{{.OrgName}}`,
  },
  invite: {
    subject: "Convite para {{.OrgName}}",
    body: `Olá {{.DisplayName}},

Recebeu um convite para se juntar a {{.OrgName}}. Abra este link para escolher a sua senha e ativar a sua conta:
{{.URL}}

O link é válido durante {{.ExpiresIn}}. Se não esperava este convite, pode ignorar este e-mail.

{{.OrgName}}`,
  },
  password_changed: {
    subject: "A senha da sua conta {{.OrgName}} foi alterada",
    body: `Olá {{.DisplayName}},

A senha da sua conta {{.OrgName}} acabou de ser alterada. Se foi você, não precisa de fazer mais nada.

Caso contrário, redefina a sua senha imediatamente e avise o seu administrador.

{{.OrgName}}`,
  },
  otp_email: {
    subject: "O seu código de acesso a {{.OrgName}}",
    body: `Olá {{.DisplayName}},

O seu código para entrar em {{.OrgName}} é:

{{.Code}}

É válido {{.ExpiresIn}}. Se não está a entrar agora, alguém pode saber a sua senha: altere-a.

{{.OrgName}}`,
  },
  otp_sms: {
    body: "{{.DisplayName}}, {{.Code}} é o seu código de acesso a {{.OrgName}}, válido {{.ExpiresIn}}. Não foi você? Altere a sua senha.",
  },
};
