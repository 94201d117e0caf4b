import { createRequire } from "node:module";
import { XmlBufferInputProvider, XmlDocument, xmlRegisterInputProvider, XsdValidator } from "libxml2-wasm";

/**
 * samlify's schema check (setSchemaValidator): every SAML message is validated against the
 * SAML 2.0 protocol schema (with the assertion, XML signature and XML encryption schemas it
 * imports) before anything reads it. libxml2 (libxml2-wasm, WebAssembly in this process)
 * does it with the schemas compiled once. The samlify project's own validator package
 * (@authenio/samlify-node-xmllint) ships the same schemas, which are read from it, but runs an
 * old emscripten build of xmllint per message that adds a process-wide uncaughtException
 * listener at every call (a leak per sign-in, and a rethrow in the service's own handler).
 */

const SCHEMAS = [
  "saml-schema-protocol-2.0.xsd",
  "saml-schema-assertion-2.0.xsd",
  "xmldsig-core-schema.xsd",
  "xenc-schema.xsd",
  "XMLSchema.dtd",
  "datatypes.dtd",
] as const;

let validator: XsdValidator | undefined;

function compiled(): XsdValidator {
  if (validator) return validator;
  const require = createRequire(import.meta.url);
  const files: Record<string, Uint8Array> = {};
  for (const name of SCHEMAS) {
    const text = (require(`@authenio/samlify-node-xmllint/build/schemas/${name}.js`) as { default: string }).default;
    files[name] = new TextEncoder().encode(text);
  }
  // Only these names resolve: a schema's import is read from memory, never from the network or the disk.
  xmlRegisterInputProvider(new XmlBufferInputProvider(files));
  const schema = XmlDocument.fromBuffer(files[SCHEMAS[0]]!, { url: SCHEMAS[0] });
  try {
    validator = XsdValidator.fromDoc(schema);
  } finally {
    schema.dispose();
  }
  return validator;
}

/** Resolves when `xml` is a valid SAML protocol message; rejects naming the first violation. */
export function validateSamlXml(xml: string): Promise<void> {
  let doc: XmlDocument | undefined;
  try {
    doc = XmlDocument.fromString(xml);
    compiled().validate(doc);
    return Promise.resolve();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return Promise.reject(new Error(`ERR_INVALID_XML: ${message.split("\n")[0]!.slice(0, 200)}`));
  } finally {
    doc?.dispose();
  }
}
