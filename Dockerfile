# syntax=docker/dockerfile:1
#
# One image for every Gantry service. The container command picks the service:
#   node dist/apps/api-gateway/src/main.js          (the default CMD)
#   node dist/apps/scheduler/src/main.js
#   node dist/apps/heartbeat-ingester/src/main.js
#   node dist/apps/reconciler/src/main.js
#   node dist/apps/node-agent/src/main.js
#   node dist/libs/persistence/src/cli/migrate.js    (one-shot: apply migrations to DATABASE_URL)
#   node dist/tools/infra/prepare-kafka.js           (one-shot: create Kafka topics on KAFKA_BROKERS)
#
# Build:  docker build -t gantry:dev .
#
# Only the files the build needs are copied (there is no .dockerignore, so `COPY . .` would drag in the
# host's node_modules, dist and .git).

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: install every dependency, compile with swc, then drop the dev dependencies -------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app

# Dependencies first, so a source change does not re-run `npm ci`.
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund

COPY tsconfig.json tsconfig.base.json .swcrc nx.json ./
COPY apps ./apps
COPY libs ./libs
COPY tools ./tools

RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# ---- runtime: node, production node_modules, compiled JavaScript; nothing else ---------------------
FROM ${NODE_IMAGE} AS runtime
WORKDIR /app

# python3 runs the node agent's spawn helper (vfork and exec instead of a fork of the whole agent per attempt,
# ADR 0032); bubblewrap builds each attempt's sandbox, with util-linux's setpriv (ADR 0033). The other
# services never start them.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 bubblewrap \
 && rm -rf /var/lib/apt/lists/*

# --max-semi-space-size: see SERVICE_NODE_FLAGS in libs/stack/src/service-process.ts (ADR 0010).
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=32 \
    GANTRY_HTTP_HOST=0.0.0.0 \
    GANTRY_HTTP_PORT=8080

# Files stay owned by root and are only read by the `node` user (uid 1000), so the image also runs
# with a read-only root filesystem.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist

USER node
EXPOSE 8080

# Node is PID 1: each service installs its own SIGTERM handler (Nest shutdown hooks) and exits on it.
CMD ["node", "dist/apps/api-gateway/src/main.js"]
