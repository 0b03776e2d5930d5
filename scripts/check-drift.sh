#!/usr/bin/env bash
# Generated code must match its source: migrations (drizzle/) from src/db/schema.ts, GraphQL types
# (src/graphql/generated/) from schema.graphql. Regenerate, then fail if git sees any difference.
set -euo pipefail
cd "$(dirname "$0")/.."
npx drizzle-kit generate >/dev/null
if [ -f codegen.ts ]; then npx graphql-codegen --config codegen.ts >/dev/null; fi
drift=$(git status --porcelain -- drizzle src/graphql/generated)
if [ -n "$drift" ]; then
  echo "Generated code is out of date with its source. Run 'npm run generate' and commit:" >&2
  echo "$drift" >&2
  git --no-pager diff --stat -- drizzle src/graphql/generated >&2
  exit 1
fi
echo "generated code: no drift"
