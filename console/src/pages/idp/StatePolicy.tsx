import type { DescMessage, DescMethodUnary } from "@bufbuild/protobuf";
import { useMutation } from "@connectrpc/connect-query";
import { useForm } from "react-hook-form";
import { OwnerType } from "../../../../gen/platform/object/v3alpha/object_pb";
import type { GetIDP } from "../../../../gen/platform/resources/idp/v3alpha/idp_pb";
import { State, StatePolicy } from "../../../../gen/platform/resources/object/v3alpha/object_pb";
import { RadioInput } from "../../components/ChoiceInputs";
import { FormFooter } from "../../components/FormFooter";
import { Inherited } from "../../components/Inherited";
import { useScope } from "../../scope";
import { StateBadge } from "./StateBadge";

const POLICIES = [
  { value: String(StatePolicy.INHERIT), label: "Inherit" },
  { value: String(StatePolicy.ACTIVATE), label: "Activate" },
  { value: String(StatePolicy.DEACTIVATE), label: "Deactivate" },
];

/**
 * The provider's effective state in the context the console acts in, and that context's own
 * policy (its type's Patch with only the policy, which a context reusing it may send). Where
 * it is defined, Inherit counts as active; below, it follows the parent context.
 */
export function StatePolicySection({
  idpId,
  got,
  patch,
  mayWrite,
  onSaved,
}: {
  idpId: string;
  got: GetIDP;
  patch: DescMethodUnary<DescMessage, DescMessage>;
  mayWrite: boolean;
  onSaved(): Promise<void>;
}) {
  const { ctx } = useScope();
  const policy = got.idp?.statePolicy ?? StatePolicy.INHERIT;
  const form = useForm<{ policy: string }>({ values: { policy: String(policy) } });
  const save = useMutation(patch, { onSuccess: onSaved });
  const set = (next: StatePolicy) => save.mutate({ id: idpId, ctx, idp: { idp: { statePolicy: next } } });
  const parent = got.parent;
  const above = parent?.parent?.type === OwnerType.SYSTEM ? "the system" : "the instance";
  return (
    <section aria-labelledby="state">
      <h2 id="state">State here</h2>
      <p>
        {parent ? "In the context the console acts in:" : "Where it is defined:"} <StateBadge state={got.state} />
      </p>
      {parent && (
        <Inherited
          setting="state policy"
          owner={policy === StatePolicy.INHERIT ? parent.parent : undefined}
          mayReset={mayWrite}
          pending={save.isPending}
          onReset={() => set(StatePolicy.INHERIT)}
        />
      )}
      <form onSubmit={form.handleSubmit((v) => set(Number(v.policy) as StatePolicy))}>
        <fieldset className="plain" disabled={!mayWrite}>
          <RadioInput
            control={form.control}
            name="policy"
            label="State policy"
            description={
              parent
                ? `Inherit follows ${above}, where it is ${parent.state === State.EFFECTIVE_STATE_ACTIVE ? "active" : "inactive"}; Activate and Deactivate decide for this context alone.`
                : "Inherit and Activate make it active here; Deactivate turns it off here and wherever it is inherited, unless activated there."
            }
            options={POLICIES}
          />
        </fieldset>
        {mayWrite && (
          <FormFooter submit="Save the state policy" pending={save.isPending} error={save.error} saved={save.isSuccess && !form.formState.isDirty} />
        )}
      </form>
    </section>
  );
}
