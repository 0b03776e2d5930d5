#!/usr/bin/env bash
# Generated code must match its source: migrations (drizzle/) from src/db/schema.ts; GraphQL types
# (src/graphql/generated/, packages/client/src/generated/graphql.ts) from schema.graphql; the REST schema
# (schema/rest.json) and the client's REST types (packages/client/src/generated/rest.ts) from
# src/routes/rest-contract.ts; the OpenAPI document (schema/openapi.json) from the app's routes; the reference
# pages of docs/ (error codes, configuration, metrics, the CLI) from the texts tables, ConfigSchema, the metrics'
# registrations and the CLI's command table (scripts/generate-docs.ts). Regenerate, then fail if git sees any
# difference.
set -euo pipefail
cd "$(dirname "$0")/.."
npx drizzle-kit generate >/dev/null
npx graphql-codegen --config codegen.ts >/dev/null
npx tsx scripts/generate-rest.ts
npx tsx scripts/generate-openapi.ts
# It prints the pages it wrote: those are the paths to compare.
mapfile -t docs < <(npx tsx scripts/generate-docs.ts)
[ "${#docs[@]}" -gt 0 ] || { echo "scripts/generate-docs.ts wrote no page" >&2; exit 1; }
paths=(drizzle src/graphql/generated packages/client/src/generated schema/rest.json schema/openapi.json "${docs[@]}")
drift=$(git status --porcelain -- "${paths[@]}")
if [ -n "$drift" ]; then
  echo "Generated code is out of date with its source. Run 'npm run generate' and commit:" >&2
  echo "$drift" >&2
  git --no-pager diff --stat -- "${paths[@]}" >&2
  exit 1
fi
echo "generated code: no drift"
