import type { ReactNode } from "react";
import { ApiError } from "../../components/ApiError";
import { SettingsTabs } from "./SettingsTabs";

/** A settings page's frame: its title and the tabs, then its settings once they are read. */
export function SettingsPage({ title, loading, error, children }: { title: string; loading: boolean; error: unknown; children: ReactNode }) {
  return (
    <>
      <div className="title">
        <h1>{title}</h1>
      </div>
      <SettingsTabs />
      {error ? <ApiError error={error} /> : loading ? <p role="status">Loading…</p> : children}
    </>
  );
}
