import { Link } from "@tanstack/react-router";

/**
 * In an organization, instead of settings that only the instance has: what they are and a
 * link to them in the instance's context (the switcher's "All organizations").
 */
export function InstanceWide({ what, to }: { what: string; to: "/settings/domain" | "/settings/security" }) {
  return (
    <p className="panel">
      {what} hold for the whole instance, not per organization.{" "}
      <Link to={to} search={(prev) => ({ ...prev, org: undefined })}>
        Show the instance's
      </Link>
    </p>
  );
}
