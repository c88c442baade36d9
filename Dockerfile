# syntax=docker/dockerfile:1
# Participant registry image: one image for every process; SERVICES picks what a container runs.
#   docker build -t registry/participant-registry:0.1.0 .
# Stages: build (compile TypeScript), prod-deps (runtime node_modules, better-sqlite3 built
# natively), runtime (no compiler, no devDependencies, non-root). docs/operations.md.

# ---- build: devDependencies + tsc -> dist/, Vite -> dist/console (the web console) -----
FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 falls back to node-gyp when its prebuilt binary cannot be downloaded.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# --ignore-scripts: the package's own `prepare` runs tsc, and the sources are not here yet.
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm rebuild better-sqlite3
COPY . .
RUN npm run build \
 && npm run build:console \
 && mkdir -p seed

# ---- prod-deps: only what `npm start` needs --------------------------------------------
FROM node:20-bookworm-slim AS prod-deps
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# `prepare` would run tsc (a devDependency, absent here): skip lifecycle scripts, then build
# the one native dependency explicitly.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm rebuild better-sqlite3 \
 && node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()" \
 && npm cache clean --force

# ---- runtime ------------------------------------------------------------------------------
FROM node:20-bookworm-slim AS runtime
LABEL org.opencontainers.image.title="participant-registry" \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.description="National e-invoicing participant registry (Moleculer)"
ENV NODE_ENV=production PORT=3000 DATA_DIR=/data
WORKDIR /app
COPY --from=prod-deps --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/package.json ./package.json
COPY --from=build --chown=node:node /app/dist ./dist
COPY --from=build --chown=node:node /app/seed ./seed
RUN mkdir -p /data && chown node:node /data
# The embedded store (SQLite, one file per service) when MONGO_URI is not set.
VOLUME ["/data"]
# uid 1000 (the image's `node` user); Kubernetes sets runAsUser: 1000 to match.
USER node
EXPOSE 3000
# No curl in the slim image: node asks the liveness endpoint itself.
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "const r = require('http').get({ host: '127.0.0.1', port: process.env.PORT || 3000, path: '/health/live', timeout: 2500 }, (s) => process.exit(s.statusCode === 200 ? 0 : 1)); r.on('error', () => process.exit(1)); r.on('timeout', () => { r.destroy(); process.exit(1); });"]
# Node itself is PID 1 and receives SIGTERM: server.ts drains and leaves the cluster.
CMD ["node", "dist/server.js"]
