import type { AccessEpoch } from "../../cache/access-epoch.js";
import { AccessCache } from "../../cache/access-cache.js";
import { instanceLanguages } from "../../domain/settings/language.js";
import type { Db } from "../../store/db.js";
import { machineParty, type MachineParty } from "../../domain/user/machine-parties.js";
import { findParty, type Party } from "../models/parties.js";
import { activeProjectIds } from "../../domain/project/queries.js";

/** A backstop only: every change that matters advances the access epoch (docs/oidc.md, "Caches"). */
const TTL_MS = 60_000;

/** A cached party is refused once one of its keys expired, so that the expired key is never used. */
const keysUnexpired = (party: Party) => party.keys.every((k) => k.expiresAt.getTime() > Date.now());

/**
 * What the token, introspection and revocation endpoints look up on every request and what
 * changes only by an administrator's write: the application or machine user acting as a
 * client, and whether a project asked for as an audience is active; for discovery, the
 * instance's languages. Held per process until the next change of access on any process
 * (cache/access-cache.ts): the writes of apps, their secrets and keys, projects' state,
 * machine users' secrets, keys, usernames and state, and language settings all advance the
 * epoch (rpc/services/*), so a regenerated secret or a deactivated application is refused
 * at once. Keys are always the instance's: no entry outlives its instance's scope.
 */
export class OidcLookups {
  readonly #parties: AccessCache<string, Party>;
  readonly #machines: AccessCache<string, MachineParty>;
  readonly #projects: AccessCache<string, true>;
  readonly #languages: AccessCache<string, string[]>;

  constructor(access: AccessEpoch, ttlMs = TTL_MS) {
    this.#parties = new AccessCache(access, ttlMs);
    this.#machines = new AccessCache(access, ttlMs);
    this.#projects = new AccessCache(access, ttlMs);
    this.#languages = new AccessCache(access, ttlMs);
  }

  /** The languages the instance allows, for discovery (language settings writes advance the epoch). */
  languages(db: Db, instanceId: string): Promise<string[]> {
    return this.#languages.get(instanceId, () => instanceLanguages(db, instanceId)) as Promise<string[]>;
  }

  machine(db: Db, instanceId: string, by: { username: string } | { userId: string }): Promise<MachineParty | undefined> {
    // Usernames are unique regardless of case (domain/user/machine-parties.ts compares them lower-cased).
    const key = "userId" in by ? `${instanceId}\nid\n${by.userId}` : `${instanceId}\nname\n${by.username.toLowerCase()}`;
    return this.#machines.get(key, () => machineParty(db, instanceId, by), keysUnexpired);
  }

  /**
   * The application with this client_id, else the machine user with this username, as
   * client authentication looks them up. Kept as one answer, so that a machine user costs no
   * application lookup that finds nothing: an application created later with its name as
   * client_id advances the epoch, like every application write.
   */
  party(db: Db, instanceId: string, clientId: string): Promise<Party | undefined> {
    return this.#parties.get(`${instanceId}\n${clientId}`, () => findParty(db, instanceId, clientId), keysUnexpired);
  }

  /**
   * Which of these projects exist and are active. Only found ones are kept, so a project
   * created meanwhile is seen at once; one statement per project not yet known.
   */
  async activeProjects(db: Db, instanceId: string, ids: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (const id of new Set(ids)) {
      const active = await this.#projects.get(`${instanceId}\n${id}`, async () => ((await activeProjectIds(db, instanceId, [id])).has(id) ? true : undefined));
      if (active) found.add(id);
    }
    return found;
  }
}
