import { Link } from "@tanstack/react-router";
import { usePermissions } from "../../api/permissions";

/** The settings' views, each a kind of settings; feature flags only for those who may read them. */
export function SettingsTabs() {
  const { may } = usePermissions();
  return (
    <nav className="tabs" aria-label="Settings">
      <Link to="/settings/login" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
        Login
      </Link>
      <Link to="/settings/security" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
        Lockout and passwords
      </Link>
      <Link to="/settings/domain" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
        Domain
      </Link>
      <Link to="/settings/languages" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
        Languages
      </Link>
      <Link to="/settings/branding" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
        Branding
      </Link>
      <Link to="/settings/texts" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
        Message texts
      </Link>
      {may("feature.read") && (
        <Link to="/settings/features" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
          Features
        </Link>
      )}
    </nav>
  );
}
