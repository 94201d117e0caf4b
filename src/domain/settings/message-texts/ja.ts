import type { MessageTexts } from "./texts.js";

export const ja: MessageTexts = {
  verify_email: {
    subject: "{{.OrgName}} のメールアドレスの確認",
    body: `{{.DisplayName}} 様

このメールアドレスがご本人のものであることを確認してください。確認コードは次のとおりです。

{{.Code}}

次のリンクを開いて確認することもできます。
{{.URL}}

このコードは {{.ExpiresIn}} 有効です。お心当たりがない場合は、このメールを無視してください。

{{.OrgName}}`,
  },
  verify_phone: {
    body: "{{.DisplayName}} 様、{{.OrgName}} の確認コードは {{.Code}} です。{{.ExpiresIn}} 有効です。",
  },
  password_reset_sms: {
    body: "{{.DisplayName}} 様、{{.OrgName}} のパスワード再設定コードは {{.Code}} です（{{.ExpiresIn}} 有効）。心当たりがなければ無視してください。",
  },
  password_reset: {
    subject: "{{.OrgName}} のパスワードの再設定",
    body: `{{.DisplayName}} 様

{{.OrgName}} のアカウントのパスワード再設定のリクエストを受け付けました。コードは次のとおりです。

{{.Code}}

次のリンクを開いて新しいパスワードを設定することもできます。
{{.URL}}

このコードは {{.ExpiresIn}} 有効です。パスワードの再設定をリクエストしていない場合は、このメールを無視してください。パスワードは変更されません。

{{.OrgName}}`,
  },
  invite: {
    subject: "{{.OrgName}} への招待",
    body: `{{.DisplayName}} 様

{{.OrgName}} に招待されました。次のリンクを開いてパスワードを設定し、アカウントを有効にしてください。
{{.URL}}

このリンクは {{.ExpiresIn}} 有効です。この招待にお心当たりがない場合は、このメールを無視してください。

{{.OrgName}}`,
  },
  password_changed: {
    subject: "{{.OrgName}} のパスワードが変更されました",
    body: `{{.DisplayName}} 様

{{.OrgName}} のアカウントのパスワードが変更されました。ご自身で変更した場合は、何もする必要はありません。

お心当たりがない場合は、すぐにパスワードを再設定し、管理者にご連絡ください。

{{.OrgName}}`,
  },
  otp_email: {
    subject: "{{.OrgName}} のサインインコード",
    body: `{{.DisplayName}} 様

{{.OrgName}} へのサインインコードは次のとおりです。

{{.Code}}

有効期間は {{.ExpiresIn}} です。いまサインインしていない場合、パスワードが他人に知られている可能性があります。パスワードを変更してください。

{{.OrgName}}`,
  },
  otp_sms: {
    body: "{{.DisplayName}} 様、{{.OrgName}} のサインインコードは {{.Code}} です（{{.ExpiresIn}} 有効）。心当たりがなければパスワードを変更してください。",
  },
};
