# Built and run in CI by npm run test:image (scripts/test-image.sh, podman): migrations and credentials
# through the CLI below, the endpoints, SIGTERM as process 1, no dev dependencies, a size budget.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/client/package.json packages/client/
COPY patches patches
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

# The production dependencies, installed and pruned in a stage of their own: a file deleted in a later layer
# would still weigh in the image, so only the pruned tree is copied into the last stage.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/client/package.json packages/client/
COPY patches patches
# --omit=optional too: typescript is an optional peer of a runtime dependency (cosmiconfig), which npm
# would otherwise install as one; the other optional packages are platform binaries for the embedded
# PostgreSQL and tsx, neither of which runs here (DATABASE_URL is required, dist/ is compiled).
# Then what Node never reads, about half of node_modules' bytes and 60 % of its files: source maps (the
# server runs without --enable-source-maps), type declarations and TypeScript sources, markdown, and the
# test, docs, example and benchmark folders at a package's root. Kept: licences, @fastify/swagger-ui's
# static/ (served as is at /docs) and the umd/ bundles GraphiQL's page is served from. When this was written
# no package's main or exports pointed into what goes, and the server (with /docs, /graphiql and tracing on),
# the worker and the CLI opened none of it; npm run test:image runs all three on this image.
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund \
 && find node_modules -type f \( -name '*.map' -o -name '*.ts' -o -name '*.mts' -o -name '*.cts' \
      -o -name '*.tsx' -o -name '*.md' -o -name '*.markdown' \) -not -path '*/@fastify/swagger-ui/static/*' -delete \
 && find node_modules -depth -mindepth 2 -type d \( -name test -o -name tests -o -name __tests__ -o -name docs \
      -o -name example -o -name examples -o -name benchmark -o -name benchmarks -o -name .github \) \
      -exec sh -c 'for d; do if [ -f "$d/../package.json" ]; then rm -r "$d"; fi; done' sh {} +

FROM node:20-bookworm-slim
ENV NODE_ENV=production ORDER_EXCHANGE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/client/package.json packages/client/
COPY --from=deps /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY drizzle drizzle
COPY schema.graphql ./
USER node
EXPOSE 3000
# DATABASE_URL must be set (no embedded PostgreSQL in production). Migrations: node dist/cli/run.js migrate
CMD ["node", "--max-old-space-size=1024", "dist/server.js"]
