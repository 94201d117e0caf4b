import type { MessageTexts } from "./texts.js";

export const en: MessageTexts = {
  verify_email: {
    subject: "Verify your email address for {{.OrgName}}",
    body: `Hello {{.DisplayName}},

Please confirm that this email address belongs to you. Your verification code is:

{{.Code}}

You can also open this link:
{{.URL}}

The code is valid for {{.ExpiresIn}}. If you did not ask for it, you can ignore this email.

{{.OrgName}}`,
  },
  verify_phone: {
    body: "Hello {{.DisplayName}}, your {{.OrgName}} verification code is {{.Code}}. It is valid for {{.ExpiresIn}}.",
  },
  password_reset_sms: {
    body: "{{.DisplayName}}, your {{.OrgName}} password reset code is {{.Code}}, valid for {{.ExpiresIn}}. Not asked for it? Ignore this.",
  },
  password_reset: {
    subject: "Reset your password for {{.OrgName}}",
    body: `Hello {{.DisplayName}},

We received a request to reset the password of your {{.OrgName}} account. Your code is:

{{.Code}}

You can also open this link to choose a new password:
{{.URL}}

The code is valid for {{.ExpiresIn}}. If you did not ask for a new password, ignore this email: your password stays as it is.

{{.OrgName}}`,
  },
  invite: {
    subject: "You are invited to {{.OrgName}}",
    body: `Hello {{.DisplayName}},

You have been invited to join {{.OrgName}}. Open this link to choose your password and activate your account:
{{.URL}}

The link is valid for {{.ExpiresIn}}. If you were not expecting this invitation, you can ignore this email.

{{.OrgName}}`,
  },
  password_changed: {
    subject: "Your password for {{.OrgName}} was changed",
    body: `Hello {{.DisplayName}},

The password of your {{.OrgName}} account was just changed. If you did this, there is nothing more to do.

If you did not, reset your password right away and tell your administrator.

{{.OrgName}}`,
  },
  otp_email: {
    subject: "Your sign-in code for {{.OrgName}}",
    body: `Hello {{.DisplayName}},

Your code to sign in to {{.OrgName}} is:

{{.Code}}

It is valid for {{.ExpiresIn}}. If you are not signing in right now, someone may know your password: change it.

{{.OrgName}}`,
  },
  otp_sms: {
    body: "{{.DisplayName}}, {{.Code}} is your {{.OrgName}} sign-in code, valid for {{.ExpiresIn}}. Not you signing in? Change your password.",
  },
};
