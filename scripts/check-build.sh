#!/usr/bin/env bash
# CI: compile the service (npm run build) and start the built server once, as a deployment runs it:
# node dist/server.js on an embedded PostgreSQL in a scratch folder. It must migrate, seed, answer
# readiness, the API reference and GraphiQL, run the compiled CLI, and stop on SIGTERM with exit 0.
set -euo pipefail
cd "$(dirname "$0")/.."
npm run build
scratch=$(mktemp -d)
chmod 755 "$scratch"
port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
pgport=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
log="$scratch/server.log"
PORT=$port DATA_DIR="$scratch/data" EMBEDDED_PG_PORT=$pgport WORKER_ENABLED=true node dist/server.js >"$log" 2>&1 &
pid=$!
cleanup () { kill -9 "$pid" 2>/dev/null || true; rm -rf "$scratch"; }
trap cleanup EXIT
for _ in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:$port/health/ready" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$pid" 2>/dev/null; then echo "the built server exited during start-up:"; tail -40 "$log"; exit 1; fi
  sleep 0.5
done
curl -fsS "http://127.0.0.1:$port/health/ready" >/dev/null || { echo "the built server never became ready:"; tail -40 "$log"; exit 1; }
for path in /docs/ /graphiql /v2/openapi.json; do
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port$path")
  [ "$code" = 200 ] || { echo "GET $path answered $code"; exit 1; }
done
grep -q 'demo data loaded' "$log" || { echo "no demo data banner"; exit 1; }
DATABASE_URL="postgres://postgres@127.0.0.1:$pgport/order_exchange" node dist/cli/run.js credentials list >/dev/null
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
[ "$status" = 0 ] || { echo "the built server exited $status on SIGTERM:"; tail -20 "$log"; exit 1; }
grep -q '"msg":"shutdown complete"' "$log" || { echo "no clean shutdown in the log"; exit 1; }
echo "built server: started from dist/, served, ran the compiled CLI, stopped cleanly on SIGTERM"
