import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useParams } from "@tanstack/react-router";
import { useState } from "react";
import { Button, Cell, Column, Row, Table, TableBody, TableHeader } from "react-aria-components";
import { useForm } from "react-hook-form";
import { DomainValidationType } from "../../../gen/platform/resources/domain/v3alpha/domain_pb";
import { PlatformDomains } from "../../../gen/platform/resources/domain/v3alpha/domain_service_pb";
import { OrganizationState } from "../../../gen/platform/resources/org/v3alpha/organization_pb";
import { PlatformOrganizations } from "../../../gen/platform/resources/org/v3alpha/org_service_pb";
import { usePermissions } from "../api/permissions";
import { ApiError } from "../components/ApiError";
import { TextInput } from "../components/TextInput";
import { ResourceTabs, TABS } from "./events/ResourceTabs";

/**
 * One organization: its state, whether it is the instance's default, and its domains —
 * adding one, proving it (a DNS TXT record or a file over HTTP, with the token to publish),
 * making it the primary one that forms login names, removing it.
 */
export function Organization() {
  const { orgId } = useParams({ from: "/organizations/$orgId" });
  const { may } = usePermissions();
  const queries = useQueryClient();
  const org = useQuery(PlatformOrganizations.method.getOrganization, { id: orgId });
  const refresh = () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformOrganizations, cardinality: undefined }) });
  const opts = { onSuccess: refresh };
  const deactivate = useMutation(PlatformOrganizations.method.deactivateOrganization, opts);
  const reactivate = useMutation(PlatformOrganizations.method.reactivateOrganization, opts);
  const makeDefault = useMutation(PlatformOrganizations.method.setAsInstanceDefault, opts);
  const o = org.data?.organization;
  if (org.error) return <ApiError error={org.error} />;
  if (!o) return <p role="status">Loading…</p>;
  const active = o.state === OrganizationState.ACTIVE;
  return (
    <>
      <div className="title">
        <h1>{o.name}</h1>
        {o.isDefault && <span className="badge">Default</span>}
        <span className={active ? "badge ok" : "badge off"}>{active ? "Active" : "Inactive"}</span>
      </div>
      <ResourceTabs label="Organization" tabs={TABS.org(orgId)} />
      <dl className="facts">
        <dt>ID</dt>
        <dd>
          <code>{orgId}</code>
        </dd>
        <dt>Primary domain</dt>
        <dd>{o.primaryDomain}</dd>
      </dl>
      <div className="actions">
        {may("instance.write") && !o.isDefault && active && (
          <Button onPress={() => makeDefault.mutate({ id: orgId })} isDisabled={makeDefault.isPending}>
            Make the default organization
          </Button>
        )}
        {may("org.write") &&
          !o.isDefault &&
          (active ? (
            <Button onPress={() => deactivate.mutate({ id: orgId })} isDisabled={deactivate.isPending}>
              Deactivate
            </Button>
          ) : (
            <Button onPress={() => reactivate.mutate({ id: orgId })} isDisabled={reactivate.isPending}>
              Reactivate
            </Button>
          ))}
      </div>
      <ApiError error={makeDefault.error ?? deactivate.error ?? reactivate.error} />
      <Domains orgId={orgId} mayWrite={may("org.domain.write")} />
    </>
  );
}

