#!/bin/sh
# Builds one libFuzzer target and runs it.
#   fuzz/run.sh TARGET [SECONDS]     fuzz for SECONDS (default 60), new inputs to fuzz/.build/corpus/TARGET
#   fuzz/run.sh TARGET regress       run the committed corpus once (no mutation); fails on a crash
#   fuzz/run.sh TARGET build         only build fuzz/.build/TARGET
#   fuzz/run.sh list                 the targets
# Crashes are written to fuzz/artifacts/TARGET-*. To keep what a run found, merge it into the
# committed corpus (only inputs that add coverage):
#   fuzz/.build/TARGET -merge=1 fuzz/corpus/TARGET fuzz/.build/corpus/TARGET
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
src="$root/Sources/Countersign"
build="$here/.build"
export PATH="/opt/swift/usr/bin:$PATH"

targets="request-head response-head chunked challenge ntlm-challenge digest-challenge authentication-info oauth2-token json5-config structured-field signature-input hpack h2-connection"
target=${1:?"usage: fuzz/run.sh TARGET [SECONDS|regress|build]; targets: $targets"}
mode=${2:-60}
if [ "$target" = list ]; then echo "$targets"; exit 0; fi

grammar="$src/Auth/Grammar/TokenSyntax.swift $src/Auth/Grammar/FieldScanner.swift $src/Auth/Grammar/Challenge.swift
         $src/Auth/Grammar/ChallengeParser.swift $src/Auth/Grammar/AuthenticationInfo.swift"
# The sources each target compiles, as one module (the fuzzed code is instrumented with it).
case "$target" in
    request-head|response-head|chunked) sources="$src/HTTP/*.swift" ;;
    hpack|h2-connection) sources="$src/HTTP/*.swift $src/HTTP/HTTP2/*.swift" ;;  # the translation reads HTTP/1.1 framing
    challenge|authentication-info) sources="$grammar"; http=1 ;;
    digest-challenge) sources="$grammar $src/Auth/AuthError.swift $src/Auth/Digest/DigestChallenge.swift $src/Auth/Digest/DigestAlgorithm.swift
                      $src/Auth/Crypto/HashFunction.swift $src/Auth/Crypto/MessageDigest.swift
                      $src/Auth/Crypto/OpenSSLProviders.swift"; openssl=1; support=1; http=1 ;;
    ntlm-challenge) sources="$src/Auth/AuthError.swift $src/Auth/NTLM/NTLMChallengeMessage.swift $src/Auth/NTLM/NTLMBytes.swift
                             $src/Auth/NTLM/NTLMFlags.swift $src/Auth/NTLM/NTLMAVPairs.swift" ;;
    oauth2-token) sources="$src/Auth/Grammar/TokenSyntax.swift $src/Auth/AuthError.swift $src/Auth/OAuth2/OAuth2TokenResponse.swift
                           $src/Auth/OAuth2/OAuth2Token.swift $src/Auth/Answering/SecretValue.swift
                      $src/Auth/Bearer/BearerAnswer.swift $src/Auth/Grammar/FieldScanner.swift"; http=1 ;;
    json5-config) sources="$src/Config/*.swift $src/Config/*/*.swift"; openssl=1; support=1; http=1 ;;
    structured-field) sources="$src/Signing/StructuredFields/*.swift"; openssl=1; support=1; http=1 ;;
    signature-input) sources="$src/Signing/StructuredFields/*.swift $src/Signing/MessageSignatures/SignatureComponent.swift
                      $src/Signing/MessageSignatures/SignatureError.swift $src/Signing/MessageSignatures/SignatureParameters.swift
                      $src/Signing/MessageSignatures/SignatureBase.swift $src/Signing/MessageSignatures/SignableMessage.swift
                      $src/Signing/MessageSignatures/FormEncoding.swift $src/Signing/PercentEncoding.swift"; openssl=1; support=1; http=1 ;;
    *) echo "fuzz/run.sh: unknown target $target; targets: $targets" >&2; exit 2 ;;
esac

