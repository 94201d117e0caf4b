import { useMutation, useQuery } from "@connectrpc/connect-query";
import { Link, useNavigate, useParams } from "@tanstack/react-router";
import { Button } from "react-aria-components";
import { UserState } from "../../../gen/platform/resources/user/v3alpha/user_pb";
import { AuthenticatorType } from "../../../gen/platform/resources/user_schema/v3alpha/user_schema_pb";
import { PlatformUsers } from "../../../gen/platform/resources/user/v3alpha/user_service_pb";
import { usePermissions } from "../api/permissions";
import { ApiError } from "../components/ApiError";
import { ConfirmAction } from "../components/ConfirmAction";
import { useScope } from "../scope";
import { ResourceTabs, TABS } from "./events/ResourceTabs";
import { ClientSecret } from "./user/ClientSecret";
import { ExternalLinks } from "./user/ExternalLinks";
import { Grants } from "./user/Grants";
import { Keys } from "./user/Keys";
import { Memberships } from "./user/Memberships";
import { Metadata } from "./user/Metadata";
import { PasswordHelp } from "./user/PasswordHelp";
import { Profile } from "./user/Profile";
import { useRefreshUsers } from "./user/refresh";
import { SchemaData } from "./user/SchemaData";
import { Sessions } from "./user/Sessions";
import { SignInMethods } from "./user/SignInMethods";
import { Tokens } from "./user/Tokens";
import { useUserSchemas } from "./user-schema/schemas";
import { displayName, kindLabel, stateLabel } from "./Users";

/**
 * One person, service account or user of a user schema: who it is, its state (lock,
 * deactivate, delete), and what it signs in with: a person's profile, password reset or
 * invitation, second factors and linked accounts; a service account's tokens, keys and client
 * secret (each secret shown once); a schema user's schema, revision and data, with the sign-in
 * methods, tokens and keys its schema allows (all of them where the schema cannot be read: the
 * API then refuses what it does not allow, in its words). Then, for all: sessions, metadata,
 * grants of project roles and administrator memberships, each section where the person may
 * read it (one module each, in ./user/).
 */
