# syntax=docker/dockerfile:1
# Image for both processes of the service (same image, different command):
#   api:    node dist/api/server.js   (run `node dist/db/migrate.js` first)
#   worker: node dist/worker/index.js
# See docker-compose.yml for the whole stack.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---------------------------------------------------------------- build
FROM ${NODE_IMAGE} AS build
WORKDIR /app

# Dependencies first, so that a source change does not reinstall them. The same install path as on the
# development machines and CI (scripts/install.sh): `npm ci` refuses this lock file (it lacks other platforms'
# optional @swc/core-* entries), so the script falls back to `npm install --no-save`, which installs the same
# exactly pinned versions without rewriting package.json or the lock.
COPY package.json package-lock.json ./
COPY scripts/install.sh ./scripts/install.sh
RUN bash scripts/install.sh --deps-only

# Only the sources tsc compiles (tsconfig.json "include"), never the host's
# node_modules, dist or .local folders.
COPY tsconfig.json ./
COPY api ./api
COPY domain ./domain
COPY workflows ./workflows
COPY activities ./activities
COPY db ./db
COPY common ./common
COPY worker ./worker
COPY test ./test
COPY bench ./bench
COPY scripts ./scripts

# tsc emits to dist/; then drop the dev dependencies (typescript, mocha, eslint...).
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && npm cache clean --force

# ---------------------------------------------------------------- runtime
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app

COPY --from=build --chown=node:node /app/package.json /app/package-lock.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist

# The official node image ships an unprivileged `node` user (uid 1000).
USER node
EXPOSE 3000
CMD ["node", "--enable-source-maps", "dist/api/server.js"]
