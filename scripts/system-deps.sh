#!/usr/bin/env bash
# Installs the system programs pagecast needs when they are missing: Debian's chromium (with fonts, CJK and
# colour emoji included; Playwright's own browser download does not work everywhere) and, for the tests,
# redis-server and haproxy (the load balancer of the compose scale profile, run by test/integration/balancer.test.ts).
# Does nothing when they are present. Needs root (or sudo) only when something is missing.
#
#   scripts/system-deps.sh                  chromium, redis-server and haproxy (npm test)
#   scripts/system-deps.sh --browser-only   chromium only (npm start)
#   --soft                                  warn instead of failing when nothing can be installed
set -euo pipefail

browser_only=0
soft=0
for arg in "$@"; do
  case "$arg" in
    --browser-only) browser_only=1 ;;
    --soft) soft=1 ;;
    *) echo "usage: $0 [--browser-only] [--soft]" >&2; exit 2 ;;
  esac
done

fail() {
  if [ "$soft" -eq 1 ]; then
    echo "[system-deps] warning: $*; screenshots and PDFs will not work until chromium is installed" >&2
    exit 0
  fi
  echo "[system-deps] $*" >&2
  exit 1
}

missing=()
if [ "$browser_only" -eq 0 ] && ! command -v redis-server >/dev/null 2>&1; then missing+=(redis-server); fi
if [ "$browser_only" -eq 0 ] && ! command -v haproxy >/dev/null 2>&1 && [ ! -x /usr/sbin/haproxy ]; then missing+=(haproxy); fi
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 && ! command -v google-chrome >/dev/null 2>&1; then
  missing+=(chromium fonts-liberation fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji)
fi

[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo"; else
    fail "need root to install ${missing[*]} (apt-get install ${missing[*]})"
  fi
fi
command -v apt-get >/dev/null 2>&1 || fail "no apt-get here: install ${missing[*]} by hand"

echo "[system-deps] installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || fail "apt-get update failed"
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || fail "apt-get install ${missing[*]} failed"
echo "[system-deps] done"
