import { useQuery } from "@connectrpc/connect-query";
import { useParams } from "@tanstack/react-router";
import { PlatformSMSProviders } from "../../../../gen/platform/resources/sms_provider/v3alpha/sms_provider_service_pb";
import { SMS } from "./families";
import { ProviderPage } from "./ProviderPage";
import { ProviderSettings } from "./ProviderSettings";
import { SmsFields } from "./SmsFields";
import { smsPatch, smsRow, smsValues } from "./sms-form";

/** One SMS provider: its state, a test, deleting it, and its settings (the auth token never shown). */
export function SmsProvider() {
  const { providerId } = useParams({ from: "/messages/sms/$providerId" });
  const found = useQuery(PlatformSMSProviders.method.getSMSProvider, { id: providerId });
  return (
    <ProviderPage family={SMS} found={found} row={smsRow}>
      {(p) => {
        const saved = smsValues(p);
        return (
          <ProviderSettings family={SMS} id={providerId} saved={saved} patch={smsPatch} fields={(control) => <SmsFields control={control} saved={saved} />} />
        );
      }}
    </ProviderPage>
  );
}
