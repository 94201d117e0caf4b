import type { MessageTexts } from "./texts.js";

export const zh: MessageTexts = {
  verify_email: {
    subject: "验证您在 {{.OrgName}} 的电子邮件地址",
    body: `{{.DisplayName}}，您好：

请确认此电子邮件地址属于您。您的验证码是：

{{.Code}}

您也可以打开以下链接：
{{.URL}}

验证码在{{.ExpiresIn}}内有效。如果这不是您本人的操作，请忽略此邮件。

{{.OrgName}}`,
  },
  verify_phone: {
    body: "{{.DisplayName}}，您好：您的 {{.OrgName}} 验证码是 {{.Code}}，{{.ExpiresIn}}内有效。",
  },
  password_reset_sms: {
    body: "{{.DisplayName}}，您好：您的 {{.OrgName}} 密码重置验证码是 {{.Code}}，{{.ExpiresIn}}内有效。如非本人操作，请忽略。",
  },
  password_reset: {
    subject: "重置您在 {{.OrgName}} 的密码",
    body: `{{.DisplayName}}，您好：

我们收到了重置您 {{.OrgName}} 账户密码的请求。您的验证码是：

{{.Code}}

您也可以打开以下链接设置新密码：
{{.URL}}

验证码在{{.ExpiresIn}}内有效。如果您没有申请重置密码，请忽略此邮件，您的密码不会改变。

{{.OrgName}}`,
  },
  invite: {
    subject: "邀请您加入 {{.OrgName}}",
    body: `{{.DisplayName}}，您好：

您已受邀加入 {{.OrgName}}。请打开以下链接设置密码并激活您的账户：
{{.URL}}

链接在{{.ExpiresIn}}内有效。如果您没有预期收到此邀请，请忽略此邮件。

{{.OrgName}}`,
  },
  password_changed: {
    subject: "您在 {{.OrgName}} 的密码已更改",
    body: `{{.DisplayName}}，您好：

您的 {{.OrgName}} 账户密码刚刚已更改。如果是您本人操作，则无需执行任何操作。

如果不是，请立即重置密码并通知您的管理员。

{{.OrgName}}`,
  },
  otp_email: {
    subject: "您的 {{.OrgName}} 登录验证码",
    body: `{{.DisplayName}}，您好：

您登录 {{.OrgName}} 的验证码是：

{{.Code}}

{{.ExpiresIn}}内有效。如果您此刻没有在登录，可能有人知道了您的密码：请修改密码。

{{.OrgName}}`,
  },
  otp_sms: {
    body: "{{.DisplayName}}，您好：您的 {{.OrgName}} 登录验证码是 {{.Code}}，{{.ExpiresIn}}内有效。如非本人操作，请修改密码。",
  },
};
