import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { Button, Cell, Dialog, DialogTrigger, Heading, Modal } from "react-aria-components";
import { useForm } from "react-hook-form";
import { TextFilterMethod } from "../../../gen/platform/resources/object/v3alpha/object_pb";
import { ProjectFieldName, ProjectState } from "../../../gen/platform/resources/project/v3alpha/project_pb";
import { PlatformProjects } from "../../../gen/platform/resources/project/v3alpha/project_service_pb";
import { usePermissions } from "../api/permissions";
import { ApiError } from "../components/ApiError";
import { FormFooter } from "../components/FormFooter";
import { Pager } from "../components/Pager";
import { ResultTable } from "../components/ResultTable";
import { SearchBox } from "../components/SearchBox";
import { TextInput } from "../components/TextInput";
import { useScope } from "../scope";

const LIMIT = 20;

/** The projects of the context (one organization, or every one): found by name on the server, a page at a time; creating one. */
export function Projects() {
  const { ctx } = useScope();
  const { may } = usePermissions();
  const [name, setName] = useState("");
  const [offset, setOffset] = useState(0);
  const filters = name ? [{ filter: { case: "name" as const, value: { name, method: TextFilterMethod.CONTAINS_IGNORE_CASE } } }] : [];
  const found = useQuery(PlatformProjects.method.searchProjects, {
    filters,
    ctx,
    query: { offset: BigInt(offset), limit: LIMIT, asc: true },
    sortingColumn: ProjectFieldName.NAME,
  });
  const rows = found.data?.result ?? [];
  return (
    <>
      <div className="title">
        <h1>Projects</h1>
        {may("project.write") && <CreateProject />}
      </div>
      <SearchBox
        label="Find by name"
        value={name}
        onChange={(value) => {
          setName(value);
          setOffset(0);
        }}
      />
      <ApiError error={found.error} />
      <ResultTable
        label="Projects"
        columns={["Name", "State"]}
        rows={rows}
        rowId={(p) => p.details?.id ?? ""}
        pending={found.isPending}
        empty="No project matches."
      >
        {(p) => (
          <>
            <Cell>
              <Link to="/projects/$projectId" params={{ projectId: p.details?.id ?? "" }} search={(prev) => prev}>
                {p.project?.name}
              </Link>
            </Cell>
            <Cell>{p.state === ProjectState.ACTIVE ? "Active" : "Inactive"}</Cell>
          </>
        )}
      </ResultTable>
      <Pager offset={offset} limit={LIMIT} shown={rows.length} total={Number(found.data?.details?.totalResult ?? 0n)} onOffset={setOffset} />
    </>
  );
}

/** A new project, in the organization chosen in the switcher (without one, the instance's default organization). */
function CreateProject() {
  const { ctx, orgId } = useScope();
  const [open, setOpen] = useState(false);
  const navigate = useNavigate();
  const queries = useQueryClient();
  const form = useForm<{ name: string }>({ defaultValues: { name: "" } });
  const create = useMutation(PlatformProjects.method.createProject, {
    onSuccess: async (answer) => {
      await queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformProjects, cardinality: undefined }) });
      setOpen(false);
      form.reset();
      await navigate({ to: "/projects/$projectId", params: { projectId: answer.details?.id ?? "" }, search: (prev) => prev });
    },
  });
  return (
    <DialogTrigger isOpen={open} onOpenChange={setOpen}>
      <Button className="primary">New project</Button>
      <Modal>
        <Dialog>
          <Heading slot="title">New project</Heading>
          <form onSubmit={form.handleSubmit((values) => create.mutate({ project: { name: values.name.trim() }, ctx }))}>
            <TextInput
              control={form.control}
              name="name"
              label="Name"
              description={orgId ? "In the organization chosen above." : "In the instance's default organization (choose another above)."}
              rules={{ required: "Give the project a name.", maxLength: { value: 200, message: "At most 200 characters." } }}
              autoFocus
            />
            <FormFooter submit="Create" pending={create.isPending} error={create.error} cancel />
          </form>
        </Dialog>
      </Modal>
    </DialogTrigger>
  );
}
