import { useQuery } from "@connectrpc/connect-query";
import { SMSProviderFieldName } from "../../../../gen/platform/resources/sms_provider/v3alpha/sms_provider_pb";
import { PlatformSMSProviders } from "../../../../gen/platform/resources/sms_provider/v3alpha/sms_provider_service_pb";
import { usePermissions } from "../../api/permissions";
import { SMS, WRITE } from "./families";
import { NewProvider } from "./NewProvider";
import { ProviderList, useDescriptionSearch } from "./ProviderList";
import { SmsFields } from "./SmsFields";
import { EMPTY_SMS, smsProvider, smsRow } from "./sms-form";

/** The instance's SMS providers, and a new one. */
export function SmsProviders() {
  const { may } = usePermissions();
  const search = useDescriptionSearch();
  const found = useQuery(PlatformSMSProviders.method.searchSMSProviders, {
    filters: search.filters,
    query: search.query,
    sortingColumn: SMSProviderFieldName.SMS_PROVIDER_FIELD_NAME_DESCRIPTION,
  });
  const create = <NewProvider family={SMS} empty={EMPTY_SMS} provider={smsProvider} fields={(control) => <SmsFields control={control} autoFocus />} />;
  return <ProviderList family={SMS} search={search} found={found} row={smsRow} create={may(WRITE) && create} />;
}
