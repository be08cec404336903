# Build stage: compile src/ to dist/ (npm ci runs the `prepare` build).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm ci --no-audit --no-fund

# Runtime: production dependencies and the compiled JavaScript only (no TypeScript at run time).
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY sql ./sql
COPY config ./config
ENTRYPOINT ["node", "bin/geo-sync.js"]
CMD ["schedule"]
