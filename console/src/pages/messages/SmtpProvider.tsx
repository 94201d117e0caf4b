import { useQuery } from "@connectrpc/connect-query";
import { useParams } from "@tanstack/react-router";
import { PlatformSMTPProviders } from "../../../../gen/platform/resources/smtp_provider/v3alpha/smtp_provider_service_pb";
import { SMTP } from "./families";
import { ProviderPage } from "./ProviderPage";
import { ProviderSettings } from "./ProviderSettings";
import { SmtpFields } from "./SmtpFields";
import { smtpPatch, smtpRow, smtpValues } from "./smtp-form";

/** One email provider: its state, a test, deleting it, and its settings (the password never shown). */
export function SmtpProvider() {
  const { providerId } = useParams({ from: "/messages/smtp/$providerId" });
  const found = useQuery(PlatformSMTPProviders.method.getSMTPProvider, { id: providerId });
  return (
    <ProviderPage family={SMTP} found={found} row={smtpRow}>
      {(p) => {
        const saved = { values: smtpValues(p), passwordSet: p.kind.case === "smtp" && p.kind.value.passwordSet };
        return (
          <ProviderSettings
            family={SMTP}
            id={providerId}
            saved={saved.values}
            patch={smtpPatch}
            fields={(control) => <SmtpFields control={control} saved={saved} />}
          />
        );
      }}
    </ProviderPage>
  );
}
