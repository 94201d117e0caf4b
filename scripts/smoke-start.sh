#!/usr/bin/env bash
# Starts the service the way the README says (npm start, embedded PGlite), creates a target
# with the bootstrapped admin token over REST, and stops it with SIGTERM.
set -euo pipefail
cd "$(dirname "$0")/.."
data="$(mktemp -d)"
port=18181
log="$data/service.log"
PLATFORM_DATA_DIR="$data" PLATFORM_PORT="$port" npm start >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$data"' EXIT
for _ in $(seq 1 120); do
  curl -fs "http://localhost:$port/ready" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "npm start exited" >&2; exit 1; }
  sleep 1
done
token="$(cat "$data/admin.pat")"
code="$(curl -s -o "$data/out.json" -w '%{http_code}' -X POST "http://localhost:$port/resources/v3alpha/targets" \
  -H "Authorization: Bearer $token" \
  -d '{"name":"ip-check","restWebhook":{"url":"https://example.com/hook"},"timeout":"10s"}')"
cat "$data/out.json"; echo
[ "$code" = 201 ] || { cat "$log"; echo "expected 201, got $code" >&2; exit 1; }
[ "$(stat -c %a "$data/admin.pat")" = 600 ] || { echo "admin.pat is not mode 0600" >&2; exit 1; }
kill -TERM "$pid"
wait "$pid" || true
echo "smoke test passed"
