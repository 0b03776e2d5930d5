#!/usr/bin/env bash
# Times `order-exchange seed --orders N` on a fresh database of a PostgreSQL server
# (bench/results/2026-11-25-seed.md). Run it on two trees (a worktree at the old commit with this tree's
# node_modules linked in) one after the other, and compare the ratio.
# usage: bench/seed/time-seed.sh TREE ORDERS DBNAME [SERVER_URL]   (SERVER_URL default postgres://postgres@127.0.0.1:5432)
set -euo pipefail
tree=$1; n=$2; db=$3; server=${4:-postgres://postgres@127.0.0.1:5432}
[[ $db =~ ^[a-z0-9_]+$ ]] || { echo "DBNAME: lower-case letters, digits and _" >&2; exit 2; }
psql -q "$server/postgres" -c "drop database if exists $db" -c "create database $db" >/dev/null
url="$server/$db"
cd "$tree"
DATABASE_URL=$url node bin/order-exchange.js migrate >/dev/null 2>&1
start=$(date +%s.%N)
DATABASE_URL=$url LOG_LEVEL=warn node bin/order-exchange.js seed --orders "$n" >"/tmp/seed-$db.log" 2>&1 \
  || { echo "seed failed, see /tmp/seed-$db.log" >&2; exit 1; }
end=$(date +%s.%N)
echo "$tree $n orders: $(echo "$end - $start" | bc) s"
