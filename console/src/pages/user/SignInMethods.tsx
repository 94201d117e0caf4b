import { useMutation, useQuery } from "@connectrpc/connect-query";
import { Cell } from "react-aria-components";
import { AuthMethodType, PasskeyState, U2FState } from "../../../../gen/platform/resources/user/v3alpha/credential_pb";
import { PlatformUsers } from "../../../../gen/platform/resources/user/v3alpha/user_service_pb";
import { ApiError } from "../../components/ApiError";
import { RemoveButton } from "../../components/RemoveButton";
import { ResultTable } from "../../components/ResultTable";
import { useScope } from "../../scope";
import { useRefreshUsers } from "./refresh";

type Remover = "removeTOTP" | "removeOTPEmail" | "removeOTPSMS" | "removeRecoveryCodes";

// Passkeys and security keys are listed one by one below, not as the bare kind.
const FACTORS: Partial<Record<AuthMethodType, { label: string; remover?: Remover }>> = {
  [AuthMethodType.PASSWORD]: { label: "Password" },
  [AuthMethodType.IDP]: { label: "An identity provider's account" },
  [AuthMethodType.TOTP]: { label: "Authenticator app", remover: "removeTOTP" },
  [AuthMethodType.OTP_EMAIL]: { label: "Codes by email", remover: "removeOTPEmail" },
  [AuthMethodType.OTP_SMS]: { label: "Codes by text message", remover: "removeOTPSMS" },
  [AuthMethodType.RECOVERY_CODES]: { label: "Recovery codes", remover: "removeRecoveryCodes" },
};

interface Method {
  id: string;
  label: string;
  detail: string;
  remove?(): void;
}

/** How the person signs in, and taking away a second factor, passkey or security key that was lost. */
export function SignInMethods({ userId, mayRemove }: { userId: string; mayRemove: boolean }) {
  const { ctx } = useScope();
  const refresh = useRefreshUsers();
  const methods = useQuery(PlatformUsers.method.listAuthMethods, { id: userId, ctx });
  const passkeys = useQuery(PlatformUsers.method.listPasskeys, { id: userId, ctx });
  const u2f = useQuery(PlatformUsers.method.listU2F, { id: userId, ctx });
  const opts = { onSuccess: refresh };
  const removers = {
    removeTOTP: useMutation(PlatformUsers.method.removeTOTP, opts),
    removeOTPEmail: useMutation(PlatformUsers.method.removeOTPEmail, opts),
    removeOTPSMS: useMutation(PlatformUsers.method.removeOTPSMS, opts),
    removeRecoveryCodes: useMutation(PlatformUsers.method.removeRecoveryCodes, opts),
  };
  const removePasskey = useMutation(PlatformUsers.method.removePasskey, opts);
  const removeU2F = useMutation(PlatformUsers.method.removeU2F, opts);
  const rows: Method[] = [
    ...(methods.data?.authMethodTypes ?? []).flatMap((t) => {
      const factor = FACTORS[t];
      if (!factor) return [];
      const remover = factor.remover;
      return [{ id: String(t), label: factor.label, detail: "", remove: remover && (() => removers[remover].mutate({ id: userId, ctx })) }];
    }),
    ...(passkeys.data?.result ?? []).map((k) => ({
      id: `passkey:${k.id}`,
      label: `Passkey “${k.name}”`,
      detail: registration(k.state === PasskeyState.READY, k.domain),
      remove: () => removePasskey.mutate({ id: userId, passkeyId: k.id, ctx }),
    })),
    ...(u2f.data?.result ?? []).map((k) => ({
      id: `u2f:${k.id}`,
      label: `Security key “${k.name}”`,
      detail: registration(k.state === U2FState.U2F_STATE_READY, k.domain),
      remove: () => removeU2F.mutate({ id: userId, u2fId: k.id, ctx }),
    })),
  ];
  const pending = Object.values(removers).some((m) => m.isPending) || removePasskey.isPending || removeU2F.isPending;
  const error = methods.error ?? passkeys.error ?? u2f.error ?? removePasskey.error ?? removeU2F.error ?? Object.values(removers).find((m) => m.error)?.error;
  return (
    <section aria-labelledby="factors">
      <h2 id="factors">Sign-in methods</h2>
      <ApiError error={error} />
      <ResultTable
        label="Sign-in methods"
        columns={["Method", "Details", "Actions"]}
        rows={rows}
        rowId={(m) => m.id}
        pending={methods.isPending}
        empty="None."
        dependencies={[mayRemove, pending]}
      >
        {(m) => (
          <>
            <Cell>{m.label}</Cell>
            <Cell>{m.detail}</Cell>
            <Cell>{mayRemove && m.remove && <RemoveButton what={m.label} pending={pending} onPress={m.remove} />}</Cell>
          </>
        )}
      </ResultTable>
    </section>
  );
}

/** Where a passkey or security key signs in, and whether its registration was finished. */
function registration(ready: boolean, domain: string): string {
  return ready ? `For ${domain}` : `For ${domain}; registration not finished`;
}
