# NOT TESTED: no container engine runs on the machines this project is built and tested on (README,
# "Operating in production"). It follows what scripts/check-build.sh does in CI: build, then run dist/.
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
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist dist
COPY drizzle drizzle
COPY schema.graphql ./
USER node
EXPOSE 3000
# DATABASE_URL must be set (no embedded PostgreSQL in production). Migrations: node dist/cli/run.js migrate
CMD ["node", "--max-old-space-size=1024", "dist/server.js"]
