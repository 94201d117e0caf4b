import type { DescMessage, DescMethod, Message } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { PatchIDP } from "../../../../gen/platform/resources/idp/v3alpha/idp_pb.js";
import { PlatformIdentityProviders } from "../../../../gen/platform/resources/idp/v3alpha/idp_service_pb.js";
import type { SecretBox } from "../../../crypto/encryption.js";
import { addIdp, patchIdp, removeIdp, type IdpPatch } from "../../../domain/idp/commands.js";
import { secretOf } from "../../../domain/idp/model.js";
import { getIdp, searchIdps } from "../../../domain/idp/queries.js";
import { notFound } from "../../../domain/errors.js";
import type { Store } from "../../../store/database.js";
import { page } from "../../../store/search.js";
import { askedContext, editorOf, visibleOrgs } from "../../context.js";
import { detailsToProto, searchResult } from "../convert.js";
import { handlerStore } from "../writes.js";
import { configFromJson, configToJson, idpFilterFromProto, idpSortFromProto, idpToProto, optionsToJson, policyFromProto, viewToProto } from "./convert.js";

/**
 * The provider types, by the name their RPCs carry (Create<Name>IDP, Patch…, Get…) and
 * the type they are stored as, which is also their REST path and ProviderType. Their
 * messages are found through the RPCs; a new type is its proto messages, its three RPCs
 * and a line here.
 */
const PROVIDER_TYPES: Record<string, string> = {
  GitLab: "gitlab",
  GitLabSelfHosted: "gitlab_self_hosted",
  OIDC: "oidc",
  OAuth: "oauth",
  GitHub: "github",
  Google: "google",
  AzureAD: "azure_ad",
  Apple: "apple",
  LDAP: "ldap",
  SAML: "saml",
};

export interface IdpsDeps {
  store: Pick<Store, "forRequest">;
  box: SecretBox;
}

type Handler = (req: never, ctx: HandlerContext) => Promise<unknown>;

/** The message type of a field of a message: how a type's configuration is found. */
function messageOf(desc: DescMessage, field: string): DescMessage {
  const found = desc.fields.find((f) => f.name === field)?.message;
  if (!found) throw new Error(`${desc.typeName} has no message field ${field}`);
  return found;
}

export function idpsService({ store, box }: IdpsDeps): ServiceImpl<typeof PlatformIdentityProviders> {
  const { database, write } = handlerStore(store);

  // By RPC name; the typed ones are made from PROVIDER_TYPES below.
  const typeAgnostic: Record<string, Handler> = {
    async GetIDP(req: { id: string }, ctx) {
      const view = await getIdp(database(ctx).db, req.id, askedContext(ctx.values));
      return { idp: viewToProto(view, idpToProto(view)) };
    },
    async DeleteIDP(req: { id: string }, ctx) {
      const details = await write(ctx, (tx) => removeIdp(tx, editorOf(ctx), req.id, askedContext(ctx.values)));
      return { details: detailsToProto(details) };
    },
    async SearchIDPs(req: { query: Parameters<typeof page>[0]; filters: Parameters<typeof idpFilterFromProto>[0][]; sortingColumn: number }, ctx) {
      const p = page(req.query);
      const found = await searchIdps(database(ctx).db, askedContext(ctx.values), {
        filters: req.filters.map(idpFilterFromProto),
        sort: idpSortFromProto(req.sortingColumn),
        page: p,
        visibleOrgs: visibleOrgs(ctx),
      });
      return { ...searchResult(found, p, (view) => viewToProto(view, idpToProto(view))), sortingColumn: req.sortingColumn };
    },
  };

  const handlers: Record<string, Handler> = {};
  for (const method of PlatformIdentityProviders.methods) {
    const [, verb, name] = /^(Create|Patch|Get)(\w+)IDP$/.exec(method.name) ?? [];
    const type = name && PROVIDER_TYPES[name];
    const handler = typeAgnostic[method.name] ?? (verb && type && typedHandler(verb, type, method));
    if (!handler) throw new Error(`${method.name}: no handler (a provider type missing from PROVIDER_TYPES?)`);
    handlers[method.localName] = handler;
  }

  function typedHandler(verb: string, type: string, method: DescMethod): Handler {
    if (verb === "Create") {
      const configDesc = messageOf(messageOf(method.input, "idp"), "config");
      return async (req: { idp: { idp: { name: string; statePolicy: number; options?: never }; config: Message } }, ctx) => {
        const { idp, config } = req.idp;
        const { config: described, secret } = configToJson(configDesc, config, secretOf(type).field);
        const input = {
          type,
          name: idp.name,
          statePolicy: policyFromProto(idp.statePolicy) ?? "inherit",
          options: optionsToJson(idp.options),
          config: described,
          clientSecret: secret,
        };
        const details = await write(ctx, (tx) => addIdp(tx, editorOf(ctx), askedContext(ctx.values), input, box));
        return { details: detailsToProto(details) };
      };
    }
    if (verb === "Patch") {
      const configDesc = messageOf(messageOf(method.input, "idp"), "config");
      return async (req: { id: string; idp: { idp?: PatchIDP; config?: Message } }, ctx) => {
        const patch: IdpPatch = {
          name: req.idp.idp?.name,
          statePolicy: req.idp.idp?.statePolicy === undefined ? undefined : policyFromProto(req.idp.idp.statePolicy),
          options: req.idp.idp?.options && optionsToJson(req.idp.idp.options),
        };
        if (req.idp.config) {
          const { config, secret } = configToJson(configDesc, req.idp.config, secretOf(type).field);
          if (Object.keys(config).length > 0) patch.config = config;
          patch.clientSecret = secret;
        }
        const details = await write(ctx, (tx) => patchIdp(tx, editorOf(ctx), req.id, askedContext(ctx.values), patch, box, type));
        return { details: detailsToProto(details) };
      };
    }
    const configDesc = messageOf(messageOf(messageOf(method.output, "idp"), "idp"), "config");
    return async (req: { id: string }, ctx) => {
      const view = await getIdp(database(ctx).db, req.id, askedContext(ctx.values));
      if (view.type !== type) throw notFound(`identity provider ${req.id} is a ${view.type} provider; read it with GetIDP or its own type's Get`);
      return { idp: viewToProto(view, { idp: idpToProto(view), config: configFromJson(configDesc, view.config) }) };
    };
  }

  return handlers as unknown as ServiceImpl<typeof PlatformIdentityProviders>;
}
