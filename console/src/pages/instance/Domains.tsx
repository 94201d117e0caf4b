import { timestampDate } from "@bufbuild/protobuf/wkt";
import { useMutation } from "@connectrpc/connect-query";
import { Button, Cell } from "react-aria-components";
import { useForm } from "react-hook-form";
import type { GetInstance } from "../../../../gen/platform/resources/instance/v3alpha/instance_pb";
import { PlatformInstances } from "../../../../gen/platform/resources/instance/v3alpha/instance_service_pb";
import { ApiError } from "../../components/ApiError";
import { RemoveButton } from "../../components/RemoveButton";
import { ResultTable } from "../../components/ResultTable";
import { TextInput } from "../../components/TextInput";

/**
 * The host names an instance is served on (the instance answers them all at once, on every
 * process): adding one, making one primary, removing one that is not.
 */
export function Domains({ instance, mayWrite, onChanged }: { instance: GetInstance; mayWrite: boolean; onChanged(): Promise<void> }) {
  const id = instance.details?.id ?? "";
  const add = useMutation(PlatformInstances.method.addInstanceDomain, { onSuccess: onChanged });
  const primary = useMutation(PlatformInstances.method.setPrimaryInstanceDomain, { onSuccess: onChanged });
  const remove = useMutation(PlatformInstances.method.removeInstanceDomain, { onSuccess: onChanged });
  const form = useForm<{ domain: string }>({ defaultValues: { domain: "" } });
  const submit = (v: { domain: string }) => add.mutate({ id, domain: { domain: v.domain.trim() } }, { onSuccess: () => form.reset() });
  return (
    <section aria-labelledby="domains">
      <h2 id="domains">Domains</h2>
      <ApiError error={primary.error ?? remove.error} />
      <ResultTable
        label="Domains"
        columns={["Domain", "Added", "Actions"]}
        rows={instance.domains}
        rowId={(d) => d.domain}
        pending={false}
        empty="No domains."
        dependencies={[mayWrite]}
      >
        {(d) => (
          <>
            <Cell>
              {d.domain}
              {d.isPrimary && <span className="badge">Primary</span>}
            </Cell>
            <Cell>{d.creationDate ? timestampDate(d.creationDate).toLocaleDateString() : ""}</Cell>
            <Cell>
              {mayWrite && !d.isPrimary && (
                <div className="row-actions">
                  <Button aria-label={`Make ${d.domain} primary`} onPress={() => primary.mutate({ id, domain: d.domain })} isDisabled={primary.isPending}>
                    Make primary
                  </Button>
                  <RemoveButton what={d.domain} pending={remove.isPending} onPress={() => remove.mutate({ id, domain: d.domain })} />
                </div>
              )}
            </Cell>
          </>
        )}
      </ResultTable>
      {mayWrite && (
        <form className="inline" aria-label="Add a domain" onSubmit={form.handleSubmit(submit)}>
          <TextInput
            control={form.control}
            name="domain"
            label="Domain"
            description="A host name no other instance has, e.g. login.example.com."
            rules={{ required: "Give a host name.", pattern: { value: /^\S+$/, message: "No spaces." } }}
          />
          <Button type="submit" isDisabled={add.isPending}>
            Add domain
          </Button>
          <ApiError error={add.error} />
        </form>
      )}
    </section>
  );
}
