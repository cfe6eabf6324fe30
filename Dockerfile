# pagecast: two stages. The build stage has the C++ toolchain that metascraper's native `re2` needs; the runtime
# stage has Node 24, Debian's Chromium and fonts (CJK and colour emoji included), and no compiler.
# Base pinned to a Node 24 LTS release on Debian bookworm; bump both stages together.
ARG NODE_IMAGE=node:24.11.1-bookworm-slim

FROM ${NODE_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
# Dev tools stay out. The image's Node is 24, so nothing is fetched for it, and the postinstall builds re2 for it
# once (a prebuilt binary when the build can reach it, else with the toolchain above).
RUN npm ci --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE}
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="pagecast" \
      org.opencontainers.image.description="Self-hosted web page data extraction service speaking the Microlink API" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="MIT AND GPL-3.0-only" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-liberation fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji \
      ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY package.json ./
COPY src ./src
# The fingerprint set of insights.technologies: data under its own licence (docs/bundled-data.md).
COPY data ./data
# The bundled filter engine for `adblock` (docs/browser.md#adblock).
COPY assets ./assets

ENV NODE_ENV=production \
    CHROMIUM_PATH=/usr/bin/chromium \
    STORAGE_DIR=/data/storage
RUN useradd --create-home --uid 10001 pagecast && mkdir -p /data/storage && chown -R pagecast /data
USER pagecast
VOLUME /data
EXPOSE 3000 3001

HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.FREE_PORT||3000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"

# The service process gets SIGTERM directly (tini forwards it), so it drains before it exits.
ENTRYPOINT ["tini", "--"]
CMD ["node", "src/server.ts"]
