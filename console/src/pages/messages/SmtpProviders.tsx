import { useQuery } from "@connectrpc/connect-query";
import { SMTPProviderFieldName } from "../../../../gen/platform/resources/smtp_provider/v3alpha/smtp_provider_pb";
import { PlatformSMTPProviders } from "../../../../gen/platform/resources/smtp_provider/v3alpha/smtp_provider_service_pb";
import { usePermissions } from "../../api/permissions";
import { SMTP, WRITE } from "./families";
import { NewProvider } from "./NewProvider";
import { ProviderList, useDescriptionSearch } from "./ProviderList";
import { SmtpFields } from "./SmtpFields";
import { EMPTY_SMTP, smtpProvider, smtpRow } from "./smtp-form";

/** The instance's email providers, and a new one. */
export function SmtpProviders() {
  const { may } = usePermissions();
  const search = useDescriptionSearch();
  const found = useQuery(PlatformSMTPProviders.method.searchSMTPProviders, {
    filters: search.filters,
    query: search.query,
    sortingColumn: SMTPProviderFieldName.SMTP_PROVIDER_FIELD_NAME_DESCRIPTION,
  });
  const create = <NewProvider family={SMTP} empty={EMPTY_SMTP} provider={smtpProvider} fields={(control) => <SmtpFields control={control} autoFocus />} />;
  return <ProviderList family={SMTP} search={search} found={found} row={smtpRow} create={may(WRITE) && create} />;
}
