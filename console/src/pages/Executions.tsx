import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Cell } from "react-aria-components";
import { useForm } from "react-hook-form";
import { PlatformActions } from "../../../gen/platform/resources/action/v3alpha/action_service_pb";
import { TargetFieldName } from "../../../gen/platform/resources/action/v3alpha/target_pb";
import { usePermissions } from "../api/permissions";
import { ApiError } from "../components/ApiError";
import { CheckboxesInput, RadioInput } from "../components/ChoiceInputs";
import { FormDialog } from "../components/FormDialog";
import { Pager } from "../components/Pager";
import { RemoveButton } from "../components/RemoveButton";
import { ResultTable } from "../components/ResultTable";
import { SelectField } from "../components/SelectField";
import { ActionsTabs } from "./actions/ActionsTabs";
import { conditionOf, describeCondition, type ConditionKind } from "./actions/condition";

const LIMIT = 20;

/** Which targets every target name; executions name them by id. */
function useTargetNames() {
  const targets = useQuery(PlatformActions.method.searchTargets, { query: { limit: 1000, asc: true }, sortingColumn: TargetFieldName.NAME });
  const rows = targets.data?.result ?? [];
  return {
    options: rows.map((t) => ({ value: t.details?.id ?? "", label: t.target?.name ?? "" })),
    name: (id: string) => rows.find((t) => t.details?.id === id)?.target?.name ?? id,
  };
}

/** When actions run: each condition with the targets it calls; setting and removing them. */
export function Executions() {
  const { may } = usePermissions();
  const queries = useQueryClient();
  const [offset, setOffset] = useState(0);
  const found = useQuery(PlatformActions.method.searchExecutions, { query: { offset: BigInt(offset), limit: LIMIT } });
  const targets = useTargetNames();
  const remove = useMutation(PlatformActions.method.deleteExecution, {
    onSuccess: () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformActions, cardinality: undefined }) }),
  });
  const rows = found.data?.result ?? [];
  return (
    <>
      <div className="title">
        <h1>Actions</h1>
        {may("action.execution.write") && <SetExecution targets={targets.options} />}
      </div>
      <ActionsTabs />
      <ApiError error={found.error ?? remove.error} />
      <ResultTable
        label="Executions"
        columns={["When", "Calls", "Actions"]}
        rows={rows}
        rowId={(e) => e.details?.id ?? ""}
        pending={found.isPending}
        empty="No executions yet."
        dependencies={[targets.options]}
      >
        {(e) => (
          <>
            <Cell>{describeCondition(e.execution?.condition)}</Cell>
            <Cell>{[...(e.execution?.targets ?? []).map(targets.name), ...(e.execution?.includes ?? []).map((i) => `the execution ${i}`)].join(", ")}</Cell>
            <Cell>
              {may("action.execution.delete") && (
                <RemoveButton
                  what={`the execution ${describeCondition(e.execution?.condition)}`}
                  pending={remove.isPending}
                  onPress={() => remove.mutate({ id: e.details?.id ?? "" })}
                />
              )}
            </Cell>
          </>
        )}
      </ResultTable>
      <Pager offset={offset} limit={LIMIT} shown={rows.length} total={Number(found.data?.details?.totalResult ?? 0n)} onOffset={setOffset} />
    </>
  );
}

const KINDS: { value: ConditionKind; label: string }[] = [
  { value: "request", label: "Before a call (its request)" },
  { value: "response", label: "After a call (its response)" },
  { value: "function", label: "In a function of the sign-in (e.g. adding claims)" },
  { value: "event", label: "On an event" },
];

interface ExecutionValues {
  kind: ConditionKind;
  which: string;
  targets: string[];
}

/** Which conditions of a kind there are, as the API lists them. */
function useChoices(kind: ConditionKind) {
  const methods = useQuery(PlatformActions.method.listAvailableExecutionMethods, {}, { enabled: kind === "request" || kind === "response" });
  const services = useQuery(PlatformActions.method.listAvailableExecutionServices, {}, { enabled: kind === "request" || kind === "response" });
  const functions = useQuery(PlatformActions.method.listAvailableExecutionFunctions, {}, { enabled: kind === "function" });
  const events = useQuery(PlatformActions.method.listAvailableExecutionEvents, {}, { enabled: kind === "event" });
  const all = { key: "all", label: kind === "event" ? "Every event" : "Every call" };
  if (kind === "function") return (functions.data?.functions ?? []).map((f) => ({ key: `function:${f}`, label: f }));
  if (kind === "event")
    return [
      all,
      ...(events.data?.groups ?? []).map((g) => ({ key: `group:${g}`, label: `Group ${g}` })),
      ...(events.data?.events ?? []).map((e) => ({ key: `event:${e}`, label: e })),
    ];
  return [
    all,
    ...(services.data?.services ?? []).map((s) => ({ key: `service:${s}`, label: `Service ${s}` })),
    ...(methods.data?.methods ?? []).map((m) => ({ key: `method:${m}`, label: m })),
  ];
}

function SetExecution({ targets }: { targets: { value: string; label: string }[] }) {
  const [open, setOpen] = useState(false);
  const queries = useQueryClient();
  const form = useForm<ExecutionValues>({ defaultValues: { kind: "request", which: "all", targets: [] } });
  const kind = form.watch("kind");
  const which = form.watch("which");
  const choices = useChoices(kind);
  const put = useMutation(PlatformActions.method.putExecution, {
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformActions, cardinality: undefined }) });
      setOpen(false);
      form.reset();
    },
  });
  const submit = form.handleSubmit((v) => put.mutate({ execution: { condition: conditionOf(v.kind, v.which), targets: v.targets } }));
  return (
    <FormDialog label="New execution" primary open={open} onOpenChange={setOpen} onSubmit={submit} submit="Save" pending={put.isPending} error={put.error}>
      <RadioInput control={form.control} name="kind" label="When" options={KINDS} onChoose={(k) => form.setValue("which", k === "function" ? "" : "all")} />
      {choices.length > 0 && (
        <SelectField
          label="Which"
          value={choices.some((c) => c.key === which) ? which : choices[0]!.key}
          options={choices}
          onChange={(k) => form.setValue("which", k)}
        />
      )}
      <CheckboxesInput
        control={form.control}
        name="targets"
        label="Targets to call"
        options={targets}
        description={targets.length === 0 ? "No targets yet: create one first." : undefined}
      />
    </FormDialog>
  );
}
