import { Link } from "@tanstack/react-router";

/** The three views of actions: where calls go (targets), when (executions), and what happened (deliveries). */
export function ActionsTabs() {
  return (
    <nav className="tabs" aria-label="Actions">
      <Link to="/actions/targets" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
        Targets
      </Link>
      <Link to="/actions/executions" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
        Executions
      </Link>
      <Link to="/actions/deliveries" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
        Deliveries
      </Link>
    </nav>
  );
}
