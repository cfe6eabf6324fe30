#!/usr/bin/env bash
# Installs the system programs the tests need when they are missing: Debian's redis-server and chromium
# (Playwright's own browser download does not work everywhere). Safe to run repeatedly; does nothing
# when both are present. Needs root (or sudo) only when something is missing.
set -euo pipefail

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 && ! command -v google-chrome >/dev/null 2>&1; then
  missing+=(chromium fonts-liberation fonts-noto-cjk fonts-noto-color-emoji)
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "[system-deps] installing: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "[system-deps] need root to install ${missing[*]}; install them and run again" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "[system-deps] done"
