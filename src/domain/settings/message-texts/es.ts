import type { MessageTexts } from "./texts.js";

export const es: MessageTexts = {
  verify_email: {
    subject: "Verifique su dirección de correo electrónico para {{.OrgName}}",
    body: `Hola, {{.DisplayName}}:

Confirme que esta dirección de correo electrónico le pertenece. Su código de verificación es:

{{.Code}}

También puede abrir este enlace:
{{.URL}}

El código es válido durante {{.ExpiresIn}}. Si no lo ha solicitado, puede ignorar este correo.

{{.OrgName}}`,
  },
  verify_phone: {
    body: "Hola, {{.DisplayName}}. Su código de verificación de {{.OrgName}} es {{.Code}}. Es válido durante {{.ExpiresIn}}.",
  },
  password_reset_sms: {
    body: "{{.DisplayName}}, su código de {{.OrgName}} para restablecer la contraseña es {{.Code}}, válido {{.ExpiresIn}}. ¿No lo pidió? Ignórelo.",
  },
  password_reset: {
    subject: "Restablezca su contraseña de {{.OrgName}}",
    body: `Hola, {{.DisplayName}}:

Hemos recibido una solicitud para restablecer la contraseña de su cuenta de {{.OrgName}}. Su código es:

{{.Code}}

También puede abrir este enlace para elegir una nueva contraseña:
{{.URL}}

El código es válido durante {{.ExpiresIn}}. Si no ha solicitado una nueva contraseña, ignore este correo: su contraseña no cambiará.

{{.OrgName}}`,
  },
  invite: {
    subject: "Invitación a {{.OrgName}}",
    body: `Hola, {{.DisplayName}}:

Ha recibido una invitación para unirse a {{.OrgName}}. Abra este enlace para elegir su contraseña y activar su cuenta:
{{.URL}}

El enlace es válido durante {{.ExpiresIn}}. Si no esperaba esta invitación, puede ignorar este correo.

{{.OrgName}}`,
  },
  password_changed: {
    subject: "Se ha cambiado la contraseña de su cuenta de {{.OrgName}}",
    body: `Hola, {{.DisplayName}}:

Se acaba de cambiar la contraseña de su cuenta de {{.OrgName}}. Si ha sido usted, no tiene que hacer nada más.

Si no, restablezca su contraseña de inmediato y avise a su administrador.

{{.OrgName}}`,
  },
  otp_email: {
    subject: "Su código de inicio de sesión de {{.OrgName}}",
    body: `Hola, {{.DisplayName}}:

Su código para iniciar sesión en {{.OrgName}} es:

{{.Code}}

Es válido {{.ExpiresIn}}. Si no está iniciando sesión ahora, puede que alguien conozca su contraseña: cámbiela.

{{.OrgName}}`,
  },
  otp_sms: {
    body: "{{.DisplayName}}, {{.Code}} es su código de inicio de sesión de {{.OrgName}}, válido {{.ExpiresIn}}. ¿No es usted? Cambie su contraseña.",
  },
};
