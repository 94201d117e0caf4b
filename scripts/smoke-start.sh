#!/usr/bin/env bash
# Starts the service the way the README says (npm start, embedded PGlite), creates a target
# with the bootstrapped admin token over REST, and stops it with SIGTERM.
set -euo pipefail
cd "$(dirname "$0")/.."
data="$(mktemp -d)"
port=18181
log="$data/service.log"
# Its own process group, so that the trap can end everything; SIGTERM goes to npm alone below,
# as a process manager sends it (the start script execs node, so npm passes it on to the server).
PLATFORM_DATA_DIR="$data" PLATFORM_PORT="$port" setsid npm start >"$log" 2>&1 &
pid=$!
trap 'kill -- -"$pid" 2>/dev/null || true; rm -rf "$data"' EXIT
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
for _ in $(seq 1 20); do pgrep -g "$pid" >/dev/null || break; sleep 0.5; done
if pgrep -g "$pid" >/dev/null; then echo "npm start did not stop on SIGTERM" >&2; exit 1; fi
echo "smoke test passed"

rm -rf "$data"

# Two workers on PostgreSQL: one bootstrap, both serve, SIGTERM stops the whole tree.
if [ -n "${TEST_DATABASE_URL:-}" ]; then
  db="smoke_$$"
  psql "$TEST_DATABASE_URL" -qc "create database $db"
  url="${TEST_DATABASE_URL%/*}/$db"
  data2="$(mktemp -d)"
  PLATFORM_WORKERS=2 DATABASE_URL="$url" PLATFORM_MASTERKEY=0123456789abcdef0123456789abcdef \
    PLATFORM_DATA_DIR="$data2" PLATFORM_PORT="$port" node dist/src/main.js >"$data2/service.log" 2>&1 &
  pid=$!
  trap 'kill "$pid" 2>/dev/null || true; rm -rf "$data2"; psql "$TEST_DATABASE_URL" -qc "drop database if exists $db with (force)"' EXIT
  for _ in $(seq 1 60); do curl -fs "http://localhost:$port/ready" >/dev/null 2>&1 && break; sleep 1; done
  token="$(cat "$data2/admin.pat")" || { cat "$data2/service.log"; exit 1; }
  for i in 1 2 3 4 5 6; do
    code="$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://localhost:$port/resources/v3alpha/targets" \
      -H "Authorization: Bearer $token" -d "{\"name\":\"w$i\",\"restWebhook\":{\"url\":\"https://example.com\"}}")"
    [ "$code" = 201 ] || { cat "$data2/service.log"; echo "worker call $i: expected 201, got $code" >&2; exit 1; }
  done
  [ "$(grep -c 'bootstrapped the first instance' "$data2/service.log")" = 1 ] || { echo "expected exactly one bootstrap" >&2; exit 1; }
  [ "$(psql "$url" -tAc 'select count(*) from instances')" = 1 ] || { echo "expected one instance" >&2; exit 1; }
  kill -TERM "$pid"
  for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then echo "the primary did not exit on SIGTERM" >&2; exit 1; fi
  echo "two-worker smoke test passed"
fi
