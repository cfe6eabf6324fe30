# pagecast: Node 24 on Debian bookworm with Debian's Chromium and fonts (CJK and colour emoji included).
FROM node:24-bookworm-slim

RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-liberation fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji \
      ca-certificates python3 make g++ tini \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
# The image's Node is already 24, so the bundled `node` devDependency is not needed at run time.
RUN npm ci --omit=dev --no-audit --no-fund \
 && apt-get purge -y python3 make g++ && apt-get autoremove -y

COPY src ./src

ENV NODE_ENV=production \
    CHROMIUM_PATH=/usr/bin/chromium \
    STORAGE_DIR=/data/storage
RUN useradd --create-home --uid 10001 pagecast && mkdir -p /data/storage && chown -R pagecast /data
USER pagecast
VOLUME /data
EXPOSE 3000 3001

HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.FREE_PORT||3000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"

ENTRYPOINT ["tini", "--"]
CMD ["node", "src/server.ts"]
