import { Link, Outlet, useNavigate } from "@tanstack/react-router";
import type { User } from "oidc-client-ts";
import { useEffect } from "react";
import { Button } from "react-aria-components";
import { usePermissions } from "../api/permissions";
import type { Session } from "../auth/session";
import { useScope } from "../scope";
import { OrgSwitcher } from "./OrgSwitcher";

/**
 * Every page's frame: a skip link, the header (where the console acts, who is signed in,
 * signing out), the navigation, and the page. Links keep the chosen organization.
 */
export function Layout({ session, user }: { session: Session; user: User }) {
  const { may, systemMember } = usePermissions();
  // Asked of the instance, not of the chosen organization: choosing another must not unmount
  // the switcher (and the focus in it) while that organization's permissions load.
  const instance = usePermissions({ inInstance: true });
  const instanceWide = instance.may("org.read");
  const administers = instanceWide || instance.orgIds.length > 0;
  useFirstOwnOrganization(instanceWide ? [] : instance.orgIds);
  const name = user.profile.name ?? user.profile.preferred_username ?? user.profile.sub;
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="product">Console</span>
        {administers && <OrgSwitcher instanceWide={instanceWide} />}
        <span className="who">{name}</span>
        <Button className="quiet" onPress={() => void session.signOut()}>
          Sign out
        </Button>
      </header>
      <div className="frame">
        <nav className="side" aria-label="Console">
          <Link to="/" search={(prev) => prev} activeOptions={{ exact: true, includeSearch: false }}>
            Home
          </Link>
          {administers && (
            <Link to="/organizations" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
              Organizations
            </Link>
          )}
          {may("user.read") && (
            <Link to="/users" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
              Users
            </Link>
          )}
          {may("project.read") && (
            <Link to="/projects" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
              Projects
            </Link>
          )}
          {may("action.target.read") && (
            <Link to="/actions/targets" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
              Actions
            </Link>
          )}
          {may("idp.read") && (
            <Link to="/identity-providers" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
              Identity providers
            </Link>
          )}
          {may("user.schema.read") && (
            <Link to="/user-schemas" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
              User schemas
            </Link>
          )}
          {may("instance.notification.read") && (
            <Link to="/messages" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
              Messages
            </Link>
          )}
          {may("member.read") && (
            <Link to="/administrators" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
              Administrators
            </Link>
          )}
          {may("events.read") && (
            <Link to="/activity" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
              Activity
            </Link>
          )}
          {/* Every signed-in person may read settings; only administrators (viewers too) are shown them. */}
          {(administers || may("settings.write")) && (
            <Link to="/settings/login" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
              Settings
            </Link>
          )}
          {systemMember && may("instance.read") && (
            <Link to="/instances" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
              Instances
            </Link>
          )}
        </nav>
        <main id="main" tabIndex={-1}>
          <Outlet />
        </main>
      </div>
    </>
  );
}

/**
 * An organization's administrator without rights in the instance has nothing to do in the
 * instance's context: the console acts in the first of their organizations until they choose
 * (replacing the address, so Back does not return to the empty instance view).
 */
function useFirstOwnOrganization(orgIds: string[]) {
  const { orgId } = useScope();
  const navigate = useNavigate();
  const first = orgIds[0];
  useEffect(() => {
    if (first && !orgId) void navigate({ to: ".", search: (prev: Record<string, unknown>) => ({ ...prev, org: first }), replace: true });
  }, [first, orgId, navigate]);
}
