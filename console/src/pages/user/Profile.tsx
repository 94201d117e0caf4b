import { useMutation } from "@connectrpc/connect-query";
import { Button } from "react-aria-components";
import { useForm } from "react-hook-form";
import type { GetHumanUser } from "../../../../gen/platform/resources/user/v3alpha/user_pb";
import { PlatformUsers } from "../../../../gen/platform/resources/user/v3alpha/user_service_pb";
import { ApiError } from "../../components/ApiError";
import { TextInput } from "../../components/TextInput";
import { useScope } from "../../scope";
import { useRefreshUsers } from "./refresh";

interface ProfileForm {
  givenName: string;
  familyName: string;
  displayName: string;
  nickName: string;
  preferredLanguage: string;
}

/** A person's names and language. */
export function Profile({ userId, human }: { userId: string; human: GetHumanUser }) {
  const { ctx } = useScope();
  const refresh = useRefreshUsers();
  const p = human.profile;
  const form = useForm<ProfileForm>({
    values: {
      givenName: p?.givenName ?? "",
      familyName: p?.familyName ?? "",
      displayName: p?.displayName ?? "",
      nickName: p?.nickName ?? "",
      preferredLanguage: p?.preferredLanguage ?? "",
    },
  });
  const patch = useMutation(PlatformUsers.method.patchUser, { onSuccess: refresh });
  const limit = { maxLength: { value: 200, message: "At most 200 characters." } };
  return (
    <section aria-labelledby="profile">
      <h2 id="profile">Profile</h2>
      <form
        className="stack"
        onSubmit={form.handleSubmit((v) =>
          patch.mutate({
            id: userId,
            ctx,
            user: {
              human: {
                givenName: v.givenName.trim(),
                familyName: v.familyName.trim(),
                displayName: v.displayName.trim(),
                nickName: v.nickName.trim(),
                preferredLanguage: v.preferredLanguage.trim(),
              },
            },
          }),
        )}
      >
        <TextInput control={form.control} name="givenName" label="Given name" rules={{ required: "Give a given name.", ...limit }} />
        <TextInput control={form.control} name="familyName" label="Family name" rules={{ required: "Give a family name.", ...limit }} />
        <TextInput control={form.control} name="displayName" label="Display name" rules={limit} />
        <TextInput control={form.control} name="nickName" label="Nickname" rules={limit} />
        <TextInput
          control={form.control}
          name="preferredLanguage"
          label="Preferred language"
          description="A language tag such as en or de-CH; empty: the organization's."
          rules={{ pattern: { value: /^$|^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/, message: "A language tag such as en or de-CH." } }}
        />
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
