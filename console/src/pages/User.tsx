import { timestampFromDate, timestampDate } from "@bufbuild/protobuf/wkt";
import { createConnectQueryKey, useMutation, useQuery } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useNavigate, useParams } from "@tanstack/react-router";
import { Button, Cell, Column, Row, Table, TableBody, TableHeader } from "react-aria-components";
import { useForm } from "react-hook-form";
import { AuthMethodType } from "../../../gen/platform/resources/user/v3alpha/credential_pb";
import { UserState, type GetHumanUser } from "../../../gen/platform/resources/user/v3alpha/user_pb";
import { PlatformUsers } from "../../../gen/platform/resources/user/v3alpha/user_service_pb";
import { usePermissions } from "../api/permissions";
import { ApiError } from "../components/ApiError";
import { ConfirmAction } from "../components/ConfirmAction";
import { SecretOnce } from "../components/SecretOnce";
import { TextInput } from "../components/TextInput";
import { displayName, stateLabel } from "./Users";

/** Every answer about users is refetched after any change to one. */
function useRefresh() {
  const queries = useQueryClient();
  return () => queries.invalidateQueries({ queryKey: createConnectQueryKey({ schema: PlatformUsers, cardinality: undefined }) });
}

/**
 * One person or service account: who it is, its state (lock, deactivate, delete), and what it
 * signs in with: a person's profile, password reset or invitation, and second factors; a
 * service account's tokens and client secret, each shown once.
 */
export function User() {
  const { userId } = useParams({ from: "/users/$userId" });
  const { may } = usePermissions();
  const navigate = useNavigate();
  const refresh = useRefresh();
  const user = useQuery(PlatformUsers.method.getUser, { id: userId });
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
  const name = displayName(u);
  const write = may("user.write");
  return (
    <>
      <div className="title">
        <h1>{name}</h1>
        <span className={u.state === UserState.ACTIVE ? "badge ok" : "badge off"}>{stateLabel(u.state)}</span>
      </div>
      <dl className="facts">
        <dt>Kind</dt>
        <dd>{human ? "Person" : "Service account"}</dd>
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
      </dl>
      <div className="actions">
        {write && u.state === UserState.ACTIVE && (
          <Button onPress={() => lock.mutate({ id: userId })} isDisabled={lock.isPending}>
            Lock
          </Button>
        )}
        {write && u.state === UserState.LOCKED && (
          <Button onPress={() => unlock.mutate({ id: userId })} isDisabled={unlock.isPending}>
            Unlock
          </Button>
        )}
        {write && u.state !== UserState.INACTIVE && (
          <Button onPress={() => deactivate.mutate({ id: userId })} isDisabled={deactivate.isPending}>
            Deactivate
          </Button>
        )}
        {write && u.state === UserState.INACTIVE && (
          <Button onPress={() => reactivate.mutate({ id: userId })} isDisabled={reactivate.isPending}>
            Reactivate
          </Button>
        )}
        {may("user.delete") && (
          <ConfirmAction trigger="Delete" title={`Delete ${name}?`} confirm="Delete" onConfirm={() => remove.mutateAsync({ id: userId })}>
            <p>{name} can no longer sign in, and their tokens, sessions, grants and memberships go with them. This cannot be undone.</p>
          </ConfirmAction>
        )}
      </div>
      <ApiError error={lock.error ?? unlock.error ?? deactivate.error ?? reactivate.error} />
      {human && <PasswordHelp userId={userId} human={human} mayWrite={write} mayCredential={may("user.credential.write")} />}
      {human && write && <Profile userId={userId} human={human} />}
      {human && <SecondFactors userId={userId} mayRemove={may("user.credential.write")} />}
      {u.type.case === "machine" && <Tokens userId={userId} mayWrite={may("user.credential.write")} />}
      {u.type.case === "machine" && may("user.credential.write") && <ClientSecret userId={userId} hasSecret={u.type.value.hasSecret} />}
    </>
  );
}

/** A person without a password gets the invitation again; with one, a reset code. Both go by message, never to the console. */
function PasswordHelp({ userId, human, mayWrite, mayCredential }: { userId: string; human: GetHumanUser; mayWrite: boolean; mayCredential: boolean }) {
  const reset = useMutation(PlatformUsers.method.resetPassword);
  const invite = useMutation(PlatformUsers.method.resendInvite);
  const to = human.email?.address;
  if (human.hasPassword ? !mayCredential : !mayWrite) return null;
  return (
    <div className="actions">
      {human.hasPassword ? (
        <Button onPress={() => reset.mutate({ id: userId })} isDisabled={reset.isPending}>
          Send a password reset
        </Button>
      ) : (
        <Button onPress={() => invite.mutate({ id: userId })} isDisabled={invite.isPending}>
          Send the invitation again
        </Button>
      )}
      <span role="status">{reset.isSuccess ? `A reset code is on its way to ${to}.` : invite.isSuccess ? `The invitation is on its way to ${to}.` : ""}</span>
      <ApiError error={reset.error ?? invite.error} />
    </div>
  );
}

