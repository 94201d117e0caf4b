/** What the store appends: events of one aggregate, and what an append answers. */

export interface AggregateRef {
  instanceId: string;
  type: string;
  id: string;
  /**
   * The organization the resource belongs to, for resources of one: the audit log shows an
   * organization's owners its events and no others (domain/audit). Absent: the instance's own.
   * A session is the instance's, but an append that knows its user gives the user's
   * organization, whose owners audit their users' sign-ins; its termination, which reads
   * only the session's row, stays the instance's.
   */
  orgId?: string;
}

export interface Appended {
  sequence: number;
  createdAt: Date;
}

export interface PendingEvent {
  /** Dotted name such as `target.added`; event executions match on it. */
  type: string;
  payload: unknown;
}
