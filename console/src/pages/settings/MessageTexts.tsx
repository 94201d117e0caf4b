import { useQuery } from "@connectrpc/connect-query";
import { useMemo, useState, type ReactNode } from "react";
import type { ResolvedLanguageSettings } from "../../../../gen/platform/settings/language/v3alpha/language_pb";
import { PlatformLanguageSettings } from "../../../../gen/platform/settings/language/v3alpha/language_service_pb";
import { PlatformMessageTextSettings } from "../../../../gen/platform/settings/message_text/v3alpha/message_text_service_pb";
import { ApiError } from "../../components/ApiError";
import { SelectField } from "../../components/SelectField";
import { SettingsForm } from "../../components/SettingsForm";
import { TextInput } from "../../components/TextInput";
import { TextLinesInput } from "../../components/TextLinesInput";
import { useScope } from "../../scope";
import { BODY_MAX, isSms, MESSAGE_KINDS, SMS_BODY_MAX, type MessageKind } from "./message-text-kinds";
import { SettingField } from "./SettingField";
import { setOrReset } from "./settings-form";
import { SettingsTabs } from "./SettingsTabs";
import { useSettings } from "./useSettings";

const LANGUAGE_NAMES = new Intl.DisplayNames(["en"], { type: "language" });

/** The languages the context allows, in order: its restricted ones, or every supported one. */
function allowedLanguages(s: ResolvedLanguageSettings | undefined): string[] {
  const restricted = s?.restrictedLanguages?.value ?? [];
  return (restricted.length > 0 ? restricted : (s?.supportedLanguages?.value ?? [])).map((l) => l.key);
}

/**
 * The texts of the messages the service sends, one kind and language at a time (the
 * languages the context allows), each text with where it comes from.
 */
export function MessageTexts() {
  const { ctx, orgId } = useScope();
  const [kind, setKind] = useState<MessageKind>(MESSAGE_KINDS[0].key);
  const [chosen, setLanguage] = useState<string>();
  const languages = useQuery(PlatformLanguageSettings.method.resolveLanguages, { ctx });
  const allowed = allowedLanguages(languages.data?.settings);
  const preferred = languages.data?.settings?.defaultLanguage?.value ?? "";
  const language = [chosen, preferred].find((l) => l && allowed.includes(l)) ?? allowed[0];
  return (
    <>
      <div className="title">
        <h1>Message texts</h1>
      </div>
      <SettingsTabs />
      <p className="muted">
        What the messages the service sends say{" "}
        {orgId ? "to this organization's users" : "in the instance, for every organization that sets nothing of its own"}.
      </p>
      <div className="filters">
        <SelectField<MessageKind> label="Message" value={kind} options={MESSAGE_KINDS} onChange={setKind} />
        {language && (
          <SelectField
            label="Language"
            value={language}
            options={allowed.map((key) => ({ key, label: `${LANGUAGE_NAMES.of(key) ?? key} (${key})` }))}
            onChange={setLanguage}
          />
        )}
      </div>
      <ApiError error={languages.error} />
      {language && <MessageText key={`${orgId ?? ""}/${kind}/${language}`} kind={kind} language={language} />}
    </>
  );
}

// Sent as typed: a message's spaces and line breaks are its own.
const textAsTyped = setOrReset<string, string | undefined, string>(
  (text) => text ?? "",
  (typed) => typed,
);

/** A message's texts. An SMS has no subject: its form's stays empty like the one in effect, so none is sent. */
const textSettings = (message: string) => ({ subject: textAsTyped(`the subject of the ${message}`), body: textAsTyped(`the body of the ${message}`) });

type TextName = keyof ReturnType<typeof textSettings>;

function MessageText({ kind, language }: { kind: MessageKind; language: string }) {
  const label = MESSAGE_KINDS.find((k) => k.key === kind)!.label.toLowerCase();
  const settings = useMemo(() => textSettings(label), [label]);
  const s = useSettings({
    resolve: PlatformMessageTextSettings.method.resolveMessageText,
    set: PlatformMessageTextSettings.method.setMessageText,
    settings,
    permission: "settings.write",
    selects: { kind, language },
  });
  const answer = s.answer.data;
  if (s.answer.error) return <ApiError error={s.answer.error} />;
  if (!answer?.settings || s.loading) return <p role="status">Loading…</p>;
  const texts = answer.settings;
  const text = (name: TextName, field: ReactNode) => <SettingField line={s.setting(name)}>{field}</SettingField>;
  const { control } = s.form;
  const bodyMax = isSms(kind) ? SMS_BODY_MAX : BODY_MAX;
  return (
    <>
      <SettingsForm mayWrite={s.mayWrite} onSubmit={s.onSubmit} {...s.save}>
        {texts.subject &&
          text(
            "subject",
            <TextInput
              control={control}
              name="subject"
              label="Subject"
              rules={{
                required: "Give a subject.",
                maxLength: { value: 200, message: "At most 200 characters." },
                pattern: { value: /^[^\r\n]*$/, message: "One line." },
              }}
            />,
          )}
        {text(
          "body",
          <TextLinesInput
            control={control}
            name="body"
            label="Body"
            description="Paragraphs separated by an empty line."
            rows={12}
            rules={{ required: "Give the text.", maxLength: { value: bodyMax, message: `At most ${bodyMax.toLocaleString("en")} characters.` } }}
          />,
        )}
      </SettingsForm>
      <section aria-labelledby="placeholders">
        <h2 id="placeholders">Placeholders</h2>
        <p className="muted">Replaced by their values when a message is sent; these are all the {label} may use.</p>
        <ul className="placeholders">
          {answer.placeholders.map((p) => (
            <li key={p}>
              <code>{p}</code>
            </li>
          ))}
        </ul>
      </section>
    </>
  );
}
