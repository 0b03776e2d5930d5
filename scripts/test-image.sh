#!/usr/bin/env bash
# npm run test:image: the project's Dockerfile really built and run with podman, as a deployment runs it.
# CI machines have no image registry, so the official base image is replaced by a local stand-in of the
# same name (Debian bookworm from debootstrap plus this machine's Node 20); both base images are tagged
# with a hash of what went into them and reused while it holds. An image already under an official name
# that this script did not make (a real pull) is never retagged: the build then runs on it as it is.
# The image is then run against the machine's PostgreSQL (a fresh database, dropped after): migrations and
# credentials through its own CLI, the three endpoints, readiness and metrics from outside, a clean exit on
# SIGTERM as process 1, then /docs, /graphiql and tracing switched on; it must run as a non-root user, hold
# no dev dependencies, .git or tests, and stay inside a size budget. Last, compose.yaml (which wants
# POSTGRES_PASSWORD) comes up (PostgreSQL and PgBouncer from Debian's packages, two API instances, a worker) and
# answers through both instances.
# Where podman cannot be installed it says so in one line and exits 0 (the only reason to skip).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
started=$SECONDS
step () { echo "== image: $* ($((SECONDS - started)) s)"; }
fail () { echo "test:image FAILED: $*" >&2; exit 1; }

