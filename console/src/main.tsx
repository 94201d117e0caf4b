import { TransportProvider } from "@connectrpc/connect-query";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { RouterProvider } from "@tanstack/react-router";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { apiTransport } from "./api/transport";
import { CALLBACK_PATH, Session } from "./auth/session";
import { loadConfig } from "./config";
import { createConsoleRouter } from "./routes";
import "./styles.css";

/**
 * Start: the instance's configuration, then the person: back from the login pages (the
 * callback), signed in already in this tab, or sent to sign in and brought back here.
 */
async function start(root: HTMLElement): Promise<void> {
  const session = new Session(await loadConfig());
  if (window.location.pathname === CALLBACK_PATH) window.history.replaceState(null, "", await session.completeSignIn());
  const user = await session.current();
  if (!user) return session.signIn(window.location.pathname + window.location.search);
  session.manager.events.addUserSignedOut(() => window.location.reload());
  const queries = new QueryClient({ defaultOptions: { queries: { retry: 1, staleTime: 10_000 } } });
  const router = createConsoleRouter({ session, user });
  createRoot(root).render(
    <StrictMode>
      <TransportProvider transport={apiTransport(session)}>
        <QueryClientProvider client={queries}>
          <RouterProvider router={router} />
        </QueryClientProvider>
      </TransportProvider>
    </StrictMode>,
  );
}

/**
 * React Aria's pressable elements put a <style> element of their own into the head (their
 * touch-action) unless an element with its id is there already. The CSP refuses inline
 * styles, so styles.css carries that rule and this marker keeps the element out.
 */
function keepReactAriaStyleOut(): void {
  const marker = document.createElement("meta");
  marker.id = "react-aria-pressable-style";
  document.head.append(marker);
}

keepReactAriaStyleOut();
const root = document.getElementById("root")!;
start(root).catch((error: unknown) => {
  const message = document.createElement("p");
  message.className = "error";
  message.setAttribute("role", "alert");
  message.textContent = `The console could not start: ${error instanceof Error ? error.message : String(error)}`;
  root.replaceChildren(message);
});
