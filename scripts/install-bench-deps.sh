#!/usr/bin/env bash
# Installs what bench/run.sh needs, and only what is missing, so it is safe to run again:
#   wrk, hey, curl, tinyproxy, nginx, openssl, squid built with OpenSSL (squid-openssl: ssl_bump),
#   h2load, nghttpx and socat (the HTTP/2 measurement),
#   and mitmproxy (from PyPI, in its own virtualenv so its pinned dependencies cannot
#   disturb the Python packages other parts of the project install).
# Debian's package scripts must not start the daemons they install: bench/run.sh starts each
# peer itself on loopback ports with its own config and stops it by PID.
set -euo pipefail

MITM_VENV="${BENCH_MITM_VENV:-/opt/countersign-bench/mitmproxy}"

log() { printf 'install-bench-deps: %s\n' "$*"; }

if [[ $(id -u) -ne 0 ]]; then
    SUDO=sudo
else
    SUDO=
fi

missing_debs=()
need_command() {   # need_command COMMAND PACKAGE
    command -v "$1" >/dev/null 2>&1 || missing_debs+=("$2")
}
need_command wrk wrk
need_command hey hey
need_command curl curl
need_command tinyproxy tinyproxy
need_command nginx nginx-light
need_command openssl openssl
need_command taskset util-linux
need_command python3 python3
# HTTP/2 (bench h2): the load generator, the peer proxy, and the relay standing in for CONNECT.
need_command h2load nghttp2-client
need_command nghttpx nghttp2-proxy
need_command socat socat
# bench/instructions.sh: instructions per request under callgrind.
need_command valgrind valgrind

# The plain `squid` package is built with GnuTLS and cannot ssl_bump; squid-openssl can.
# Either one answers the plain-proxy measurements, so an OpenSSL build already present is kept.
if ! command -v squid >/dev/null 2>&1 || ! squid -v 2>/dev/null | grep -q -- '--with-openssl'; then
    missing_debs+=(squid-openssl)
fi

if ((${#missing_debs[@]})); then
    log "installing ${missing_debs[*]}"
    # Keep package scripts from starting daemons (exit 101 = "action forbidden").
    created_policy=
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
        printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
        $SUDO chmod 755 /usr/sbin/policy-rc.d
        created_policy=1
    fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing_debs[@]}"
    [[ -n $created_policy ]] && $SUDO rm -f /usr/sbin/policy-rc.d
else
    log "Debian packages: all present"
fi

if [[ -x $MITM_VENV/bin/mitmdump ]]; then
    log "mitmproxy: present in $MITM_VENV"
else
    log "installing mitmproxy into $MITM_VENV"
    $SUDO mkdir -p "$(dirname "$MITM_VENV")"
    $SUDO python3 -m venv "$MITM_VENV"
    $SUDO "$MITM_VENV/bin/pip" install -q --disable-pip-version-check mitmproxy
fi

log "done"
