/**
 * The kinds of resource the log names (the service's aggregate types), in words: what the
 * Activity page filters by, and what a row's resource says it is. Settings are kinds of
 * their own (`settings.login`, …) and show as the log names them.
 */
export const RESOURCE_KINDS = [
  { key: "user", label: "Users", one: "User" },
  { key: "org", label: "Organizations", one: "Organization" },
  { key: "project", label: "Projects", one: "Project" },
  { key: "app", label: "Applications", one: "Application" },
  { key: "idp", label: "Identity providers", one: "Identity provider" },
  { key: "target", label: "Targets", one: "Target" },
  { key: "execution", label: "Executions", one: "Execution" },
  { key: "user_grant", label: "User grants", one: "User grant" },
  { key: "project_grant", label: "Project grants", one: "Project grant" },
  { key: "membership", label: "Memberships", one: "Membership" },
  { key: "session", label: "Sessions", one: "Session" },
  { key: "signin", label: "Sign-ins", one: "Sign-in of user" },
  { key: "pat", label: "Personal access tokens", one: "Personal access token" },
  { key: "user_key", label: "Service account keys", one: "Service account key" },
  { key: "app_key", label: "Application keys", one: "Application key" },
  { key: "smtp_provider", label: "Email providers", one: "Email provider" },
  { key: "sms_provider", label: "SMS providers", one: "SMS provider" },
  { key: "instance", label: "The instance", one: "Instance" },
] as const;

export type ResourceKind = (typeof RESOURCE_KINDS)[number]["key"];

export const kindLabel = (type: string) => RESOURCE_KINDS.find((k) => k.key === type)?.one ?? type;
