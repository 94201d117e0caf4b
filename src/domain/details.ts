export type OwnerKind = "system" | "instance" | "org";

export interface Owner {
  type: OwnerKind;
  id: string;
}

/** What every manipulation and read reports: the resource and its last event. */
export interface ObjectDetails {
  id: string;
  sequence: number;
  changeDate: Date;
  owner: Owner;
}

/** Who writes, and where: passed to every command. */
export interface Actor {
  instanceId: string;
  /** User id of the caller, or "system" for bootstrap. */
  userId: string;
}