interface ProfileForm {
  givenName: string;
  familyName: string;
  displayName: string;
  nickName: string;
  preferredLanguage: string;
}

function Profile({ userId, human }: { userId: string; human: GetHumanUser }) {
  const refresh = useRefresh();
  const p = human.profile;
  const form = useForm<ProfileForm>({ values: { givenName: p?.givenName ?? "", familyName: p?.familyName ?? "", displayName: p?.displayName ?? "", nickName: p?.nickName ?? "", preferredLanguage: p?.preferredLanguage ?? "" } });
  const patch = useMutation(PlatformUsers.method.patchUser, { onSuccess: refresh });
  const limit = { maxLength: { value: 200, message: "At most 200 characters." } };
  return (
    <section aria-labelledby="profile">
      <h2 id="profile">Profile</h2>
      <form className="stack" onSubmit={form.handleSubmit((v) => patch.mutate({ id: userId, user: { human: { givenName: v.givenName.trim(), familyName: v.familyName.trim(), displayName: v.displayName.trim(), nickName: v.nickName.trim(), preferredLanguage: v.preferredLanguage.trim() } } }))}>
        <TextInput control={form.control} name="givenName" label="Given name" rules={{ required: "Give a given name.", ...limit }} />
        <TextInput control={form.control} name="familyName" label="Family name" rules={{ required: "Give a family name.", ...limit }} />
        <TextInput control={form.control} name="displayName" label="Display name" rules={limit} />
        <TextInput control={form.control} name="nickName" label="Nickname" rules={limit} />
        <TextInput control={form.control} name="preferredLanguage" label="Preferred language" description="A language tag such as en or de-CH; empty: the organization's." rules={{ pattern: { value: /^$|^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/, message: "A language tag such as en or de-CH." } }} />
        <div className="actions">
          <Button type="submit" className="primary" isDisabled={patch.isPending || !form.formState.isDirty}>
            Save profile
          </Button>
          <span role="status">{patch.isSuccess && !form.formState.isDirty ? "Saved" : ""}</span>
        </div>
        <ApiError error={patch.error} />
      </form>
    </section>
  );
}

const FACTORS: Partial<Record<AuthMethodType, { label: string; remove?: "removeTOTP" | "removeOTPEmail" | "removeOTPSMS" | "removeRecoveryCodes" }>> = {
  [AuthMethodType.PASSWORD]: { label: "Password" },
  [AuthMethodType.IDP]: { label: "An identity provider's account" },
  [AuthMethodType.TOTP]: { label: "Authenticator app", remove: "removeTOTP" },
  [AuthMethodType.OTP_EMAIL]: { label: "Codes by email", remove: "removeOTPEmail" },
  [AuthMethodType.OTP_SMS]: { label: "Codes by text message", remove: "removeOTPSMS" },
  [AuthMethodType.RECOVERY_CODES]: { label: "Recovery codes", remove: "removeRecoveryCodes" },
};

/** How the person signs in, and taking away a second factor or passkey that was lost. */
function SecondFactors({ userId, mayRemove }: { userId: string; mayRemove: boolean }) {
  const refresh = useRefresh();
  const methods = useQuery(PlatformUsers.method.listAuthMethods, { id: userId });
  const passkeys = useQuery(PlatformUsers.method.listPasskeys, { id: userId });
  const opts = { onSuccess: refresh };
  const removers = {
    removeTOTP: useMutation(PlatformUsers.method.removeTOTP, opts),
    removeOTPEmail: useMutation(PlatformUsers.method.removeOTPEmail, opts),
    removeOTPSMS: useMutation(PlatformUsers.method.removeOTPSMS, opts),
    removeRecoveryCodes: useMutation(PlatformUsers.method.removeRecoveryCodes, opts),
  };
  const removePasskey = useMutation(PlatformUsers.method.removePasskey, opts);
  const rows = (methods.data?.authMethodTypes ?? []).flatMap((t) => (FACTORS[t] ? [{ id: String(t), ...FACTORS[t] }] : []));
  const keys = passkeys.data?.result ?? [];
  const error = methods.error ?? passkeys.error ?? removePasskey.error ?? Object.values(removers).find((m) => m.error)?.error;
  return (
    <section aria-labelledby="factors">
      <h2 id="factors">Sign-in methods</h2>
      <ApiError error={error} />
      <Table aria-label="Sign-in methods">
        <TableHeader>
          <Column isRowHeader>Method</Column>
          <Column>Actions</Column>
        </TableHeader>
        <TableBody items={[...rows, ...keys.map((k) => ({ id: `passkey:${k.id}`, label: `Passkey “${k.name}”`, passkeyId: k.id }))]} renderEmptyState={() => (methods.isPending ? "Loading…" : "None.")}>
          {(m) => (
            <Row id={m.id}>
              <Cell>{m.label}</Cell>
              <Cell>
                {mayRemove && "passkeyId" in m && (
                  <Button onPress={() => removePasskey.mutate({ id: userId, passkeyId: m.passkeyId })} aria-label={`Remove ${m.label}`}>
                    Remove
                  </Button>
                )}
                {mayRemove && "remove" in m && m.remove && (
                  <Button onPress={() => removers[m.remove!].mutate({ id: userId })} aria-label={`Remove ${m.label}`}>
                    Remove
                  </Button>
                )}
              </Cell>
            </Row>
          )}
        </TableBody>
      </Table>
    </section>
  );
}

