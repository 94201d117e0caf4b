import { useMutation } from "@connectrpc/connect-query";
import { Button } from "react-aria-components";
import type { GetHumanUser } from "../../../../gen/platform/resources/user/v3alpha/user_pb";
import { PlatformUsers } from "../../../../gen/platform/resources/user/v3alpha/user_service_pb";
import { ApiError } from "../../components/ApiError";
import { useScope } from "../../scope";

/** A person without a password gets the invitation again; with one, a reset code. Both go by message, never to the console. */
export function PasswordHelp({ userId, human, mayWrite, mayCredential }: { userId: string; human: GetHumanUser; mayWrite: boolean; mayCredential: boolean }) {
  const { ctx } = useScope();
  const reset = useMutation(PlatformUsers.method.resetPassword);
  const invite = useMutation(PlatformUsers.method.resendInvite);
  const to = human.email?.address;
  if (human.hasPassword ? !mayCredential : !mayWrite) return null;
  return (
    <div className="actions">
      {human.hasPassword ? (
        <Button onPress={() => reset.mutate({ id: userId, ctx })} isDisabled={reset.isPending}>
          Send a password reset
        </Button>
      ) : (
        <Button onPress={() => invite.mutate({ id: userId, ctx })} isDisabled={invite.isPending}>
          Send the invitation again
        </Button>
      )}
      <span role="status">{reset.isSuccess ? `A reset code is on its way to ${to}.` : invite.isSuccess ? `The invitation is on its way to ${to}.` : ""}</span>
      <ApiError error={reset.error ?? invite.error} />
    </div>
  );
}
