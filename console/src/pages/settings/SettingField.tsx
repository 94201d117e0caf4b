import type { ReactNode } from "react";
import { ApiError } from "../../components/ApiError";
import { Inherited } from "../../components/Inherited";
import type { SettingLine } from "./useSettings";

/**
 * One setting on a settings page: its input (read-only where the context cannot set it),
 * where its value comes from with its Reset, and the API's refusal of that Reset.
 */
export function SettingField({ line, children }: { line: SettingLine; children: ReactNode }) {
  return (
    <div className="setting">
      <fieldset className="plain" disabled={!line.editable}>
        {children}
      </fieldset>
      <Inherited setting={line.label} owner={line.owner} mayReset={line.mayReset} pending={line.pending} onReset={line.onReset} />
      {!line.editable && <p className="inherited">Set for the whole instance, not per organization.</p>}
      <ApiError error={line.resetError} />
    </div>
  );
}