const DAY_MS = 24 * 3600 * 1000;

/** A service account's personal access tokens: the new one shown once. */
function Tokens({ userId, mayWrite }: { userId: string; mayWrite: boolean }) {
  const refresh = useRefresh();
  const found = useQuery(PlatformUsers.method.searchPersonalAccessTokens, { id: userId, query: { limit: 100 } });
  const add = useMutation(PlatformUsers.method.addPersonalAccessToken, { onSuccess: refresh });
  const remove = useMutation(PlatformUsers.method.deletePersonalAccessToken, { onSuccess: refresh });
  const form = useForm<{ days: string }>({ defaultValues: { days: "90" } });
  const rows = found.data?.result ?? [];
  return (
    <section aria-labelledby="tokens">
      <h2 id="tokens">Personal access tokens</h2>
      <ApiError error={found.error ?? remove.error} />
      <Table aria-label="Personal access tokens">
        <TableHeader>
          <Column isRowHeader>Token</Column>
          <Column>Expires</Column>
          <Column>Actions</Column>
        </TableHeader>
        <TableBody items={rows} renderEmptyState={() => (found.isPending ? "Loading…" : "No tokens.")}>
          {(t) => (
            <Row id={t.details?.id ?? ""}>
              <Cell>
                <code>{t.details?.id}</code>
              </Cell>
              <Cell>{t.expirationDate ? timestampDate(t.expirationDate).toLocaleDateString() : ""}</Cell>
              <Cell>
                {mayWrite && (
                  <Button onPress={() => remove.mutate({ id: userId, patId: t.details?.id ?? "" })} aria-label={`Revoke token ${t.details?.id}`}>
                    Revoke
                  </Button>
                )}
              </Cell>
            </Row>
          )}
        </TableBody>
      </Table>
      {mayWrite && (
        <form className="inline" onSubmit={form.handleSubmit((v) => add.mutate({ id: userId, pat: { expirationDate: timestampFromDate(new Date(Date.now() + Number(v.days) * DAY_MS)) } }))}>
          <TextInput control={form.control} name="days" label="Valid for (days)" rules={{ required: "Give a number of days.", pattern: { value: /^[1-9]\d{0,4}$/, message: "A whole number of days, 1 or more." } }} />
          <Button type="submit" isDisabled={add.isPending}>
            New token
          </Button>
        </form>
      )}
      <ApiError error={add.error} />
      {add.data?.token && <SecretOnce label="New token" value={add.data.token} />}
    </section>
  );
}

/** The client secret a service account presents to the token endpoint (client credentials), shown once. */
function ClientSecret({ userId, hasSecret }: { userId: string; hasSecret: boolean }) {
  const refresh = useRefresh();
  const generate = useMutation(PlatformUsers.method.generateSecret, { onSuccess: refresh });
  const remove = useMutation(PlatformUsers.method.removeSecret, { onSuccess: refresh });
  return (
    <section aria-labelledby="secret">
      <h2 id="secret">Client secret</h2>
      <p>{hasSecret ? "This account has a client secret for the client credentials grant." : "No client secret: the account signs in with tokens or keys only."}</p>
      <div className="actions">
        <Button onPress={() => generate.mutate({ id: userId })} isDisabled={generate.isPending}>
          {hasSecret ? "Replace the secret" : "Generate a secret"}
        </Button>
        {hasSecret && (
          <Button onPress={() => remove.mutate({ id: userId })} isDisabled={remove.isPending}>
            Remove the secret
          </Button>
        )}
      </div>
      <ApiError error={generate.error ?? remove.error} />
      {generate.data?.clientSecret && !remove.isSuccess && <SecretOnce label="Client secret" value={generate.data.clientSecret} />}
    </section>
  );
}
