import { useMutation } from "@connectrpc/connect-query";
import { Button } from "react-aria-components";
import { PlatformUsers } from "../../../../gen/platform/resources/user/v3alpha/user_service_pb";
import { ApiError } from "../../components/ApiError";
import { SecretOnce } from "../../components/SecretOnce";
import { useScope } from "../../scope";
import { useRefreshUsers } from "./refresh";

/** The client secret a service account presents to the token endpoint (client credentials), shown once. */
export function ClientSecret({ userId, hasSecret }: { userId: string; hasSecret: boolean }) {
  const { ctx } = useScope();
  const refresh = useRefreshUsers();
  const generate = useMutation(PlatformUsers.method.generateSecret, { onSuccess: refresh });
  const remove = useMutation(PlatformUsers.method.removeSecret, { onSuccess: refresh });
  return (
    <section aria-labelledby="secret">
      <h2 id="secret">Client secret</h2>
      <p>
        {hasSecret ? "This account has a client secret for the client credentials grant." : "No client secret: the account signs in with tokens or keys only."}
      </p>
      <div className="actions">
        <Button onPress={() => generate.mutate({ id: userId, ctx })} isDisabled={generate.isPending}>
          {hasSecret ? "Replace the secret" : "Generate a secret"}
        </Button>
        {hasSecret && (
          <Button onPress={() => remove.mutate({ id: userId, ctx })} isDisabled={remove.isPending}>
            Remove the secret
          </Button>
        )}
      </div>
      <ApiError error={generate.error ?? remove.error} />
      {generate.data?.clientSecret && !remove.isSuccess && <SecretOnce label="Client secret" value={generate.data.clientSecret} />}
    </section>
  );
}
