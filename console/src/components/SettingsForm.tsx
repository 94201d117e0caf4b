import type { FormEventHandler, ReactNode } from "react";
import { FormFooter } from "./FormFooter";

/**
 * A resource's settings: shown to everyone who may read them (a disabled fieldset for those
 * who may not change them), saved by those who may. `title` names the section where a page
 * has more than one such form (its heading's id follows it).
 */
export function SettingsForm(props: {
  title?: string;
  mayWrite: boolean;
  onSubmit: FormEventHandler;
  pending: boolean;
  error: unknown;
  saved: boolean;
  children: ReactNode;
}) {
  const { title = "Settings", mayWrite, onSubmit, pending, error, saved, children } = props;
  const id = title.toLowerCase().replace(/[^a-z0-9]+/g, "-");
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <form onSubmit={onSubmit}>
        <fieldset className="plain" disabled={!mayWrite}>
          {children}
        </fieldset>
        {mayWrite && <FormFooter submit="Save" pending={pending} error={error} saved={saved} />}
      </form>
    </section>
  );
}
