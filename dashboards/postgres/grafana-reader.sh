#!/usr/bin/env bash
# Postgres init script (docker-entrypoint-initdb.d): a read-only role for Grafana's datasource.
# Tables are created later by `plumbline migrate` (and day partitions by the gateway), so the grant
# is made through default privileges of the owner role, which cover tables created from now on.
set -euo pipefail
reader=${GRAFANA_DB_USER:?GRAFANA_DB_USER names the role Grafana logs in as}
password=${GRAFANA_DB_PASSWORD:?GRAFANA_DB_PASSWORD is the password of that role}
psql --no-psqlrc -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v reader="$reader" -v password="$password" -v owner="$POSTGRES_USER" -v db="$POSTGRES_DB" <<'SQL'
CREATE ROLE :"reader" LOGIN PASSWORD :'password';
-- Dashboards only read, and a runaway query cannot hold the database.
ALTER ROLE :"reader" SET default_transaction_read_only = on;
ALTER ROLE :"reader" SET statement_timeout = '30s';
GRANT CONNECT ON DATABASE :"db" TO :"reader";
GRANT USAGE ON SCHEMA public TO :"reader";
GRANT SELECT ON ALL TABLES IN SCHEMA public TO :"reader";
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public GRANT SELECT ON TABLES TO :"reader";
SQL
