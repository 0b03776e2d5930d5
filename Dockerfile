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

FROM node:20-bookworm-slim
ENV NODE_ENV=production ORDER_EXCHANGE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/client/package.json packages/client/
COPY patches patches
# --omit=optional too: typescript is an optional peer of a runtime dependency (cosmiconfig), which npm
# would otherwise install as one; the other optional packages are platform binaries for the embedded
# PostgreSQL and tsx, neither of which runs here (DATABASE_URL is required, dist/ is compiled).
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist dist
COPY drizzle drizzle
COPY schema.graphql ./
USER node
EXPOSE 3000
# DATABASE_URL must be set (no embedded PostgreSQL in production). Migrations: node dist/cli/run.js migrate
CMD ["node", "--max-old-space-size=1024", "dist/server.js"]
