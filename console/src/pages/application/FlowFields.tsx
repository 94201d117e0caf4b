import type { Control } from "react-hook-form";
import { CheckboxesInput, CheckboxInput } from "../../components/ChoiceInputs";
import { TextLinesInput } from "../../components/TextLinesInput";
import { GRANT_TYPES, RESPONSE_TYPES, type FlowValues } from "./oidc";

/** Where an OpenID Connect client may send people back, and how it may get tokens: in creating it and in changing it. */
export function FlowFields<T extends FlowValues>({ control }: { control: Control<T> }) {
  // Both forms hold these fields under these names; TypeScript cannot see that through T.
  const flow = control as unknown as Control<FlowValues>;
  return (
    <>
      <TextLinesInput
        control={flow}
        name="redirectUris"
        label="Redirect URIs"
        description="One a line: where the service may send people back after signing in. https, unless in development mode or a native app's loopback or custom scheme."
      />
      <TextLinesInput
        control={flow}
        name="postLogoutRedirectUris"
        label="Post-logout redirect URIs"
        description="One a line: where the service may send people after signing out."
      />
      <CheckboxesInput control={flow} name="responseTypes" label="Response types" options={RESPONSE_TYPES} />
      <CheckboxesInput
        control={flow}
        name="grantTypes"
        label="Grant types"
        description="Code needs Authorization code, the ID token types need Implicit, Refresh token needs Authorization code."
        options={GRANT_TYPES}
      />
      <CheckboxInput control={flow} name="devMode" label="Development mode: allow http redirect URIs" />
    </>
  );
}
