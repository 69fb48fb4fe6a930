#!/usr/bin/env bash
# Soak and faults (see bench/soak.py for what runs): `make soak` pushes a million requests
# through one release Countersign while injecting faults, and prints RSS, descriptors and
# upstream connections at start, every 100k requests and at the end.
#   SOAK_REQUESTS=1000000   requests to push (SOAK_REQUESTS=2000 is the quick mode)
#   SOAK_CLIENTS=4          load processes;  SOAK_WORKERS=2  proxy workers
#   SOAK_HUP_SECONDS=10     SIGHUP period;   SOAK_SAMPLE_EVERY=requests/10
#   COUNTERSIGN_BIN=.build/release/countersign   SOAK_KEEP_WORK=1 keeps the scratch directory
# Exits non-zero on any failed regular request, a fault answered wrongly, or a dead proxy.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export COUNTERSIGN_BIN=${COUNTERSIGN_BIN:-$here/../.build/release/countersign}
export SOAK_REQUESTS=${SOAK_REQUESTS:-1000000}
exec python3 "$here/soak.py"
