#!/usr/bin/env bash
# Installs what the interop tier (Tests/interop) needs, and only what is missing, so it is
# safe to run again:
#   curl (the client under test), nginx (origin, HTTPS origin), openssl (self-signed certs),
#   squid and tinyproxy (stand-in proxies to validate the harness with PROXY_UNDER_TEST),
#   python3 with pytest (the runner), Apache httpd (mod_auth_digest), and the Python peers
#   httpbin + gunicorn (Basic, Digest, Bearer), pyspnego (the NTLM acceptor) and headless
#   Chromium (renders /status). The origin,
#   WebSocket echo and raw-socket helpers are written in the tier itself.
#   Packaging checks (test_schema.py, test_packaging.py): jsonschema + json5 (the config
#   against its JSON Schema), PyYAML (the Kubernetes example), systemd-analyze (the unit),
#   dpkg-deb (the package) and groff (the man page); skopeo (the OCI image archive).
# Debian's package scripts must not start the daemons they install: the tests start every
# peer themselves on loopback ports with their own config and stop it by PID.
set -euo pipefail

log() { printf 'install-test-deps: %s\n' "$*"; }

if [[ $(id -u) -ne 0 ]]; then
    SUDO=sudo
else
    SUDO=
fi

missing_debs=()
need_command() {   # need_command COMMAND PACKAGE
    command -v "$1" >/dev/null 2>&1 || missing_debs+=("$2")
}
need_command curl curl
need_command nginx nginx
need_command openssl openssl
need_command squid squid
need_command tinyproxy tinyproxy
need_command python3 python3
need_command pip3 python3-pip
# x509-limbo (Tests/limbo): the unit tests decompress the suite with xz.
need_command xz xz-utils
# Auth interop (test_auth_*.py): Apache httpd mod_auth_digest; htdigest/htpasswd.
need_command apache2 apache2
need_command htdigest apache2-utils
# The /status page test (test_status_page.py) renders it in headless Chromium.
need_command chromium chromium
# Packaging (test_packaging.py): systemd-analyze verifies the unit offline (systemd need not
# be PID 1); groff checks the man page; dpkg-deb builds the package; strace records the
# system calls the unit's filter must allow, and how test_auth_basic.py's state files are created.
need_command systemd-analyze systemd
need_command groff groff-base
need_command man man-db
need_command dpkg-deb dpkg
need_command strace strace
# The image (test_image.py): skopeo reads the OCI archive independently of our writer
# (digests, sizes, config), as `skopeo copy oci-archive:...` would before a push.
need_command skopeo skopeo
# Negotiate (Tests/CountersignTests/Auth/NegotiateGSSAPITests.swift): an MIT KDC created per test
# (kdb5_util, kadmin.local, krb5kdc on a loopback port), kinit/klist, and the GSSAPI library
# Countersign loads at run time.
need_command krb5kdc krb5-kdc
need_command kadmin.local krb5-admin-server
need_command kinit krb5-user
# HTTP/2 (test_http2.py): nghttp, many streams on one connection through interception.
need_command nghttp nghttp2-client
[[ -e /usr/lib/x86_64-linux-gnu/libgssapi_krb5.so.2 || -e /usr/lib/aarch64-linux-gnu/libgssapi_krb5.so.2 ]] || missing_debs+=(libgssapi-krb5-2)
# Negotiate against real peers (Tests/interop/test_auth_negotiate_peers.py): Apache's
# mod_auth_gssapi as the origin; Squid's negotiate_kerberos_auth helper ships in the squid package.
[[ -e /usr/lib/apache2/modules/mod_auth_gssapi.so ]] || missing_debs+=(libapache2-mod-auth-gssapi)
# The Negotiate acceptor of Tests/interop (harness/negotiate_origin.py) is python-gssapi, built
# from source by pip: it needs krb5-config (libkrb5-dev) and a C compiler.
if ! python3 -c 'import gssapi' >/dev/null 2>&1; then
    need_command krb5-config libkrb5-dev
    need_command gcc gcc
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

if python3 -c 'import pytest' >/dev/null 2>&1; then
    log "pytest: present"
else
    log "installing pytest"
    # Debian's system Python refuses pip installs outside a venv (PEP 668) unless told;
    # the pyenv Python used on the project machines accepts them plainly.
    python3 -m pip install -q --disable-pip-version-check pytest \
        || python3 -m pip install -q --disable-pip-version-check --break-system-packages pytest
fi

# Auth interop peers: httpbin under gunicorn (Basic, Digest, Bearer endpoints), pyspnego
# (the NTLM acceptor) and python-gssapi (the Negotiate acceptor). Each is installed only when its module cannot be imported.
# The schema and packaging checks: jsonschema + json5 (the configuration against its JSON
# Schema), PyYAML (the Kubernetes example), http-message-signatures (an RFC 9421 verifier
# nobody here wrote, for the signing tests), botocore (AWS's own SigV4 signer, which
# regenerates Tests/CountersignTests/Signing/aws-botocore/botocore-cases.json) and
# pyca/cryptography (the expired OCSP response of the revocation tests: openssl ocsp only
# makes current ones); moto (S3 and STS in server mode, for the AWS SigV4 tests), boto3 and
# the AWS CLI (the SDK and the CLI sent through the proxy with placeholder keys); for
# test_http2.py: h2 (the hostile HTTP/2 client), hypercorn (an h2-only origin) and grpcio
# (a gRPC client and server); tlslite-ng (a TLS 1.3 client whose psk_key_exchange_modes the
# resumption tests choose).
for module_and_package in httpbin:httpbin gunicorn:gunicorn spnego:pyspnego gssapi:gssapi \
        jsonschema:jsonschema json5:json5 yaml:pyyaml http_message_signatures:http-message-signatures botocore:botocore \
        cryptography:cryptography moto.server:moto[server] boto3:boto3 awscli:awscli h2:h2 hypercorn:hypercorn grpc:grpcio \
        tlslite:tlslite-ng; do
    module=${module_and_package%%:*}
    package=${module_and_package#*:}
    if python3 -c "import $module" >/dev/null 2>&1; then
        log "$package: present"
    else
        log "installing $package"
        python3 -m pip install -q --disable-pip-version-check "$package" \
            || python3 -m pip install -q --disable-pip-version-check --break-system-packages "$package"
    fi
done

log "done"
