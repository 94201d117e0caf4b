/**
 * What the console needs to know of the instance it is served by: the application it signs
 * in with (the service answers per Host, src/server/console-files.ts) and its issuer, the
 * origin the console was loaded from.
 */
export interface ConsoleConfig {
  issuer: string;
  clientId: string;
}

export async function loadConfig(): Promise<ConsoleConfig> {
  const res = await fetch(`${import.meta.env.BASE_URL}config.json`, { headers: { accept: "application/json" }, cache: "no-store" });
  if (!res.ok) throw new Error(`the console's configuration could not be read (HTTP ${res.status}): ${await res.text()}`);
  return (await res.json()) as ConsoleConfig;
}
