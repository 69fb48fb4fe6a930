#!/bin/sh
# Builds the challenge-parser fuzzer with libFuzzer and runs it.
#   fuzz/run.sh [SECONDS]      (default 60)
# Crashes are written to fuzz/artifacts/; new interesting inputs go to a scratch corpus. To keep
# what a run found, merge it into the committed corpus (only inputs that add coverage):
#   fuzz/.build/challenge-fuzzer -merge=1 fuzz/corpus/challenge fuzz/.build/corpus
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
seconds=${1:-60}
grammar="$root/Sources/Countersign/Auth/Grammar"
build="$here/.build"
mkdir -p "$build" "$here/artifacts" "$build/corpus"

swiftc -sanitize=fuzzer,address -parse-as-library -O -g \
    "$grammar/TokenSyntax.swift" "$grammar/FieldScanner.swift" "$grammar/Challenge.swift" \
    "$grammar/ChallengeParser.swift" "$grammar/AuthenticationInfo.swift" \
    "$here/ChallengeFuzzer.swift" -o "$build/challenge-fuzzer"

exec "$build/challenge-fuzzer" -max_total_time="$seconds" -max_len=4096 -timeout=5 \
    -artifact_prefix="$here/artifacts/" "$build/corpus" "$here/corpus/challenge"
