import { useQuery } from "@connectrpc/connect-query";
import { keepPreviousData } from "@tanstack/react-query";
import { useContext, useState, type ReactNode } from "react";
import { Button, ComboBox, ComboBoxStateContext, Input, Label, ListBox, ListBoxItem, Popover } from "react-aria-components";
import { TextFilterMethod } from "../../../gen/platform/resources/object/v3alpha/object_pb";
import { OrganizationFieldName } from "../../../gen/platform/resources/org/v3alpha/organization_pb";
import { PlatformOrganizations } from "../../../gen/platform/resources/org/v3alpha/org_service_pb";
import { useScope } from "../scope";

const ALL = { id: "instance", name: "All organizations" };

interface Choice {
  id: string;
  name: string;
}

/**
 * Where the console acts: the whole instance, or one organization, found by its name on the
 * server (the first 20 matches; an instance may have thousands). Only organizations the
 * person may read are listed: the search answers no others.
 *
 * The input's text is kept here, not by React Aria: left to it, every closing of the list (a
 * scroll of the page too) put the chosen item's name back over what was typed. Here only a
 * choice, or React Aria committing the current one (Escape, Enter, leaving the field), ends
 * the typing.
 */
export function OrgSwitcher({ instanceWide }: { instanceWide: boolean }) {
  const { orgId, choose } = useScope();
  // What the person is typing; null while they are not, and the chosen context's name shows.
  const [typed, setTyped] = useState<string | null>(null);
  const filters = typed ? [{ filter: { case: "name" as const, value: { name: typed, method: TextFilterMethod.CONTAINS_IGNORE_CASE } } }] : [];
  // The options offered stay while the next keystroke's answer loads.
  const found = useQuery(
    PlatformOrganizations.method.searchOrganizations,
    { filters, query: { limit: 20, asc: true }, sortingColumn: OrganizationFieldName.NAME },
    { placeholderData: keepPreviousData },
  );
  const current = useQuery(PlatformOrganizations.method.getOrganization, orgId ? { id: orgId } : undefined, { enabled: Boolean(orgId) });
  const orgs = (found.data?.result ?? []).map((o) => ({ id: o.details?.id ?? "", name: o.name }));
  // Just chosen, its name is in the search's answer before GetOrganization's.
  const orgName = current.data?.organization?.name ?? orgs.find((o) => o.id === orgId)?.name;
  const currentOrg = orgId && orgName !== undefined ? { id: orgId, name: orgName } : undefined;
  const chosen = orgId ? currentOrg : instanceWide ? ALL : undefined;
  const matches = orgs.filter((o) => o.id !== orgId);
  // The chosen organization stays listed whatever is typed: React Aria finds the selection's name only in the list.
  const items = [...(instanceWide ? [ALL] : []), ...(currentOrg ? [currentOrg] : []), ...matches];
  return (
    <ComboBox
      className="switcher"
      items={items}
      selectedKey={chosen?.id ?? null}
      inputValue={typed ?? chosen?.name ?? ""}
      onInputChange={setTyped}
      onSelectionChange={(key) => {
        setTyped(null);
        if (key !== null && key !== chosen?.id) choose(key === ALL.id ? undefined : String(key));
      }}
      onBlur={() => setTyped(null)}
      menuTrigger="focus"
    >
      <Label>Organization</Label>
      <div className="combo">
        <OpeningInput />
        <Button aria-label="Show organizations">▾</Button>
      </div>
      <SteadyPopover>
        <ListBox>{(item: Choice) => <ListBoxItem id={item.id}>{item.name}</ListBoxItem>}</ListBox>
      </SteadyPopover>
    </ComboBox>
  );
}

/** The input; menuTrigger="focus" opens the list when the field gains focus, and a click into the field that kept it (after a choice) opens it too. */
function OpeningInput() {
  const state = useContext(ComboBoxStateContext);
  return <Input onClick={() => state?.isOpen === false && state.open(null, "manual")} />;
}

/**
 * The list, open exactly while the combobox is. React Aria closes a combobox's list whenever
 * the page scrolls, and closing commits: the chosen name over what was typed, even when the
 * scroll was the page's own (a refresh changing its height, a field scrolled into view). The
 * header scrolls with the page and the list with it, so it stays open.
 */
function SteadyPopover({ children }: { children: ReactNode }) {
  const state = useContext(ComboBoxStateContext);
  return <Popover isOpen={state?.isOpen ?? false}>{children}</Popover>;
}