# Measured 2026-11 on the stand-in base: 261 MB, of it Debian slimmed as the official image is 78 MB, Node
# 99 MB and npm 14 MB, the production node_modules 67 MB once the Dockerfile prunes it (153 MB before; the
# OpenTelemetry SDK is the largest part) and dist/, the migrations and package files 4 MB. The budget is
# that plus about 15 % (39 MB): room for a few dependencies, while a jump past it is a dev or platform
# package gone astray, or the pruning undone.
SIZE_BUDGET_MB=${IMAGE_SIZE_BUDGET_MB:-300}
GRACE_S=20
SUITE=bookworm
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
IMAGE=localhost/order-exchange:test
OFFICIAL_NODE=docker.io/library/node:20-bookworm-slim
OFFICIAL_DEBIAN=docker.io/library/debian:bookworm-slim
STAND_IN_LABEL=org.order-exchange.image-test.stand-in-for
PG_ADMIN_URL=${IMAGE_TEST_PG_URL:-postgres://postgres@127.0.0.1:5432/postgres}

# A clean machine's apt lists may be missing or stale: update only when the install fails without it.
apt_install () {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1 || {
    apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1
  }
}
free_port () {
  node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

if ! command -v podman >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1 \
  || ! command -v runc >/dev/null 2>&1 || ! command -v podman-compose >/dev/null 2>&1; then
  if ! apt_install podman buildah debootstrap runc podman-compose; then
    echo "test:image skipped: podman could not be installed here"
    exit 0
  fi
fi
step "podman"
export CONTAINERS_CONF="$root/scripts/image/containers.conf"
podman --version

scratch=$(mktemp -d)
container=oxs-image-test-$$
db=oxs_image_test_$$
project=oxs-image-test-$$
# compose.yaml has no default password: every podman-compose command below needs it, `down` included.
compose_password=$(node -e "console.log(require('crypto').randomBytes(16).toString('hex'))")
sql () { node -e '
  const pg = require("pg"); const c = new pg.Client({ connectionString: process.argv[1] })
  c.connect().then(() => c.query(process.argv[2])).then(() => c.end(),
    (e) => { console.error(e.message); process.exit(1) })
' "$PG_ADMIN_URL" "$1"; }
cleanup () {
  podman rm -f -t 0 "$container" >/dev/null 2>&1 || true
  podman rm -f -t 0 "$container-explorer" >/dev/null 2>&1 || true
  if [ -f "$scratch/compose-up.log" ]; then
    POSTGRES_PASSWORD=$compose_password podman-compose -p "$project" down -v >/dev/null 2>&1 || true
    podman network rm -f "${project}_default" >/dev/null 2>&1 || true
  fi
  sql "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$scratch"
}
trap cleanup EXIT

hash_of () { sha256sum | cut -c1-16; }

# Debian bookworm, minbase: the root of both stand-ins (and of the compose file's PostgreSQL image). Slimmed
# as the official debian:bookworm-slim is, so the stand-ins weigh what they stand in for: no docs but the
# copyrights, man pages, info or translations (44 MB of minbase), and the same dpkg and apt settings, so the
# packages installed on it later leave those out too, and no apt caches (147 MB in the PostgreSQL image).
base_hash=$(printf '%s\n' "$SUITE" minbase "$MIRROR" v2-slim | hash_of)
BASE=localhost/oxs-debian:$SUITE-$base_hash
step "base image $BASE"
if podman image exists "$BASE"; then
  echo "cached"
else
  debootstrap --variant=minbase "$SUITE" "$scratch/rootfs" "$MIRROR" >"$scratch/debootstrap.log" 2>&1 \
    || { tail -20 "$scratch/debootstrap.log"; fail "debootstrap $SUITE"; }
  rootfs=$scratch/rootfs
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/lib/apt/lists/*
  # The official image's /etc/dpkg/dpkg.cfg.d/docker and /etc/apt/apt.conf.d/docker-{clean,no-languages}.
  printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
    'path-exclude /usr/share/groff/*' 'path-exclude /usr/share/info/*' 'path-exclude /usr/share/linda/*' \
    'path-exclude /usr/share/lintian/*' 'path-exclude /usr/share/locale/*' 'path-exclude /usr/share/man/*' \
    >"$rootfs/etc/dpkg/dpkg.cfg.d/docker"
  clean='rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true'
  printf '%s\n' "DPkg::Post-Invoke { \"$clean\"; };" "APT::Update::Post-Invoke { \"$clean\"; };" \
    'Dir::Cache::pkgcache "";' 'Dir::Cache::srcpkgcache "";' >"$rootfs/etc/apt/apt.conf.d/docker-clean"
  echo 'Acquire::Languages "none";' >"$rootfs/etc/apt/apt.conf.d/docker-no-languages"
  find "$rootfs/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$rootfs"/usr/share/{groff,info,linda,lintian,locale,man}/*
  tar -C "$rootfs" -c . | podman import --change 'CMD ["/bin/bash"]' --change "LABEL $STAND_IN_LABEL=$OFFICIAL_DEBIAN" \
    - "$BASE" >/dev/null
  rm -rf "$rootfs"
fi

# The stand-in for node:20-bookworm-slim: the machine's Node and npm, and its extra CAs if any.
node_bin=$(readlink -f "$(command -v node)")
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
ca_file=${NODE_EXTRA_CA_CERTS:-}
node_hash=$( { echo "$BASE" "$STAND_IN_LABEL"; sha256sum "$node_bin" | cut -d' ' -f1; cat "$npm_dir/package.json";
  if [ -n "$ca_file" ] && [ -r "$ca_file" ]; then sha256sum <"$ca_file"; fi
  cat scripts/image/node-standin.Containerfile; } | hash_of)
NODE=localhost/oxs-node:20-$node_hash
step "node stand-in $NODE (tagged $OFFICIAL_NODE)"
if podman image exists "$NODE"; then
  echo "cached"
else
  mkdir -p "$scratch/node"
  cp "$node_bin" "$scratch/node/node"
  cp -a "$npm_dir" "$scratch/node/npm"
  : >"$scratch/node/extra-ca.pem"
  if [ -n "$ca_file" ] && [ -r "$ca_file" ]; then cp "$ca_file" "$scratch/node/extra-ca.pem"; fi
  podman build -q --pull=never --network host --build-arg "BASE=$BASE" -t "$NODE" \
    --label "$STAND_IN_LABEL=$OFFICIAL_NODE" \
    -f scripts/image/node-standin.Containerfile "$scratch/node" >/dev/null
  rm -rf "$scratch/node"
fi
# The stand-ins take the official names, but never from an image this script did not make (a real pull, or
# another project's): that one is used as it is, and the lines above only built the stand-in beside it.
# Ours carry $STAND_IN_LABEL; older runs' stand-ins are known by their localhost/oxs-* name.
stand_in () {
  local official=$1 image=$2
  if podman image exists "$official" \
    && [ "$(podman image inspect --format "{{index .Labels \"$STAND_IN_LABEL\"}}" "$official")" != "$official" ] \
    && ! podman image inspect --format '{{.RepoTags}}' "$official" | grep -q 'localhost/oxs-\(debian\|node\):'
  then
    echo "$official exists and is not this script's stand-in: built on it as it is"
    return
  fi
  podman tag "$image" "$official"
}
stand_in "$OFFICIAL_NODE" "$NODE"
# compose.yaml's PostgreSQL and PgBouncer images start from Debian's slim image; minbase stands in for it.
stand_in "$OFFICIAL_DEBIAN" "$BASE"

step "podman build (the project's Dockerfile)"
build_started=$SECONDS
# --jobs 2: the build stage and the production-dependencies stage depend on nothing of each other; each spends
# most of its time in its own npm ci, side by side on the two cores.
podman build --pull=never --network host --jobs 2 -t "$IMAGE" -f Dockerfile . >"$scratch/build.log" 2>&1 \
  || { tail -40 "$scratch/build.log"; fail "podman build"; }
echo "built in $((SECONDS - build_started)) s"

step "image contents"
user=$(podman image inspect --format '{{.Config.User}}' "$IMAGE")
[ -n "$user" ] && [ "$user" != root ] && [ "$user" != 0 ] || fail "the image runs as '${user:-root}'"
podman run --rm --network none "$IMAGE" sh -c '
  set -e
  [ "$(id -u)" != 0 ] || { echo "runs as root"; exit 1; }
  for dev in typescript tap @tapjs eslint drizzle-kit @graphql-codegen playwright-core postgraphile autocannon; do
    [ ! -e "node_modules/$dev" ] || { echo "dev dependency node_modules/$dev in the image"; exit 1; }
  done
  [ ! -e .git ] || { echo ".git in the image"; exit 1; }
  [ ! -e test ] && [ ! -e src ] && [ ! -e bench ] || { echo "sources or tests in the image"; exit 1; }
  tests=$(find /app -path /app/node_modules -prune -o \( -name "*.test.*" -o -name ".tap" \) -print | head -5)
  [ -z "$tests" ] || { echo "test files in the image: $tests"; exit 1; }
  [ -f dist/server.js ] && [ -f dist/cli/run.js ] || { echo "no dist/"; exit 1; }
' || fail "image contents"
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
size_mb=$((size / 1000000))
echo "user $user (uid $(podman run --rm --network none "$IMAGE" id -u)); no dev dependencies, .git or tests"
echo "image size: $size_mb MB (budget $SIZE_BUDGET_MB MB)"
[ "$size_mb" -le "$SIZE_BUDGET_MB" ] || fail "the image is $size_mb MB, over its budget of $SIZE_BUDGET_MB MB"

step "database $db on ${PG_ADMIN_URL%/*}"
sql "CREATE DATABASE $db" || fail "cannot create a database at $PG_ADMIN_URL"
database_url="${PG_ADMIN_URL%/*}/$db"
cli () { podman run --rm --network host -e DATABASE_URL="$database_url" "$IMAGE" node dist/cli/run.js "$@"; }
cli migrate
platform_key=$(cli credentials issue --kind platform-key --label test-image)

port=$(free_port)
metrics_token=$(node -e "console.log(require('crypto').randomBytes(24).toString('hex'))")
step "podman run on port $port"
podman run -d --name "$container" --network host -e DATABASE_URL="$database_url" -e PORT="$port" \
  -e METRICS_TOKEN="$metrics_token" -e SHUTDOWN_GRACE_MS=$(((GRACE_S - 5) * 1000)) "$IMAGE" >/dev/null
base="http://127.0.0.1:$port"
for _ in $(seq 1 120); do
  if curl -fsS "$base/health/ready" >/dev/null 2>&1; then break; fi
  [ "$(podman inspect --format '{{.State.Running}}' "$container")" = true ] \
    || { podman logs "$container" 2>&1 | tail -30; fail "the container exited during start-up"; }
  sleep 0.5
done
[ "$(podman exec "$container" cat /proc/1/comm)" = node ] || fail "node is not process 1 in the container"

# Each check: method, path, expected status, a JS condition on the parsed body `b`, then curl's arguments.
check () {
  local method=$1 path=$2 want=$3 cond=$4 code
  shift 4
  code=$(curl -sS -o "$scratch/body" -w '%{http_code}' -X "$method" "$base$path" "$@")
  [ "$code" = "$want" ] || { head -c 600 "$scratch/body"; echo; fail "$method $path answered $code, not $want"; }
  node -e '
    const b = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))
    if (!new Function("b", `return (${process.argv[2]})`)(b)) {
      console.error(JSON.stringify(b).slice(0, 600))
      process.exit(1)
    }
  ' "$scratch/body" "$cond" || fail "$method $path: the body fails ($cond)"
  echo "$method $path: $code"
}
json=(-H 'Content-Type: application/json')
check GET /health/ready 200 'b.status === "ready"'
check PUT /v2/platform/sellers 200 'b.error === false' -H "Authorization: Bearer $platform_key" "${json[@]}" \
  -d '[{"companyId": 101, "name": "Image Test Wholesale", "status": "ACTIVE", "takeRate": "0.02",
        "autoRejectEnabled": true, "stores": [{"id": 1001, "name": "North"}]}]'
token=$(cli credentials issue --seller 101 --kind access-token)
key=$(cli credentials issue --seller 101 --kind api-key)
check POST /v2/graphql 200 '!b.errors && b.data.orders.pageInfo.total === 0 && Array.isArray(b.data.orders.nodes)' \
  -H "Authorization: Bearer $token" "${json[@]}" \
  -d '{"query": "query ($input: OrderListInput) { orders(input: $input) { pageInfo { total } nodes { orderId } } }",
       "variables": {"input": {"page": 1, "limit": 2}}}'
check POST /v2/accounting/orders/update-status 200 \
  'b.error === false && b.statusCode === 200 && b.data.failed === 1 && b.data.errors[0].code === "ORDER_NOT_FOUND"' \
  -H "Authorization: Bearer $key" "${json[@]}" \
  -d '{"order_status": [{"Order_id": 999999, "Order_Status": "ORDER_ACCEPTED"}]}'
check PUT /v2/shipments/outstanding/sync-data 200 'b.error === false && b.statusCode === 200 && b.data.received === 1' \
  -H "x-api-key: $key" "${json[@]}" \
  -d '[{"retailerSyncId": "RET-1", "shopSyncId": "SHOP-1", "offerSyncId": "VAR-1", "outstandingQuantity": 12.5}]'
# The references sync runs its rows in a thread of its own (reference-engine.ts): started from the built .js.
check PUT /v2/references/sync-data 200 \
  'b.error === false && b.data.failed === 1 && b.data.errors[0].code === "RECORD_NOT_FOUND"' \
  -H "x-api-key: $key" "${json[@]}" -d '[{"type": "ITEM", "id": 999999, "syncId": "ITEM-1"}]'
code=$(curl -s -o /dev/null -w '%{http_code}' "$base/metrics")
[ "$code" != 200 ] || fail "/metrics answered without the token"
curl -fsS -H "Authorization: Bearer $metrics_token" "$base/metrics" >"$scratch/metrics" \
  || fail "/metrics with the token"
grep -q '^oxs_http_request_duration_seconds_count{.*route="/v2/graphql"' "$scratch/metrics" \
  || fail "/metrics has no request count for /v2/graphql"
echo "GET /metrics: 200 with the token ($code without), $(grep -c '^oxs_' "$scratch/metrics") oxs_ samples"

step "SIGTERM (podman stop -t $GRACE_S)"
stop_started=$(date +%s%N)
podman stop -t "$GRACE_S" "$container" >/dev/null
stop_ms=$((($(date +%s%N) - stop_started) / 1000000))
exit_code=$(podman inspect --format '{{.State.ExitCode}}' "$container")
[ "$exit_code" = 0 ] || { podman logs "$container" 2>&1 | tail -20; fail "exit code $exit_code on SIGTERM"; }
[ "$stop_ms" -lt $((GRACE_S * 1000)) ] || fail "took $stop_ms ms to stop, the grace period is $GRACE_S s"
# grep reads the whole log (no -q): with pipefail, grep -q leaving early can fail the pipeline with podman
# logs' SIGPIPE (it did once here, on the longer log below).
podman logs "$container" 2>&1 | grep '"msg":"shutdown complete"' >/dev/null || fail "no 'shutdown complete' in the log"
echo "exit 0 in $stop_ms ms as process 1 (grace $GRACE_S s)"

# What production leaves off, on the same image: the Dockerfile prunes node_modules, and these are the paths
# that read the most of it (the SDK's modules, swagger-ui's static files, the GraphiQL page's bundles).
# With tracing, the young generation docs/operate/observability.md recommends beside it (NODE_OPTIONS: node refuses to start on a
# flag it does not allow there, so a start proves the recommendation works in the image).
step "/docs, /graphiql and tracing on (EXPLORER_ENABLED, OTEL_EXPORTER_OTLP_ENDPOINT, NODE_OPTIONS)"
port=$(free_port)
podman run -d --name "$container-explorer" --network host -e DATABASE_URL="$database_url" -e PORT="$port" \
  -e EXPLORER_ENABLED=true -e OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$(free_port)" \
  -e NODE_OPTIONS=--max-semi-space-size=64 "$IMAGE" >/dev/null
base="http://127.0.0.1:$port"
for _ in $(seq 1 120); do
  if curl -fsS "$base/health/ready" >/dev/null 2>&1; then break; fi
  [ "$(podman inspect --format '{{.State.Running}}' "$container-explorer")" = true ] \
    || { podman logs "$container-explorer" 2>&1 | tail -30; fail "the container exited during start-up"; }
  sleep 0.5
done
for path in /docs/ /docs/static/swagger-ui-bundle.js /docs/static/swagger-ui.css /graphiql \
  /graphiql/assets/react.production.min.js /graphiql/assets/react-dom.production.min.js \
  /graphiql/assets/graphiql.min.js /graphiql/assets/graphiql.min.css; do
  code=$(curl -sS -o /dev/null -w '%{http_code}' "$base$path")
  [ "$code" = 200 ] || fail "GET $path answered $code with EXPLORER_ENABLED=true"
done
echo "/docs, its static files, /graphiql and its four assets: 200"
check POST /v2/graphql 200 '!b.errors && b.data.orders.pageInfo.total === 0' \
  -H "Authorization: Bearer $token" "${json[@]}" \
  -d '{"query": "{ orders(input: {page: 1, limit: 2}) { pageInfo { total } } }"}'
podman logs "$container-explorer" 2>&1 | grep '"msg":"traces exported over OTLP"' >/dev/null \
  || { podman logs "$container-explorer" 2>&1 | tail -20; fail "tracing did not start"; }
echo "tracing started"
podman rm -f -t 0 "$container-explorer" >/dev/null

step "compose.yaml: PostgreSQL, PgBouncer, two API instances, a worker (podman-compose -p $project)"
api_1_port=$(free_port)
api_2_port=$(free_port)
# The image just tested is the one compose.yaml names, so it is not built again.
podman tag "$IMAGE" localhost/order-exchange:latest
# No password, no stack: compose.yaml refuses rather than fall back to one written in it (unless a .env
# beside it sets one, as docs/operate/observability.md suggests). Logged where cleanup looks: were it to get as far as the
# dry run goes, it would have made the project's network and volume.
if [ ! -e .env ]; then
  if env -u POSTGRES_PASSWORD podman-compose -p "$project" --dry-run up -d >"$scratch/compose-up.log" 2>&1 \
    || ! grep -q 'POSTGRES_PASSWORD must be set' "$scratch/compose-up.log"; then
    tail -5 "$scratch/compose-up.log"
    fail "with no POSTGRES_PASSWORD, podman-compose did not refuse with compose.yaml's message"
  fi
  echo "no POSTGRES_PASSWORD: podman-compose refuses ('POSTGRES_PASSWORD must be set')"
fi
compose_started=$SECONDS
POSTGRES_PASSWORD=$compose_password API_1_PORT=$api_1_port API_2_PORT=$api_2_port \
  podman-compose -p "$project" up -d >"$scratch/compose-up.log" 2>&1 \
  || { tail -30 "$scratch/compose-up.log"; fail "podman-compose up"; }
for port in "$api_1_port" "$api_2_port"; do
  for _ in $(seq 1 180); do
    if curl -fsS "http://127.0.0.1:$port/health/ready" >/dev/null 2>&1; then break; fi
    sleep 0.5
  done
  if ! curl -fsS "http://127.0.0.1:$port/health/ready" >/dev/null 2>&1; then
    POSTGRES_PASSWORD=$compose_password podman-compose -p "$project" logs >"$scratch/compose.log" 2>&1
    tail -40 "$scratch/compose.log"
    fail "the API instance on port $port never became ready"
  fi
done
echo "up and ready in $((SECONDS - compose_started)) s"
in_api () { podman exec "${project}_api-1_1" node dist/cli/run.js "$@"; }
platform_key=$(in_api credentials issue --kind platform-key --label test-image-compose)
base="http://127.0.0.1:$api_1_port"
check PUT /v2/platform/sellers 200 'b.error === false' -H "Authorization: Bearer $platform_key" "${json[@]}" \
  -d '[{"companyId": 102, "name": "Compose Wholesale", "status": "ACTIVE", "takeRate": "0.02",
        "autoRejectEnabled": true, "stores": [{"id": 1002, "name": "South"}]}]'
token=$(in_api credentials issue --seller 102 --kind access-token)
key=$(in_api credentials issue --seller 102 --kind api-key)
check PUT /v2/shipments/outstanding/sync-data 200 'b.error === false && b.data.inserted === 1' \
  -H "x-api-key: $key" "${json[@]}" \
  -d '[{"retailerSyncId": "RET-2", "shopSyncId": null, "offerSyncId": "VAR-2", "outstandingQuantity": 3}]'
base="http://127.0.0.1:$api_2_port"
check POST /v2/graphql 200 '!b.errors && b.data.outstandingShipments.pageInfo.total === 1' \
  -H "Authorization: Bearer $token" "${json[@]}" \
  -d '{"query": "{ outstandingShipments(input: {page: 1, limit: 5}) { pageInfo { total } } }"}'
check POST /v2/accounting/orders/update-status 200 'b.error === false && b.data.errors[0].code === "ORDER_NOT_FOUND"' \
  -H "Authorization: Bearer $key" "${json[@]}" \
  -d '{"order_status": [{"Order_id": 999999, "Order_Status": "ORDER_ACCEPTED"}]}'
podman logs "${project}_worker_1" 2>&1 | grep '"msg":"effects worker started"' >/dev/null \
  || fail "the compose worker did not start"
podman stop -t "$GRACE_S" "${project}_api-1_1" "${project}_api-2_1" "${project}_worker_1" >/dev/null
for service in api-1 api-2 worker; do
  code=$(podman inspect --format '{{.State.ExitCode}}' "${project}_${service}_1")
  [ "$code" = 0 ] || fail "compose $service exited $code on SIGTERM"
done
echo "the two API instances and the worker exited 0 on SIGTERM"

step "done: image $size_mb MB (budget $SIZE_BUDGET_MB MB), $((SECONDS - started)) s in all"
