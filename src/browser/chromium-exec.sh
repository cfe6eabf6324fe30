#!/bin/sh
# Starts the Chromium that PAGECAST_CHROMIUM names with the arguments given, except that every --disable-features
# switch among them is merged into one, which also lists PAGECAST_DISABLE_FEATURES. Chromium reads only the last
# such switch, and Playwright passes its own list: appending ours would silently drop Playwright's. The pool
# launches its browser through this file (chromium.ts, launchCommand); both variables are gone before Chromium
# starts, and `exec` keeps the process Playwright spawned, so its pid, process group and pipes are Chromium's.
set -eu
exe=${PAGECAST_CHROMIUM:?PAGECAST_CHROMIUM names no executable}
features=${PAGECAST_DISABLE_FEATURES:-}
unset PAGECAST_CHROMIUM PAGECAST_DISABLE_FEATURES
left=$#
while [ "$left" -gt 0 ]; do
  arg=$1
  shift
  left=$((left - 1))
  case $arg in
    --disable-features=*) features="${features:+$features,}${arg#--disable-features=}" ;;
    *) set -- "$@" "$arg" ;;
  esac
done
if [ -n "$features" ]; then
  set -- "$@" "--disable-features=$features"
fi
exec "$exe" "$@"
