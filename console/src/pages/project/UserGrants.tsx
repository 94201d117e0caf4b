import { callUnaryMethod, useTransport } from "@connectrpc/connect-query";
import type { Transport } from "@connectrpc/connect";
import { useMutation as useTanstackMutation } from "@tanstack/react-query";
import { Button } from "react-aria-components";
import { useForm } from "react-hook-form";
import type { GetUserGrant } from "../../../../gen/platform/resources/grant/v3alpha/grant_pb";
import { PlatformGrants } from "../../../../gen/platform/resources/grant/v3alpha/grant_service_pb";
import { TextFilterMethod } from "../../../../gen/platform/resources/object/v3alpha/object_pb";
import { PlatformUsers } from "../../../../gen/platform/resources/user/v3alpha/user_service_pb";
import { usePermissions } from "../../api/permissions";
import { useUsersById } from "../../api/users-by-id";
import { ApiError } from "../../components/ApiError";
import { CheckboxesInput } from "../../components/ChoiceInputs";
import { TextInput } from "../../components/TextInput";
import { useScope } from "../../scope";
import { GrantTable, useUserGrantPage } from "../grants/GrantTable";
import { useProjectRoleOptions } from "../grants/roles";

/** Who holds roles of a project (user grants): a page at a time, by login name where the person may read users; giving, changing and taking them. */
export function UserGrants({ projectId }: { projectId: string }) {
  const { may } = usePermissions();
  const grants = useUserGrantPage({ case: "projectId", value: { projectId } });
  const users = useUsersById(
    grants.rows.map((g) => g.grant?.userId ?? ""),
    may("user.read"),
  );
  const userOf = (g: GetUserGrant) => users.get(g.grant?.userId ?? "")?.loginName ?? g.grant?.userId ?? "";
  return (
    <section aria-labelledby="grants">
      <h2 id="grants">User grants</h2>
      <GrantTable
        grants={grants}
        label="User grants"
        column="User"
        empty="Nobody holds roles of this project yet."
        describe={(g) => `the grant of ${userOf(g)}`}
        cell={userOf}
        dependencies={[users]}
      />
      {may("user.grant.write") && <AddGrant projectId={projectId} searchUsers={may("user.read")} onAdded={grants.refresh} />}
    </section>
  );
}

interface GrantValues {
  user: string;
  roles: string[];
}

function AddGrant({ projectId, searchUsers, onAdded }: { projectId: string; searchUsers: boolean; onAdded(): Promise<void> }) {
  const { ctx } = useScope();
  const transport = useTransport();
  const roles = useProjectRoleOptions(projectId);
  const form = useForm<GrantValues>({ defaultValues: { user: "", roles: [] } });
  const add = useTanstackMutation({
    mutationFn: async (v: GrantValues) => {
      const userId = searchUsers ? await userIdOf(transport, v.user.trim()) : v.user.trim();
      return callUnaryMethod(transport, PlatformGrants.method.createUserGrant, { projectId, ctx, grant: { userId, roleKeys: v.roles } });
    },
    onSuccess: async () => {
      form.reset();
      await onAdded();
    },
  });
  return (
    <form className="inline" aria-label="Grant roles" onSubmit={form.handleSubmit((v) => add.mutate(v))}>
      <h3>Grant roles</h3>
      <TextInput
        control={form.control}
        name="user"
        label="User"
        description="Login name (name@domain) or ID; any organization's user of this instance."
        rules={{ required: "Name the user." }}
      />
      {roles.options.length > 0 && <CheckboxesInput control={form.control} name="roles" label="Roles" options={roles.options} />}
      <ApiError error={roles.error ?? add.error} />
      <Button type="submit" isDisabled={add.isPending}>
        Grant
      </Button>
    </form>
  );
}

/** The user with this login name; else the text is taken as an ID, which the grant's creation checks. */
async function userIdOf(transport: Transport, text: string): Promise<string> {
  const filters = [{ filter: { case: "loginName" as const, value: { value: text, method: TextFilterMethod.EQUALS_IGNORE_CASE } } }];
  const found = await callUnaryMethod(transport, PlatformUsers.method.searchUsers, { filters, query: { limit: 1 } });
  return found.result[0]?.details?.id ?? text;
}
