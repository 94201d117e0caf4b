import { orgByIdOrDomain } from "../../../domain/org/queries.js";
import { chosenPassword, passwordHint } from "../kit/new-password.js";
import { passwordPolicyOf } from "../../../domain/user/passwords.js";
import { DomainError } from "../../../domain/errors.js";
import { addUser } from "../../../domain/user/commands.js";
import { USERNAME_CONSTRAINT, violatedUniqueConstraint } from "../../../store/database.js";
import { fieldError, form, hiddenField, links, type FormError } from "../view/render.js";
import type { PromptStep } from "../kit/context.js";
import { takeAddressTry } from "../kit/rate-limit.js";
import { loginOrgOf, settingsOf } from "../kit/org-settings.js";
import type { Texts } from "../view/texts/index.js";
import { pageActor } from "../kit/page-origin.js";

/** What the form posts; the field names are stable for people's test automation. */
interface Entered {
  givenName: string;
  familyName: string;
  email: string;
  loginName: string;
  password?: string;
  passwordConfirmation?: string;
}

// The user API's rules (proto/platform/resources/user/v3alpha/user.proto): names of 1 to
// 200 characters, an address of at most 254, a username without spaces or control characters.
const USERNAME = /^[^\p{Z}\p{Cc}\u200B\uFEFF]{1,200}$/u;
const EMAIL = /^[^\s@]{1,64}@[^\s@.]+(\.[^\s@.]+)+$/;

/**
 * The form, with what was typed kept; the passwords too, unless the error is about them (a
 * taken username should not cost the person both passwords). The password's rules show under
 * its field from the start.
 */
async function registerForm(t: Texts, s: PromptStep, entered: Entered, error?: FormError): Promise<string> {
  const aboutPassword = typeof error === "object" && (error.field === "password" || error.field === "passwordConfirmation");
  const kept = (value: string | undefined) => (aboutPassword || !value ? {} : { value });
  const hint = passwordHint(s, await passwordPolicyOf(s.c.db, s.c.instanceId));
  return (
    form({
      action: `${s.base}/register`,
      hidden: hiddenField("csrf", s.csrf),
      fields: [
        { name: "givenName", label: t.givenName, type: "text", autocomplete: "given-name", value: entered.givenName, autofocus: true },
        { name: "familyName", label: t.familyName, type: "text", autocomplete: "family-name", value: entered.familyName },
        { name: "email", label: t.email, type: "email", autocomplete: "email", value: entered.email },
        {
          name: "loginName",
          label: t.username,
          type: "text",
          autocomplete: "username",
          value: entered.loginName,
          attrs: ' autocapitalize="none" spellcheck="false"',
        },
        { name: "password", label: t.password, type: "password", autocomplete: "new-password", hint, ...kept(entered.password) },
        { name: "passwordConfirmation", label: t.repeatPassword, type: "password", autocomplete: "new-password", ...kept(entered.passwordConfirmation) },
      ],
      submit: t.registerButton,
      ...(error && { error }),
    }) + links([[`${s.base}/other`, t.signIn]])
  );
}

/**
 * Whether the login's organization takes registrations. When it does not, prompt=create
 * shows the sign-in page with a notice, as ZITADEL's login does; an error at the
 * client's redirect URI would end a flow in which the person can still sign in.
 */
async function allowed(s: PromptStep): Promise<string | undefined> {
  const orgId = await loginOrgOf(s.c, s.requestedOrg);
  const active = (await orgByIdOrDomain(s.c.db, s.c.instanceId, { id: orgId }))?.state === "active";
  return active && (await settingsOf(s.c, orgId)).allowRegister ? orgId : undefined;
}

export async function registerPage(s: PromptStep): Promise<void> {
  if (!(await allowed(s))) return s.askLoginName(200, String(s.details.params.login_hint ?? ""), s.t.registerNotAllowed);
  s.show(
    200,
    s.t.registerTitle,
    await registerForm(s.t, s, { givenName: "", familyName: "", email: "", loginName: String(s.details.params.login_hint ?? "") }),
  );
}

/**
 * Creates a person in the login's organization with the user commands (the instance's
 * password policy, usernames unique in the instance) and signs them in. Registrations
 * count per address against PLATFORM_LOGIN_RATE_PER_IP, apart from password attempts.
 */
export async function registerSubmit(s: PromptStep, form: Record<string, string>): Promise<void> {
  const { c, t } = s;
  const orgId = await allowed(s);
  if (!orgId) return s.askLoginName(403, "", t.registerNotAllowed);
  const entered: Entered = {
    givenName: (form.givenName ?? "").trim().slice(0, 400),
    familyName: (form.familyName ?? "").trim().slice(0, 400),
    email: (form.email ?? "").trim().slice(0, 400),
    loginName: (form.loginName ?? "").trim().slice(0, 400),
    password: (form.password ?? "").slice(0, 400),
    passwordConfirmation: (form.passwordConfirmation ?? "").slice(0, 400),
  };
  const again = async (status: number, error: FormError) => s.show(status, t.registerTitle, await registerForm(t, s, entered, error));
  if (!takeAddressTry(c.guards.perIp, s.req, s.res, c.instanceId, "register")) return again(429, t.tooManyAttempts);
  const nameOk = (name: string) => name !== "" && name.length <= 200;
  if (!nameOk(entered.givenName) || !nameOk(entered.familyName))
    return again(400, fieldError(nameOk(entered.givenName) ? "familyName" : "givenName", t.registerInvalidName));
  if (entered.email.length > 254 || !EMAIL.test(entered.email)) return again(400, fieldError("email", t.registerInvalidEmail));
  if (!USERNAME.test(entered.loginName)) return again(400, fieldError("loginName", t.registerInvalidUsername));
  const chosen = await chosenPassword(c, s, form.password ?? "", form.passwordConfirmation);
  if ("error" in chosen) return again(400, chosen.error);
  const { hash } = chosen;
  let userId: string;
  try {
    const created = await c.transact((tx) =>
      addUser(tx, pageActor(s, "system"), orgId, {
        username: entered.loginName,
        type: {
          kind: "human",
          profile: {
            givenName: entered.givenName,
            familyName: entered.familyName,
            displayName: `${entered.givenName} ${entered.familyName}`,
            nickName: "",
            preferredLanguage: s.lang,
            gender: undefined,
          },
          email: { address: entered.email, verified: false },
          phone: undefined,
          passwordHash: hash,
          passwordChangeRequired: false,
        },
      }),
    );
    userId = created.id;
  } catch (error) {
    // The check in addUser, or (the user row goes with the commit) the unique index after a concurrent registration.
    if ((error instanceof DomainError && error.kind === "already_exists") || violatedUniqueConstraint(error) === USERNAME_CONSTRAINT) {
      return again(409, fieldError("loginName", t.registerUsernameTaken));
    }
    // A username that reads as a login name of another organization (user/commands.ts).
    if (error instanceof DomainError && error.kind === "failed_precondition") return again(400, fieldError("loginName", t.registerUsernameTaken));
    throw error;
  }
  await s.proceed({ userId, amr: ["pwd"] });
}
