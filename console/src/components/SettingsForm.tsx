import type { FormEventHandler, ReactNode } from "react";
import { FormFooter } from "./FormFooter";

/**
 * A resource's settings: shown to everyone who may read them (a disabled fieldset for those
 * who may not change them), saved by those who may.
 */
export function SettingsForm(props: { mayWrite: boolean; onSubmit: FormEventHandler; pending: boolean; error: unknown; saved: boolean; children: ReactNode }) {
  const { mayWrite, onSubmit, pending, error, saved, children } = props;
  return (
    <section aria-labelledby="settings">
      <h2 id="settings">Settings</h2>
      <form onSubmit={onSubmit}>
        <fieldset className="plain" disabled={!mayWrite}>
          {children}
        </fieldset>
        {mayWrite && <FormFooter submit="Save" pending={pending} error={error} saved={saved} />}
      </form>
    </section>
  );
}
