#!/bin/sh
# First start: a cluster in PGDATA whose superuser is POSTGRES_USER (password POSTGRES_PASSWORD, required
# from other hosts), and the database POSTGRES_DB. The service's sessions behind a transaction-pooling
# PgBouncer cannot send their timeouts, so they are set on the role (docs/operate/deployment.md, "Past one machine").
set -eu
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" -E UTF8 --locale=C \
    --auth-local=trust --auth-host=scram-sha-256 --no-instructions
  rm -f "$pwfile"
  echo 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start
  psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d postgres -q <<SQL
SELECT 'CREATE DATABASE "$POSTGRES_DB"' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$POSTGRES_DB')\gexec
ALTER ROLE "$POSTGRES_USER" SET statement_timeout = '15s';
ALTER ROLE "$POSTGRES_USER" SET lock_timeout = '5s';
ALTER ROLE "$POSTGRES_USER" SET idle_in_transaction_session_timeout = '60s';
SQL
  pg_ctl -D "$PGDATA" -m fast -w stop
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
