# geo-sync runs its TypeScript sources through tsx: no build step, same as a checkout.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
COPY sql ./sql
COPY config ./config
ENV NODE_ENV=production
ENTRYPOINT ["node", "bin/geo-sync.js"]
CMD ["schedule"]