function Domains({ orgId, mayWrite }: { orgId: string; mayWrite: boolean }) {
  const queries = useQueryClient();
  const ctx = { type: { case: "orgId" as const, value: orgId } };
  const found = useQuery(PlatformDomains.method.searchDomains, { ctx, query: { limit: 100, asc: true } });
  const refresh = () =>
    Promise.all([
      queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformDomains, cardinality: undefined }) }),
      queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformOrganizations, cardinality: undefined }) }),
    ]);
  const add = useMutation(PlatformDomains.method.addDomain, { onSuccess: refresh });
  const primary = useMutation(PlatformDomains.method.setAsPrimary, { onSuccess: refresh });
  const remove = useMutation(PlatformDomains.method.deleteDomain, { onSuccess: refresh });
  const form = useForm<{ domain: string }>({ defaultValues: { domain: "" } });
  const [proving, setProving] = useState<string | undefined>();
  const rows = found.data?.result ?? [];
  return (
    <section aria-labelledby="domains">
      <h2 id="domains">Domains</h2>
      <ApiError error={found.error ?? primary.error ?? remove.error} />
      <Table aria-label="Domains">
        <TableHeader>
          <Column isRowHeader>Domain</Column>
          <Column>Verified</Column>
          <Column>Actions</Column>
        </TableHeader>
        <TableBody items={rows} renderEmptyState={() => (found.isPending ? "Loading…" : "No domains.")}>
          {(d) => (
            <Row id={d.domain}>
              <Cell>
                {d.domain}
                {d.isPrimary && <span className="badge">Primary</span>}
                {d.isGenerated && <span className="badge">Generated</span>}
              </Cell>
              <Cell>{d.isVerified ? "Yes" : "No"}</Cell>
              <Cell>
                {mayWrite && (
                  <div className="row-actions">
                    {!d.isVerified && <Button onPress={() => setProving(d.domain)}>Verify…</Button>}
                    {!d.isPrimary && (
                      <Button onPress={() => primary.mutate({ domain: d.domain, ctx })} isDisabled={primary.isPending}>
                        Make primary
                      </Button>
                    )}
                    {!d.isPrimary && !d.isGenerated && (
                      <Button onPress={() => remove.mutate({ domain: d.domain, ctx })} isDisabled={remove.isPending}>
                        Remove
                      </Button>
                    )}
                  </div>
                )}
              </Cell>
            </Row>
          )}
        </TableBody>
      </Table>
      {proving && (
        <Proof
          domain={proving}
          ctx={ctx}
          onDone={() => {
            setProving(undefined);
            void refresh();
          }}
        />
      )}
      {mayWrite && (
        <form
          className="inline"
          onSubmit={form.handleSubmit((v) => add.mutate({ domain: { domain: v.domain.trim().toLowerCase() }, ctx }, { onSuccess: () => form.reset() }))}
        >
          <TextInput
            control={form.control}
            name="domain"
            label="Add a domain"
            description="A domain your organization owns, e.g. acme.example.com"
            rules={{ required: "Give a domain name." }}
          />
          <Button type="submit" isDisabled={add.isPending}>
            Add
          </Button>
          <ApiError error={add.error} />
        </form>
      )}
    </section>
  );
}

/** Proving a domain: a token to publish where the service looks (DNS or HTTP), then the check. */
function Proof({ domain, ctx, onDone }: { domain: string; ctx: { type: { case: "orgId"; value: string } }; onDone(): void }) {
  const generate = useMutation(PlatformDomains.method.generateDomainValidation);
  const validate = useMutation(PlatformDomains.method.validateDomain, { onSuccess: onDone });
  const token = generate.data;
  return (
    <section className="panel" aria-labelledby="proof">
      <h3 id="proof">Verify {domain}</h3>
      <div className="actions">
        <Button onPress={() => generate.mutate({ domain, type: DomainValidationType.DNS, ctx })}>Prove with a DNS record</Button>
        <Button onPress={() => generate.mutate({ domain, type: DomainValidationType.HTTP, ctx })}>Prove with a file over HTTP</Button>
      </div>
      {token && (
        <>
          <p>
            {token.type === DomainValidationType.DNS ? "Publish a TXT record" : "Serve a file"} at <code>{token.location}</code> with the content{" "}
            <code className="secret">{token.token}</code>, then check it.
          </p>
          <Button className="primary" onPress={() => validate.mutate({ domain, ctx })} isDisabled={validate.isPending}>
            Check now
          </Button>
        </>
      )}
      <ApiError error={generate.error ?? validate.error} />
    </section>
  );
}
