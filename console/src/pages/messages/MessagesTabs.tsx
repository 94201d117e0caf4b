import { Link } from "@tanstack/react-router";

/** The three views of messages: what went out (the log), and who sends emails and text messages. */
export function MessagesTabs() {
  return (
    <nav className="tabs" aria-label="Messages">
      <Link to="/messages" search={(prev) => prev} activeOptions={{ exact: true, includeSearch: false }}>
        Log
      </Link>
      <Link to="/messages/smtp" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
        Email providers
      </Link>
      <Link to="/messages/sms" search={(prev) => prev} activeOptions={{ includeSearch: false }}>
        SMS providers
      </Link>
    </nav>
  );
}
