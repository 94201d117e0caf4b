import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createConnectQueryKey, useMutation } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { Button, Dialog, DialogTrigger, Heading, Modal } from "react-aria-components";
import { useForm } from "react-hook-form";
import { PlatformInstances, type CreateInstanceResponse } from "../../../../gen/platform/resources/instance/v3alpha/instance_service_pb";
import { CheckboxInput } from "../../components/ChoiceInputs";
import { FormFooter } from "../../components/FormFooter";
import { SecretOnce } from "../../components/SecretOnce";
import { TextInput } from "../../components/TextInput";
import { lines, TextLinesInput } from "../../components/TextLinesInput";

const DAY_MS = 24 * 3600 * 1000;

interface NewInstanceValues {
  name: string;
  domains: string;
  firstOrgName: string;
  username: string;
  givenName: string;
  familyName: string;
  email: string;
  password: string;
  withToken: boolean;
  days: string;
}

const EMPTY: NewInstanceValues = {
  name: "",
  domains: "",
  firstOrgName: "",
  username: "",
  givenName: "",
  familyName: "",
  email: "",
  password: "",
  withToken: false,
  days: "30",
};

/** A new instance with its domains, first organization and first administrator; the administrator's token, if asked for, shown this once. */
export function NewInstance() {
  const [open, setOpen] = useState(false);
  const [created, setCreated] = useState<CreateInstanceResponse | undefined>();
  return (
    <DialogTrigger
      isOpen={open}
      onOpenChange={(next) => {
        setOpen(next);
        // The token goes with the dialog: the next one starts afresh.
        if (!next) setCreated(undefined);
      }}
    >
      <Button className="primary">New instance</Button>
      <Modal className="react-aria-Modal large">
        <Dialog>{created ? <Created answer={created} /> : <NewInstanceForm onCreated={setCreated} />}</Dialog>
      </Modal>
    </DialogTrigger>
  );
}

function NewInstanceForm({ onCreated }: { onCreated(answer: CreateInstanceResponse): void }) {
  const queries = useQueryClient();
  const form = useForm<NewInstanceValues>({ defaultValues: EMPTY });
  const withToken = form.watch("withToken");
  const create = useMutation(PlatformInstances.method.createInstance, {
    onSuccess: async (answer) => {
      await queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformInstances, cardinality: undefined }) });
      onCreated(answer);
    },
  });
  const submit = (v: NewInstanceValues) =>
    create.mutate({
      instance: {
        name: v.name.trim(),
        domains: lines(v.domains),
        firstOrgName: v.firstOrgName.trim(),
        admin: {
          user: {
            username: v.username.trim(),
            type: {
              case: "human",
              value: {
                profile: { givenName: v.givenName.trim(), familyName: v.familyName.trim() },
                email: { address: v.email.trim() },
                passwordType: { case: "password", value: v.password },
              },
            },
          },
          ...(v.withToken && { patExpirationDate: timestampFromDate(new Date(Date.now() + Number(v.days) * DAY_MS)) }),
        },
      },
    });
  const required = (what: string) => ({ required: `Give ${what}.`, maxLength: { value: 200, message: "At most 200 characters." } });
  return (
    <>
      <Heading slot="title">New instance</Heading>
      <form onSubmit={form.handleSubmit(submit)}>
        <TextInput control={form.control} name="name" label="Name" rules={required("the instance a name")} autoFocus />
        <TextLinesInput
          control={form.control}
          name="domains"
          label="Domains"
          description="Host names it is served on, one a line; the first is its primary domain."
        />
        <TextInput
          control={form.control}
          name="firstOrgName"
          label="First organization"
          description="Its default organization, which holds the administrator."
          rules={required("the first organization a name")}
        />
        <fieldset className="plain">
          <legend>First administrator (IAM_OWNER)</legend>
          <TextInput control={form.control} name="username" label="Username" rules={required("a username")} />
          <div className="field-row">
            <TextInput control={form.control} name="givenName" label="Given name" rules={required("a given name")} />
            <TextInput control={form.control} name="familyName" label="Family name" rules={required("a family name")} />
          </div>
          <TextInput control={form.control} name="email" label="Email" type="email" rules={required("an email address")} />
          <TextInput
            control={form.control}
            name="password"
            label="Password"
            type="password"
            autoComplete="new-password"
            description="Checked against the new instance's password policy."
            rules={{ required: "Give a password." }}
          />
          <CheckboxInput control={form.control} name="withToken" label="Also a personal access token for the API" />
          {withToken && (
            <TextInput
              control={form.control}
              name="days"
              label="Token valid for (days)"
              rules={{ required: "Give a number of days.", pattern: { value: /^[1-9]\d{0,4}$/, message: "A whole number of days, 1 or more." } }}
            />
          )}
        </fieldset>
        <FormFooter submit="Create" pending={create.isPending} error={create.error} cancel />
      </form>
    </>
  );
}

function Created({ answer }: { answer: CreateInstanceResponse }) {
  return (
    <>
      <Heading slot="title">Instance created</Heading>
      <dl className="facts">
        <dt>ID</dt>
        <dd>
          <code>{answer.details?.id}</code>
        </dd>
        <dt>Administrator</dt>
        <dd>
          <code>{answer.adminUserId}</code>
        </dd>
      </dl>
      {answer.adminPat && <SecretOnce label="Administrator's token" value={answer.adminPat} />}
      <div className="actions">
        <Link className="button primary" to="/instances/$instanceId" params={{ instanceId: answer.details?.id ?? "" }} search={(prev) => prev}>
          Open the instance
        </Link>
        <Button slot="close">Close</Button>
      </div>
    </>
  );
}
