import { appParty, type AppParty } from "../../domain/app/parties.js";
import { machineParty, type MachineParty } from "../../domain/user/machine-parties.js";
import type { Db } from "../../store/db.js";

export type Party = AppParty | MachineParty;

/** The application whose client_id this is, else the machine user with this username: an application wins. */
export async function findParty(db: Db, instanceId: string, clientId: string): Promise<Party | undefined> {
  return (await appParty(db, instanceId, clientId)) ?? (await machineParty(db, instanceId, { username: clientId }));
}
