#!/bin/sh
# The configuration from the environment: every database on DB_HOST:DB_PORT, one user (DB_USER,
# DB_PASSWORD) that clients log in as and that PgBouncer logs in to the server with. PgBouncer 1.18 refuses
# a startup parameter it neither tracks nor ignores; extra_float_digits (psql, JDBC) is dropped, and a
# client's timeouts are refused rather than silently lost (they are set on the role instead).
set -eu
: "${DB_HOST:?DB_HOST must be set}" "${DB_USER:?DB_USER must be set}" "${DB_PASSWORD:?DB_PASSWORD must be set}"
dir=$(mktemp -d)
printf '"%s" "%s"\n' "$DB_USER" "$DB_PASSWORD" >"$dir/userlist.txt"
cat >"$dir/pgbouncer.ini" <<INI
[databases]
* = host=$DB_HOST port=${DB_PORT:-5432}

[pgbouncer]
listen_addr = 0.0.0.0
listen_port = 6432
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $dir/userlist.txt
pool_mode = transaction
max_client_conn = ${MAX_CLIENT_CONN:-500}
default_pool_size = ${DEFAULT_POOL_SIZE:-20}
ignore_startup_parameters = extra_float_digits,application_name
server_reset_query =
INI
exec pgbouncer "$dir/pgbouncer.ini"
