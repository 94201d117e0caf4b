import { useQuery } from "@connectrpc/connect-query";
import { useState } from "react";
import { Button, ComboBox, Input, Label, ListBox, ListBoxItem, Popover } from "react-aria-components";
import { TextFilterMethod } from "../../../gen/platform/resources/object/v3alpha/object_pb";
import { OrganizationFieldName } from "../../../gen/platform/resources/org/v3alpha/organization_pb";
import { PlatformOrganizations } from "../../../gen/platform/resources/org/v3alpha/org_service_pb";
import { useScope } from "../scope";

const ALL = "instance";

/**
 * Where the console acts: the whole instance, or one organization, found by its name on the
 * server (the first 20 matches; an instance may have thousands). Only organizations the
 * person may read are listed: the search answers no others.
 */
export function OrgSwitcher({ instanceWide }: { instanceWide: boolean }) {
  const { orgId, choose } = useScope();
  const [text, setText] = useState("");
  const filters = text ? [{ filter: { case: "name" as const, value: { name: text, method: TextFilterMethod.CONTAINS_IGNORE_CASE } } }] : [];
  const found = useQuery(PlatformOrganizations.method.searchOrganizations, { filters, query: { limit: 20, asc: true }, sortingColumn: OrganizationFieldName.NAME });
  const current = useQuery(PlatformOrganizations.method.getOrganization, orgId ? { id: orgId } : undefined, { enabled: Boolean(orgId) });
  const items = [
    ...(instanceWide ? [{ id: ALL, name: "All organizations" }] : []),
    ...(current.data?.organization && !text ? [{ id: orgId!, name: current.data.organization.name }] : []),
    ...(found.data?.result ?? []).filter((o) => text || o.details?.id !== orgId).map((o) => ({ id: o.details?.id ?? "", name: o.name })),
  ];
  return (
    <ComboBox
      className="switcher"
      items={items}
      selectedKey={orgId ?? (instanceWide ? ALL : null)}
      onSelectionChange={(key) => {
        setText("");
        if (key !== null) choose(key === ALL ? undefined : String(key));
      }}
      onInputChange={setText}
      menuTrigger="focus"
    >
      <Label>Organization</Label>
      <div className="combo">
        <Input />
        <Button aria-label="Show organizations">▾</Button>
      </div>
      <Popover>
        <ListBox>{(item: { id: string; name: string }) => <ListBoxItem id={item.id}>{item.name}</ListBoxItem>}</ListBox>
      </Popover>
    </ComboBox>
  );
}
