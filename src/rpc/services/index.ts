import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { Health } from "../../../gen/grpc/health/v1/health_pb.js";
import { ServerReflection as ReflectionV1 } from "../../../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ReflectionV1alpha } from "../../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { PlatformActions } from "../../../gen/platform/resources/action/v3alpha/action_service_pb.js";
import { PlatformDomains } from "../../../gen/platform/resources/domain/v3alpha/domain_service_pb.js";
import { PlatformInstances } from "../../../gen/platform/resources/instance/v3alpha/instance_service_pb.js";
import { PlatformMemberships } from "../../../gen/platform/resources/membership/v3alpha/membership_service_pb.js";
import { PlatformOrganizations } from "../../../gen/platform/resources/org/v3alpha/org_service_pb.js";
import { PlatformUsers } from "../../../gen/platform/resources/user/v3alpha/user_service_pb.js";
import { PlatformIdentityProviders } from "../../../gen/platform/resources/idp/v3alpha/idp_service_pb.js";
import { PlatformProjects } from "../../../gen/platform/resources/project/v3alpha/project_service_pb.js";
import { PlatformGrants } from "../../../gen/platform/resources/grant/v3alpha/grant_service_pb.js";
import { PlatformApps } from "../../../gen/platform/resources/app/v3alpha/app_service_pb.js";
import { PlatformNotifications } from "../../../gen/platform/resources/notification/v3alpha/notification_service_pb.js";
import { PlatformEvents } from "../../../gen/platform/resources/event/v3alpha/event_service_pb.js";
import { PlatformSMSProviders } from "../../../gen/platform/resources/sms_provider/v3alpha/sms_provider_service_pb.js";
import { PlatformSMTPProviders } from "../../../gen/platform/resources/smtp_provider/v3alpha/smtp_provider_service_pb.js";
import { PlatformBrandingSettings } from "../../../gen/platform/settings/branding/v3alpha/branding_service_pb.js";
import { PlatformDomainSettings } from "../../../gen/platform/settings/domain/v3alpha/domain_service_pb.js";
import { PlatformFeatureSettings } from "../../../gen/platform/settings/feature/v3alpha/feature_service_pb.js";
import { PlatformLanguageSettings } from "../../../gen/platform/settings/language/v3alpha/language_service_pb.js";
import { PlatformLoginSettings } from "../../../gen/platform/settings/login/v3alpha/login_service_pb.js";
import { PlatformMessageTextSettings } from "../../../gen/platform/settings/message_text/v3alpha/message_text_service_pb.js";
import type { AccessEpoch } from "../../cache/access-epoch.js";
import type { PasswordHasher } from "../../crypto/passwords.js";
import type { FeatureFlags } from "../../domain/feature/flags.js";
import { EXECUTION_FUNCTIONS, type ExecutionCatalog } from "../../domain/action/execution/catalog.js";
import { actionsService, type ActionsDeps } from "./actions/service.js";
import { domainsService, type DomainValidationDeps } from "./domains/service.js";
import type { SigningKeys } from "../../oidc/models/signing-keys.js";
import { instancesService } from "./instances/service.js";
import { membershipsService } from "./memberships/service.js";
import { orgsService } from "./orgs/service.js";
import { usersService } from "./users/service.js";
import { idpsService } from "./idps/service.js";
import { projectsService } from "./projects/service.js";
import { grantsService } from "./grants/service.js";
import { appsService } from "./apps/service.js";
import { notificationsService } from "./notifications/service.js";
import { smsProvidersService } from "./notification-providers/sms.js";
import { smtpProvidersService } from "./notification-providers/smtp.js";
import { brandingSettingsService } from "./settings/branding.js";
import { domainSettingsService } from "./settings/domain.js";
import { featureSettingsService } from "./settings/feature.js";
import { languageSettingsService } from "./settings/language.js";
import { loginSettingsService } from "./settings/login.js";
import { messageTextSettingsService } from "./settings/message-text.js";
import type { SettingsKind } from "../../domain/settings/kind.js";
import type { ProviderSender } from "../../engines/notifications/providers/sender.js";
import type { VerificationSettings } from "../../domain/user/code-messages.js";
import { healthService, type WatchStreams } from "./health.js";
import { PlatformSessions } from "../../../gen/platform/resources/session/v3alpha/session_service_pb.js";
import type { SessionDeps } from "../../domain/session/commands.js";
import { sessionsService } from "./sessions/service.js";
import { PlatformAuthRequests } from "../../../gen/platform/resources/oidc/v3alpha/auth_request_service_pb.js";
import { authRequestsService } from "./auth-requests/service.js";
import { PlatformIDPIntents } from "../../../gen/platform/resources/idp_intent/v3alpha/idp_intent_service_pb.js";
import { idpIntentsService, type IdpIntentSettings } from "./idp-intents/service.js";
import { reflectionServices } from "./reflection.js";
import { eventsService } from "./events/service.js";
import { userSchemasService } from "./user-schemas/service.js";
import { PlatformUserSchemas } from "../../../gen/platform/resources/user_schema/v3alpha/user_schema_service_pb.js";
import type { WatchSettings, WatchSlots } from "./events/watch.js";