mkdir -p "$build/corpus/$target" "$here/artifacts" "$here/corpus/$target"
export LSAN_OPTIONS="suppressions=$here/lsan-suppressions.txt${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
binary="$build/$target"
# Rebuild only when a source is newer than the binary.
# shellcheck disable=SC2086
if [ ! -x "$binary" ] || [ -n "$(find $sources "$src/Support" "$src/Log" "$src/HTTP" "$root/Sources/COpenSSL" "$here/targets/$target.swift" "$0" -newer "$binary" 2>/dev/null)" ]; then
    includes=""
    links=""
    rm -f "$binary"
    if [ -n "${openssl:-}" ]; then
        # The digest code calls OpenSSL through the package's C module; give swiftc its module map.
        mkdir -p "$build/cmodule"
        printf 'module COpenSSL {\n    header "%s"\n    export *\n}\n' "$root/Sources/COpenSSL/include/COpenSSL.h" \
            > "$build/cmodule/module.modulemap"
        includes="-I $build/cmodule"
        # The module's C shims (macros Swift cannot call, the one-shot digests, keyed HMAC).
        mkdir -p "$build/cshims"
        rm -f "$build/cshims"/*.o "$build/cshims/libCOpenSSLShims.a"
        for shim in "$root"/Sources/COpenSSL/*.c; do
            clang -O2 -I "$root/Sources/COpenSSL/include" -c "$shim" -o "$build/cshims/$(basename "$shim" .c).o"
        done
        ar rcs "$build/cshims/libCOpenSSLShims.a" "$build/cshims"/*.o
        links="-L $build/cshims -lCOpenSSLShims -lssl -lcrypto"
    fi
    if [ -n "${support:-}" ]; then
        # Hex, Base64 and the lock come from the support module: build it first, uninstrumented.
        mkdir -p "$build/support"
        # shellcheck disable=SC2086
        swiftc -parse-as-library -O -module-name CountersignSupport -emit-module -emit-module-path "$build/support/CountersignSupport.swiftmodule" \
            -emit-library -static -o "$build/support/libCountersignSupport.a" $includes "$src"/Support/*.swift
        includes="$includes -I $build/support"
        links="-L $build/support -lCountersignSupport $links"
    fi
    if [ -n "${http:-}" ]; then
        # The auth grammar compares names with the HTTP module's ASCII helpers: built first, uninstrumented.
        mkdir -p "$build/http"
        # shellcheck disable=SC2086
        swiftc -parse-as-library -O -module-name CountersignHTTP -emit-module -emit-module-path "$build/http/CountersignHTTP.swiftmodule" \
            -emit-library -static -o "$build/http/libCountersignHTTP.a" "$src"/HTTP/*.swift
        includes="$includes -I $build/http"
        links="-L $build/http -lCountersignHTTP $links"
    fi
    if [ "$target" = json5-config ]; then
        # The configuration module imports the logging module: build that one first, uninstrumented.
        mkdir -p "$build/log"
        # shellcheck disable=SC2086
        swiftc -parse-as-library -O -module-name CountersignLog -emit-module -emit-module-path "$build/log/CountersignLog.swiftmodule" \
            -emit-library -static -o "$build/log/libCountersignLog.a" $includes "$src"/Log/*.swift
        includes="$includes -I $build/log"
        links="-L $build/log -lCountersignLog $links"
    fi
    extra="$includes $links"
    # shellcheck disable=SC2086
    swiftc -sanitize=fuzzer,address -parse-as-library -O -g -module-name Fuzzed $extra \
        $sources "$here/targets/$target.swift" -o "$binary" 2>&1 | grep -v "Cannot export local symbol" >&2 || true
    [ -x "$binary" ] || { echo "fuzz/run.sh: building $target failed" >&2; exit 1; }
fi

case "$mode" in
    build) exit 0 ;;
    regress)
        # Each committed input once; a crash, a leak or a timeout fails.
        exec "$binary" -runs=0 -max_len=8192 -timeout=10 -artifact_prefix="$here/artifacts/$target-" "$here/corpus/$target" ;;
    *)
        dict=""
        [ -f "$here/dicts/$target.dict" ] && dict="-dict=$here/dicts/$target.dict"
        # shellcheck disable=SC2086
        exec "$binary" -max_total_time="$mode" -max_len=4096 -timeout=5 -print_final_stats=1 $dict \
            -artifact_prefix="$here/artifacts/$target-" "$build/corpus/$target" "$here/corpus/$target" ;;
esac
