import type { MessageTexts } from "./texts.js";

export const es: MessageTexts = {
  verify_email: {
    subject: "Verifica tu dirección de correo electrónico para {{.OrgName}}",
    body: `Hola, {{.DisplayName}}:

Confirma que esta dirección de correo electrónico te pertenece. Tu código de verificación es:

{{.Code}}

También puedes abrir este enlace:
{{.URL}}

El código es válido durante {{.ExpiresIn}}. Si no lo has solicitado, puedes ignorar este correo.

{{.OrgName}}`,
  },
  verify_phone: {
    body: "Hola, {{.DisplayName}}. Tu código de verificación de {{.OrgName}} es {{.Code}}. Es válido durante {{.ExpiresIn}}.",
  },
  password_reset_sms: {
    body: "{{.DisplayName}}, tu código de {{.OrgName}} para restablecer la contraseña es {{.Code}}, válido {{.ExpiresIn}}. ¿No lo pediste? Ignóralo.",
  },
  password_reset: {
    subject: "Restablece tu contraseña de {{.OrgName}}",
    body: `Hola, {{.DisplayName}}:

Hemos recibido una solicitud para restablecer la contraseña de tu cuenta de {{.OrgName}}. Tu código es:

{{.Code}}

También puedes abrir este enlace para elegir una nueva contraseña:
{{.URL}}

El código es válido durante {{.ExpiresIn}}. Si no has solicitado una nueva contraseña, ignora este correo: tu contraseña no cambiará.

{{.OrgName}}`,
  },
  invite: {
    subject: "Invitación a {{.OrgName}}",
    body: `Hola, {{.DisplayName}}:

Has recibido una invitación para unirte a {{.OrgName}}. Abre este enlace para elegir tu contraseña y activar tu cuenta:
{{.URL}}

El enlace es válido durante {{.ExpiresIn}}. Si no esperabas esta invitación, puedes ignorar este correo.

{{.OrgName}}`,
  },
  password_changed: {
    subject: "Se ha cambiado la contraseña de tu cuenta de {{.OrgName}}",
    body: `Hola, {{.DisplayName}}:

Se acaba de cambiar la contraseña de tu cuenta de {{.OrgName}}. Si has sido tú, no tienes que hacer nada más.

Si no, restablece tu contraseña de inmediato y avisa a tu administrador.

{{.OrgName}}`,
  },
  otp_email: {
    subject: "Tu código de inicio de sesión de {{.OrgName}}",
    body: `Hola, {{.DisplayName}}:

Tu código para iniciar sesión en {{.OrgName}} es:

{{.Code}}

Es válido {{.ExpiresIn}}. Si no estás iniciando sesión ahora, puede que alguien conozca tu contraseña: cámbiala.

{{.OrgName}}`,
  },
  otp_sms: {
    body: "{{.DisplayName}}, {{.Code}} es tu código de inicio de sesión de {{.OrgName}}, válido {{.ExpiresIn}}. ¿No eres tú? Cambia tu contraseña.",
  },
};
