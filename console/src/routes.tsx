import { createRootRouteWithContext, createRoute, createRouter, lazyRouteComponent } from "@tanstack/react-router";
import type { User } from "oidc-client-ts";
import type { Session } from "./auth/session";
import { Layout } from "./components/Layout";

/**
 * The console's pages, each loaded when first visited (the first page's JavaScript stays
 * small). `?org=` is the context the console acts in (scope.tsx), kept by every link.
 */
interface RouterContext {
  session: Session;
  user: User;
}

const root = createRootRouteWithContext<RouterContext>()({
  validateSearch: (search: Record<string, unknown>): { org?: string } => (typeof search.org === "string" && search.org ? { org: search.org } : {}),
  component: function Root() {
    const { session, user } = root.useRouteContext();
    return <Layout session={session} user={user} />;
  },
});

const home = createRoute({ getParentRoute: () => root, path: "/", component: lazyRouteComponent(() => import("./pages/Home"), "Home") });
const organizations = createRoute({
  getParentRoute: () => root,
  path: "/organizations",
  component: lazyRouteComponent(() => import("./pages/Organizations"), "Organizations"),
});
const organization = createRoute({
  getParentRoute: () => root,
  path: "/organizations/$orgId",
  component: lazyRouteComponent(() => import("./pages/Organization"), "Organization"),
});
const users = createRoute({ getParentRoute: () => root, path: "/users", component: lazyRouteComponent(() => import("./pages/Users"), "Users") });
const user = createRoute({ getParentRoute: () => root, path: "/users/$userId", component: lazyRouteComponent(() => import("./pages/User"), "User") });
const projects = createRoute({ getParentRoute: () => root, path: "/projects", component: lazyRouteComponent(() => import("./pages/Projects"), "Projects") });
const project = createRoute({
  getParentRoute: () => root,
  path: "/projects/$projectId",
  component: lazyRouteComponent(() => import("./pages/Project"), "Project"),
});
const application = createRoute({
  getParentRoute: () => root,
  path: "/projects/$projectId/apps/$appId",
  component: lazyRouteComponent(() => import("./pages/Application"), "Application"),
});
const targets = createRoute({
  getParentRoute: () => root,
  path: "/actions/targets",
  component: lazyRouteComponent(() => import("./pages/Targets"), "Targets"),
});
const target = createRoute({
  getParentRoute: () => root,
  path: "/actions/targets/$targetId",
  component: lazyRouteComponent(() => import("./pages/Target"), "Target"),
});
const executions = createRoute({
  getParentRoute: () => root,
  path: "/actions/executions",
  component: lazyRouteComponent(() => import("./pages/Executions"), "Executions"),
});
const deliveries = createRoute({
  getParentRoute: () => root,
  path: "/actions/deliveries",
  component: lazyRouteComponent(() => import("./pages/Deliveries"), "Deliveries"),
});
const administrators = createRoute({
  getParentRoute: () => root,
  path: "/administrators",
  component: lazyRouteComponent(() => import("./pages/Administrators"), "Administrators"),
});
const instances = createRoute({
  getParentRoute: () => root,
  path: "/instances",
  component: lazyRouteComponent(() => import("./pages/Instances"), "Instances"),
});
const instance = createRoute({
  getParentRoute: () => root,
  path: "/instances/$instanceId",
  component: lazyRouteComponent(() => import("./pages/Instance"), "Instance"),
});
const identityProviders = createRoute({
  getParentRoute: () => root,
  path: "/identity-providers",
  component: lazyRouteComponent(() => import("./pages/IdentityProviders"), "IdentityProviders"),
});
const identityProvider = createRoute({
  getParentRoute: () => root,
  path: "/identity-providers/$idpId",
  component: lazyRouteComponent(() => import("./pages/IdentityProvider"), "IdentityProvider"),
});
const userSchemas = createRoute({
  getParentRoute: () => root,
  path: "/user-schemas",
  component: lazyRouteComponent(() => import("./pages/UserSchemas"), "UserSchemas"),
});
const userSchema = createRoute({
  getParentRoute: () => root,
  path: "/user-schemas/$schemaId",
  component: lazyRouteComponent(() => import("./pages/UserSchema"), "UserSchema"),
});
const loginSettings = createRoute({
  getParentRoute: () => root,
  path: "/settings/login",
  component: lazyRouteComponent(() => import("./pages/settings/Login"), "Login"),
});
const securitySettings = createRoute({
  getParentRoute: () => root,
  path: "/settings/security",
  component: lazyRouteComponent(() => import("./pages/settings/Security"), "Security"),
});
const domainSettings = createRoute({
  getParentRoute: () => root,
  path: "/settings/domain",
  component: lazyRouteComponent(() => import("./pages/settings/Domain"), "Domain"),
});
const languageSettings = createRoute({
  getParentRoute: () => root,
  path: "/settings/languages",
  component: lazyRouteComponent(() => import("./pages/settings/Languages"), "Languages"),
});
const featureSettings = createRoute({
  getParentRoute: () => root,
  path: "/settings/features",
  component: lazyRouteComponent(() => import("./pages/settings/Features"), "Features"),
});
const messages = createRoute({ getParentRoute: () => root, path: "/messages", component: lazyRouteComponent(() => import("./pages/Messages"), "Messages") });
const branding = createRoute({
  getParentRoute: () => root,
  path: "/settings/branding",
  component: lazyRouteComponent(() => import("./pages/settings/Branding"), "Branding"),
});
const messageTexts = createRoute({
  getParentRoute: () => root,
  path: "/settings/texts",
  component: lazyRouteComponent(() => import("./pages/settings/MessageTexts"), "MessageTexts"),
});
const smtpProviders = createRoute({
  getParentRoute: () => root,
  path: "/messages/smtp",
  component: lazyRouteComponent(() => import("./pages/messages/SmtpProviders"), "SmtpProviders"),
});
const smtpProvider = createRoute({
  getParentRoute: () => root,
  path: "/messages/smtp/$providerId",
  component: lazyRouteComponent(() => import("./pages/messages/SmtpProvider"), "SmtpProvider"),
});
const smsProviders = createRoute({
  getParentRoute: () => root,
  path: "/messages/sms",
  component: lazyRouteComponent(() => import("./pages/messages/SmsProviders"), "SmsProviders"),
});
const smsProvider = createRoute({
  getParentRoute: () => root,
  path: "/messages/sms/$providerId",
  component: lazyRouteComponent(() => import("./pages/messages/SmsProvider"), "SmsProvider"),
});
const activity = createRoute({ getParentRoute: () => root, path: "/activity", component: lazyRouteComponent(() => import("./pages/Activity"), "Activity") });
// Each resource's history (and a user's sign-ins): one module for all of them, loaded when the first is opened.
const userHistory = createRoute({
  getParentRoute: () => root,
  path: "/users/$userId/history",
  component: lazyRouteComponent(() => import("./pages/History"), "UserHistory"),
});
const userSignIns = createRoute({
  getParentRoute: () => root,
  path: "/users/$userId/sign-ins",
  component: lazyRouteComponent(() => import("./pages/History"), "UserSignIns"),
});
const organizationHistory = createRoute({
  getParentRoute: () => root,
  path: "/organizations/$orgId/history",
  component: lazyRouteComponent(() => import("./pages/History"), "OrganizationHistory"),
});
const projectHistory = createRoute({
  getParentRoute: () => root,
  path: "/projects/$projectId/history",
  component: lazyRouteComponent(() => import("./pages/History"), "ProjectHistory"),
});
const applicationHistory = createRoute({
  getParentRoute: () => root,
  path: "/projects/$projectId/apps/$appId/history",
  component: lazyRouteComponent(() => import("./pages/History"), "ApplicationHistory"),
});
const identityProviderHistory = createRoute({
  getParentRoute: () => root,
  path: "/identity-providers/$idpId/history",
  component: lazyRouteComponent(() => import("./pages/History"), "IdentityProviderHistory"),
});
const targetHistory = createRoute({
  getParentRoute: () => root,
  path: "/actions/targets/$targetId/history",
  component: lazyRouteComponent(() => import("./pages/History"), "TargetHistory"),
});

export function createConsoleRouter(context: RouterContext) {
  return createRouter({
    routeTree: root.addChildren([
      home,
      activity,
      organizations,
      organization,
      organizationHistory,
      users,
      user,
      userHistory,
      userSignIns,
      projects,
      project,
      projectHistory,
      application,
      applicationHistory,
      targets,
      target,
      targetHistory,
      executions,
      deliveries,
      identityProviders,
      identityProvider,
      identityProviderHistory,
      userSchemas,
      userSchema,
      messages,
      smtpProviders,
      smtpProvider,
      smsProviders,
      smsProvider,
      administrators,
      instances,
      instance,
      loginSettings,
      securitySettings,
      domainSettings,
      languageSettings,
      featureSettings,
      branding,
      messageTexts,
    ]),
    basepath: import.meta.env.BASE_URL.replace(/\/$/, ""),
    context,
    defaultPreload: "intent",
  });
}

declare module "@tanstack/react-router" {
  interface Register {
    router: ReturnType<typeof createConsoleRouter>;
  }
}
