/** The roles of a membership, one badge each. */
export function RoleBadges({ roles }: { roles: string[] }) {
  return (
    <>
      {roles.map((r) => (
        <span key={r} className="badge">
          {r}
        </span>
      ))}
    </>
  );
}
