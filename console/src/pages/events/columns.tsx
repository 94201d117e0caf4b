import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Fragment, type ReactNode } from "react";
import type { Event } from "../../../../gen/platform/resources/event/v3alpha/event_pb";
import { EditorName, ResourceLink } from "./ResourceLink";

/** A column of an event list: its heading and what it shows of each event. */
export interface EventColumn {
  label: string;
  cell(e: Event): ReactNode;
}

export const when = (e: Event) => (e.creationDate ? timestampDate(e.creationDate).toLocaleString() : "");

/** An event type, which may break after its dots only (`project.role.added`, not `project.role.add|ed`). */
function EventType({ type }: { type: string }) {
  const parts = type.split(".");
  return (
    <code className="event-type">
      {parts.map((part, i) => (
        <Fragment key={i}>
          {part}
          {i < parts.length - 1 && (
            <>
              .<wbr />
            </>
          )}
        </Fragment>
      ))}
    </code>
  );
}

/** Changes: when, what, to which resource, by whom (the rest is in a row's details). */
export const CHANGE_COLUMNS: readonly EventColumn[] = [
  { label: "Time", cell: when },
  { label: "Event", cell: (e) => <EventType type={e.type} /> },
  { label: "Resource", cell: (e) => <ResourceLink resource={e.resource} /> },
  { label: "Editor", cell: (e) => <EditorName editor={e.editor} /> },
];

// The words of the service's sign-in events (src/domain/audit/sign-ins.ts); a value not listed shows as the log has it.
const METHODS: Record<string, string> = {
  login_name: "Login name",
  password: "Password",
  totp: "Authenticator app",
  otp_email: "Code by email",
  otp_sms: "Code by text message",
  recovery_code: "Recovery code",
  webauthn: "Security key or passkey",
  passkey: "Passkey",
  idp: "Identity provider",
  client_secret: "Client secret",
  jwt_bearer: "Signed assertion",
};
const CHANNELS: Record<string, string> = { login: "Login pages", session: "Session API", token: "Token endpoint" };
const REASONS: Record<string, string> = {
  succeeded: "Succeeded",
  unknown_name: "Unknown login name",
  wrong_password: "Wrong password",
  wrong_code: "Wrong code",
  invalid_key: "Key did not verify",
  wrong_secret: "Wrong secret",
  locked: "Locked",
  inactive: "Inactive",
  not_allowed: "Not allowed here",
};

const text = (e: Event, field: string) => {
  const value = e.payload?.[field];
  return typeof value === "string" ? value : "";
};
const inWords = (words: Record<string, string>, value: string) => words[value] ?? value;

function Outcome({ type }: { type: string }) {
  if (type === "signin.succeeded") return <span className="badge ok">Succeeded</span>;
  if (type === "signin.failed") return <span className="badge off">Failed</span>;
  if (type === "signin.suppressed") return <span className="badge">Summed up</span>;
  return <EventType type={type} />;
}

/** Why: a failure's reason, or what a summary of attempts beyond the recorded rate counted. */
function reason(e: Event): string {
  if (e.type !== "signin.suppressed") return inWords(REASONS, text(e, "reason"));
  const reasons = e.payload?.reasons;
  const counts =
    reasons && typeof reasons === "object" && !Array.isArray(reasons) ? Object.entries(reasons).map(([r, n]) => `${inWords(REASONS, r)} ×${String(n)}`) : [];
  return [`${String(e.payload?.count ?? 0)} attempts`, ...counts].join(", ");
}

/** A user's sign-in attempts: how each went and where it came from, a column each. */
export const SIGN_IN_COLUMNS: readonly EventColumn[] = [
  { label: "Time", cell: when },
  { label: "Outcome", cell: (e) => <Outcome type={e.type} /> },
  { label: "Method", cell: (e) => inWords(METHODS, text(e, "method")) },
  { label: "Channel", cell: (e) => inWords(CHANNELS, text(e, "channel")) },
  { label: "Reason", cell: reason },
  { label: "Client", cell: (e) => <code>{e.editor?.client || text(e, "clientId")}</code> },
  { label: "IP address", cell: (e) => e.editor?.ipAddress || text(e, "address") },
  { label: "User agent", cell: (e) => <span className="breakable">{e.editor?.userAgent}</span> },
];
