import type { Control } from "react-hook-form";
import { RadioInput } from "../../components/ChoiceInputs";
import { TextInput } from "../../components/TextInput";
import { ProviderFields } from "./ProviderFields";
import { HOST_RULES, PASSWORD_RULES, PORT_RULES, REPLY_TO_RULES, SENDER_ADDRESS_RULES, SENDER_NAME_RULES, USER_RULES } from "./rules";
import { needsPassword, SMTP_KINDS, TLS_MODES, type SmtpValues } from "./smtp-form";

/** What an email provider's page knows of it: its values as saved, and whether a password is stored. */
export interface SavedSmtp {
  values: SmtpValues;
  passwordSet: boolean;
}

/** The fields of an email provider; `saved` on its page, none in the create dialog. */
export function SmtpFields({ control, saved, autoFocus }: { control: Control<SmtpValues>; saved?: SavedSmtp; autoFocus?: boolean }) {
  const passwordNote =
    !saved || saved.values.kind !== "smtp"
      ? "Stored encrypted; it is never shown again."
      : saved.passwordSet
        ? "One is stored. Empty keeps it; changing the host, port, TLS or user needs it again."
        : "None is stored.";
  const passwordRules = {
    ...PASSWORD_RULES,
    validate: (_: string, v: SmtpValues) =>
      !saved ||
      !needsPassword(saved.values, saved.passwordSet, v) ||
      "Give the password again: the stored one is kept only for the host, port, TLS and user it was given for.",
  };
  return (
    <ProviderFields
      control={control}
      kinds={SMTP_KINDS}
      saved={saved?.values}
      autoFocus={autoFocus}
      own={
        <>
          <div className="field-row">
            <TextInput control={control} name="host" label="Host" rules={HOST_RULES} />
            <TextInput control={control} name="port" label="Port" description="Empty: the TLS mode's default." rules={PORT_RULES} />
          </div>
          <RadioInput
            control={control}
            name="tls"
            label="Security of the connection"
            description="The server's certificate is always verified."
            options={TLS_MODES}
          />
          <div className="field-row">
            <TextInput control={control} name="user" label="User" description="Empty: no authentication." autoComplete="off" rules={USER_RULES} />
            <TextInput
              control={control}
              name="password"
              label="Password"
              type="password"
              autoComplete="new-password"
              description={passwordNote}
              rules={passwordRules}
            />
          </div>
          <TextInput control={control} name="senderAddress" label="From address" type="email" rules={SENDER_ADDRESS_RULES} />
          <TextInput control={control} name="senderName" label="From name" rules={SENDER_NAME_RULES} />
          <TextInput control={control} name="replyToAddress" label="Reply-To address" type="email" description="Empty: none." rules={REPLY_TO_RULES} />
        </>
      }
    />
  );
}
