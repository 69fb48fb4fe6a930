#!/usr/bin/env bash
# Installs the system libraries Countersign builds against, only when missing.
set -euo pipefail
need=()
# publicsuffix: the Public Suffix List the trust policy reads at run time (a built-in list of
# the common suffixes stands in without it).
for pkg in libevent-dev libssl-dev pkg-config publicsuffix; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if ! command -v swift >/dev/null 2>&1; then
  if [ -x /opt/swift/usr/bin/swift ]; then
    echo "swift is at /opt/swift/usr/bin: add it to PATH" >&2
  else
    echo "Swift 6 toolchain not found: install it from swift.org and put it on PATH" >&2
  fi
  exit 1
fi
