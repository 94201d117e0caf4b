import { useWatch, type Control } from "react-hook-form";
import { RadioInput } from "../../components/ChoiceInputs";
import { TextInput } from "../../components/TextInput";
import { ProviderFields } from "./ProviderFields";
import { ACCOUNT_SID_RULES, SENDER_NUMBER_RULES, SERVICE_SID_RULES, TOKEN_RULES } from "./rules";
import { needsToken, SENDERS, SMS_KINDS, type SmsValues } from "./sms-form";

/** The fields of an SMS provider; `saved` (its values as saved) on its page, none in the create dialog. */
export function SmsFields({ control, saved, autoFocus }: { control: Control<SmsValues>; saved?: SmsValues; autoFocus?: boolean }) {
  const sender = useWatch({ control, name: "sender" });
  const tokenNote =
    saved?.kind === "twilio" ? "One is stored. Empty keeps it; another account SID needs its token." : "Stored encrypted; it is never shown again.";
  const tokenRules = { ...TOKEN_RULES, validate: (_: string, v: SmsValues) => !needsToken(saved, v) || "Give the account's auth token." };
  return (
    <ProviderFields
      control={control}
      kinds={SMS_KINDS}
      saved={saved}
      autoFocus={autoFocus}
      own={
        <>
          <div className="field-row">
            <TextInput control={control} name="accountSid" label="Account SID" rules={ACCOUNT_SID_RULES} autoComplete="off" />
            <TextInput
              control={control}
              name="token"
              label="Auth token"
              type="password"
              autoComplete="new-password"
              description={tokenNote}
              rules={tokenRules}
            />
          </div>
          <RadioInput control={control} name="sender" label="Messages come from" options={SENDERS} />
          {sender === "senderNumber" ? (
            <TextInput
              control={control}
              name="senderNumber"
              label="Sender number"
              description="In E.164 format: + and the country code, such as +41791234567."
              rules={SENDER_NUMBER_RULES}
            />
          ) : (
            <TextInput control={control} name="messagingServiceSid" label="Messaging service SID" rules={SERVICE_SID_RULES} />
          )}
        </>
      }
    />
  );
}
