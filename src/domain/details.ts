import type { Editor } from "../store/editor.js";

/** A project grant owns the memberships held in it. */
export type OwnerKind = "system" | "instance" | "org" | "project_grant";

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

/** Details of a resource owned by its instance, from its projection row. */
export function instanceOwnedDetails(row: { id: string; instance_id: string; sequence: number; change_date: Date }): ObjectDetails {
  return { id: row.id, sequence: row.sequence, changeDate: row.change_date, owner: { type: "instance", id: row.instance_id } };
}

/** Who writes, and where: passed to every command (an Editor of the events it appends). */
export interface Actor extends Editor {
  instanceId: string;
}