/** Our API: each service has a permission per method and REST bindings. */
export const PLATFORM_SERVICES: readonly DescService[] = [
  PlatformActions,
  PlatformInstances,
  PlatformOrganizations,
  PlatformDomains,
  PlatformUsers,
  PlatformMemberships,
  PlatformIdentityProviders,
  PlatformLanguageSettings,
  PlatformLoginSettings,
  PlatformMessageTextSettings,
  PlatformFeatureSettings,
  PlatformDomainSettings,
  PlatformBrandingSettings,
  PlatformProjects,
  PlatformApps,
  PlatformGrants,
  PlatformSMTPProviders,
  PlatformSMSProviders,
  PlatformNotifications,
  PlatformEvents,
  PlatformSessions,
  PlatformAuthRequests,
  PlatformIDPIntents,
  PlatformUserSchemas,
];
/** Infrastructure every gRPC tool expects; public, no tenant. */
const INFRA_SERVICES: readonly DescService[] = [Health, ReflectionV1, ReflectionV1alpha];
export const SERVED_SERVICES: readonly DescService[] = [...PLATFORM_SERVICES, ...INFRA_SERVICES];

/** What request and response executions may name: exactly what this server serves. */
function servedCatalog(): ExecutionCatalog {
  return {
    services: new Set(SERVED_SERVICES.map((s) => s.typeName)),
    methods: new Set(SERVED_SERVICES.flatMap((s) => s.methods.map((m) => `/${s.typeName}/${m.name}`))),
    functions: new Set(EXECUTION_FUNCTIONS),
  };
}

export interface ServiceDeps extends Omit<ActionsDeps, "catalog"> {
  /** Advanced by changes that end someone's access; see cache/access-epoch.ts. */
  access: AccessEpoch;
  /** The feature flags' settings kind, with the configured system defaults. */
  flags: FeatureFlags;
  /** Argon2id with the configured cost (PLATFORM_PASSWORD_ARGON2_*). */
  hasher: PasswordHasher;
  isServing: () => Promise<boolean>;
  shutdown: AbortSignal;
  /** Open health Watch streams of this process and their cap (PLATFORM_MAX_WATCH_STREAMS). */
  watchStreams: WatchStreams;
  /** WatchEvents' settings and its open streams per instance (PLATFORM_EVENTS_WATCH_*). */
  eventWatch: WatchSettings & { slots: WatchSlots };
  /** The instances' token signing keys (oidc/models/signing-keys.ts). */
  signingKeys: SigningKeys;
  /** The login settings' kind, with the configured lockout default (domain/settings/login.ts). */
  loginSettings: SettingsKind;
  /** Sends through the instances' providers (notifications/providers/); `_test` uses it. */
  notifications: ProviderSender;
  /** Codes for email addresses and phone numbers, and their messages (domain/user/verification.ts). */
  verification: VerificationSettings;
  /** How ValidateDomain looks for a domain's token (org-domain-checks/check.ts). */
  domainValidation: DomainValidationDeps;
  /** What sessions check with (domain/session/commands.ts). */
  sessions: SessionDeps;
  /** External logins of the API (oidc/login/external/intents.ts). */
  idpIntents: IdpIntentSettings;
  /** PLATFORM_BRANDING_MAX_IMAGE_BYTES. */
  branding: { maxImageBytes: number };
}

export function registerServices(router: ConnectRouter, deps: ServiceDeps): void {
  router.service(PlatformActions, actionsService({ ...deps, catalog: servedCatalog() }));
  router.service(PlatformInstances, instancesService(deps));
  router.service(PlatformOrganizations, orgsService(deps));
  router.service(PlatformDomains, domainsService(deps));
  router.service(PlatformUsers, usersService(deps));
  router.service(PlatformMemberships, membershipsService(deps));
  router.service(PlatformIdentityProviders, idpsService(deps));
  router.service(PlatformLanguageSettings, languageSettingsService(deps));
  router.service(PlatformLoginSettings, loginSettingsService(deps));
  router.service(PlatformMessageTextSettings, messageTextSettingsService(deps));
  router.service(PlatformFeatureSettings, featureSettingsService(deps));
  router.service(PlatformDomainSettings, domainSettingsService(deps));
  router.service(PlatformBrandingSettings, brandingSettingsService(deps));
  router.service(PlatformProjects, projectsService(deps));
  router.service(PlatformApps, appsService(deps));
  router.service(PlatformGrants, grantsService(deps));
  router.service(PlatformSMTPProviders, smtpProvidersService(deps));
  router.service(PlatformSMSProviders, smsProvidersService(deps));
  router.service(PlatformNotifications, notificationsService(deps));
  router.service(PlatformEvents, eventsService(deps));
  router.service(PlatformSessions, sessionsService(deps));
  router.service(PlatformAuthRequests, authRequestsService(deps));
  router.service(PlatformIDPIntents, idpIntentsService(deps));
  router.service(PlatformUserSchemas, userSchemasService(deps));
  router.service(Health, healthService(SERVED_SERVICES, deps.isServing, deps.shutdown, deps.watchStreams));
  const reflection = reflectionServices(SERVED_SERVICES);
  router.service(ReflectionV1, reflection.v1);
  router.service(ReflectionV1alpha, reflection.v1alpha);
}
