import { orgOfUser } from "../../../domain/user/queries.js";
import type { ServerResponse } from "node:http";
import type { NodeRequest, NodeResponse } from "../../../http/respond.js";
import { OAuthError, readForm } from "../../endpoints/oauth-response.js";
import type { LoginContext } from "./context.js";
import { takeAddressTry } from "./rate-limit.js";
import { errorBody } from "../view/render.js";
import type { Language, Texts } from "../view/texts/index.js";

/** One request to a page a message links to, with what every such page works out first. */
export interface CodePage {
  req: NodeRequest;
  res: NodeResponse;
  c: LoginContext;
  path: string;
  lang: Language;
  t: Texts;
  /** The user and code of the link's query (GET), bounded, and where to go on afterwards (code-links.ts onwardPath). */
  asked: { user: string; code: string; returnTo?: string };
  show(status: number, title: string, body: string): void;
}

/** Where a code page's form posts: the page again, with the user in the query, so that the answer speaks the user's language too. */
export const codePageAction = (path: string, userId: string, returnTo?: string) =>
  `${path}?${new URLSearchParams({ user: userId.slice(0, 200), ...(returnTo && { returnTo }) })}`;

/**
 * The posted form of a code page, once the address's budget allows another try (codes are
 * guessed by trying); undefined when an answer (an error page) was sent instead.
 */
export async function postedCodeForm(
  p: CodePage,
  title: string,
  again: (form: Record<string, string>) => string,
): Promise<{ form: Record<string, string>; userId: string; code: string } | undefined> {
  const { req, res, c, t } = p;
  if (req.method !== "POST") {
    p.show(405, title, errorBody(t.formExpired));
    return undefined;
  }
  let form: Record<string, string>;
  try {
    form = await readForm(req, c.maxBodyBytes);
  } catch (error) {
    if (error instanceof OAuthError) {
      p.show(error.status, title, errorBody(t.formExpired));
      return undefined;
    }
    throw error;
  }
  if (!takeAddressTry(c.guards.perIp, req, res as ServerResponse, c.instanceId, "code")) {
    p.show(429, title, errorBody(t.tooManyAttempts) + again(form));
    return undefined;
  }
  const userId = (form.user ?? "").slice(0, 200);
  const known = userId !== "" && (await orgOfUser(c.db, c.instanceId, userId)) !== undefined;
  return { form, userId: known ? userId : "", code: (form.code ?? "").slice(0, 64) };
}