export function User() {
  const { userId } = useParams({ from: "/users/$userId" });
  const { may, systemMember } = usePermissions();
  const navigate = useNavigate();
  const { ctx } = useScope();
  const refresh = useRefreshUsers();
  const user = useQuery(PlatformUsers.method.getUser, { id: userId, ctx });
  const schemas = useUserSchemas();
  const opts = { onSuccess: refresh };
  const lock = useMutation(PlatformUsers.method.lockUser, opts);
  const unlock = useMutation(PlatformUsers.method.unlockUser, opts);
  const deactivate = useMutation(PlatformUsers.method.deactivateUser, opts);
  const reactivate = useMutation(PlatformUsers.method.reactivateUser, opts);
  const remove = useMutation(PlatformUsers.method.deleteUser, {
    onSuccess: async () => {
      await refresh();
      await navigate({ to: "/users", search: (prev) => prev });
    },
  });
  const u = user.data?.user;
  if (user.error) return <ApiError error={user.error} />;
  if (!u) return <p role="status">Loading…</p>;
  const human = u.type.case === "human" ? u.type.value : undefined;
  const machine = u.type.case === "machine" ? u.type.value : undefined;
  const schemaUser = u.type.case === "schema" ? u.type.value : undefined;
  const schema = schemaUser && schemas.byId.get(schemaUser.schemaId);
  // Where the schema cannot be read, every section shows and the API refuses what the schema does not allow.
  const allows = (a: AuthenticatorType) => Boolean(machine) || (Boolean(schemaUser) && (!schema || schema.possibleAuthenticators.includes(a)));
  const name = displayName(u);
  const write = may("user.write");
  return (
    <>
      <div className="title">
        <h1>{name}</h1>
        <span className={u.state === UserState.ACTIVE ? "badge ok" : "badge off"}>{stateLabel(u.state)}</span>
      </div>
      <ResourceTabs label="User" tabs={TABS.user(userId)} />
      <dl className="facts">
        <dt>Kind</dt>
        <dd>{kindLabel(u, schemas.byId)}</dd>
        <dt>Login name</dt>
        <dd>{u.loginName}</dd>
        <dt>ID</dt>
        <dd>
          <code>{userId}</code>
        </dd>
        {human && (
          <>
            <dt>Email</dt>
            <dd>
              {human.email?.address} <span className="badge">{human.email?.isVerified ? "Verified" : "Not verified"}</span>
            </dd>
            {human.phone?.number && (
              <>
                <dt>Phone</dt>
                <dd>
                  {human.phone.number} <span className="badge">{human.phone.isVerified ? "Verified" : "Not verified"}</span>
                </dd>
              </>
            )}
            <dt>Password</dt>
            <dd>{human.hasPassword ? (human.passwordChangeRequired ? "Set; a new one is required at the next sign-in" : "Set") : "None yet: invited"}</dd>
          </>
        )}
        {schemaUser && (
          <>
            <dt>Schema</dt>
            <dd>
              {schema ? (
                <Link to="/user-schemas/$schemaId" params={{ schemaId: schemaUser.schemaId }} search={(prev) => prev}>
                  {schema.type}
                </Link>
              ) : (
                <code>{schemaUser.schemaId}</code>
              )}
            </dd>
            <dt>Revision</dt>
            <dd>{schemaUser.revision}</dd>
          </>
        )}
      </dl>
      <div className="actions">
        {write && u.state === UserState.ACTIVE && (
          <Button onPress={() => lock.mutate({ id: userId, ctx })} isDisabled={lock.isPending}>
            Lock
          </Button>
        )}
        {write && u.state === UserState.LOCKED && (
          <Button onPress={() => unlock.mutate({ id: userId, ctx })} isDisabled={unlock.isPending}>
            Unlock
          </Button>
        )}
        {write && u.state !== UserState.INACTIVE && (
          <Button onPress={() => deactivate.mutate({ id: userId, ctx })} isDisabled={deactivate.isPending}>
            Deactivate
          </Button>
        )}
        {write && u.state === UserState.INACTIVE && (
          <Button onPress={() => reactivate.mutate({ id: userId, ctx })} isDisabled={reactivate.isPending}>
            Reactivate
          </Button>
        )}
        {may("user.delete") && (
          <ConfirmAction trigger="Delete" title={`Delete ${name}?`} confirm="Delete" onConfirm={() => remove.mutateAsync({ id: userId, ctx })}>
            <p>{name} can no longer sign in, and their tokens, sessions, grants and memberships go with them. This cannot be undone.</p>
          </ConfirmAction>
        )}
      </div>
      <ApiError error={lock.error ?? unlock.error ?? deactivate.error ?? reactivate.error} />
      {human && <PasswordHelp userId={userId} human={human} mayWrite={write} mayCredential={may("user.credential.write")} />}
      {human && write && <Profile userId={userId} human={human} />}
      {schemaUser && <SchemaData userId={userId} schema={schemaUser} mayWrite={write} />}
      {!machine && <SignInMethods userId={userId} mayRemove={may("user.credential.write")} />}
      {human && <ExternalLinks userId={userId} mayWrite={write} />}
      {allows(AuthenticatorType.PAT) && <Tokens userId={userId} mayWrite={may("user.credential.write")} />}
      {allows(AuthenticatorType.KEY) && <Keys userId={userId} mayWrite={may("user.credential.write")} />}
      {machine && may("user.credential.write") && <ClientSecret userId={userId} hasSecret={machine.hasSecret} />}
      {may("session.read") && <Sessions userId={userId} mayDelete={may("session.delete")} />}
      <Metadata userId={userId} mayWrite={write} />
      {may("user.grant.read") && <Grants userId={userId} />}
      {(may("member.read") || systemMember) && <Memberships userId={userId} who={name} />}
    </>
  );
}
