import { useQuery } from "@connectrpc/connect-query";
import { OwnerType, type Owner } from "../../../../gen/platform/object/v3alpha/object_pb";
import { PlatformOrganizations } from "../../../../gen/platform/resources/org/v3alpha/org_service_pb";
import { usePermissions } from "../../api/permissions";

/** The context that defines a provider, in words: an organization by its name when the person may read it. */
export function OwnerName({ owner }: { owner: Owner | undefined }) {
  const { may } = usePermissions();
  const orgId = owner?.type === OwnerType.ORG ? owner.id : "";
  const org = useQuery(PlatformOrganizations.method.getOrganization, { id: orgId }, { enabled: orgId !== "" && may("org.read") });
  switch (owner?.type) {
    case OwnerType.SYSTEM:
      return <>The system</>;
    case OwnerType.INSTANCE:
      return <>The instance</>;
    case OwnerType.ORG:
      return <>Organization {org.data?.organization?.name ?? orgId}</>;
    default:
      return <>Unknown</>;
  }
}
