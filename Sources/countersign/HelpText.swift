enum HelpText {
    static let version = "countersign 0.1.0"

    /// Every command, for the did-you-mean of an unknown one and the completion scripts.
    static let commands = ["run", "check", "schema", "ca", "pin", "completion", "help"]

    static let main = """
    countersign — an authenticating forward proxy

    Usage:
      countersign [run] [-c FILE]          start the proxy (default command)
      countersign check [-c FILE] [--no-secrets]
                                           load and validate everything; print a summary; exit 0 or 2
                                           (--no-secrets: all but secret values, for CI)
      countersign check [-c FILE] --host NAME[:PORT] --chain FILE [--at TIME] [--ocsp-response FILE]
                                           judge a PEM chain (leaf first) with that host's trust policy,
                                           as the handshake would; exit 0 accepted, 1 refused, 2 usage
      countersign schema                   print the JSON Schema of the configuration
      countersign ca init [--dir DIR] [--force] [--unconstrained]
                                           create the interception CA (key file mode 0600)
      countersign ca show [--dir DIR]      print the CA certificate and how to make clients trust it
      countersign pin HOST[:PORT] [-c FILE] [--anchors FILE] [--server-name NAME]
                                           print the served chain with SPKI pins and a config snippet
      countersign completion bash|zsh|fish print a shell completion script
      countersign --version | --help | COMMAND --help

    The configuration is read from -c FILE, else $COUNTERSIGN_CONFIG, else conf/countersign.json5
    in the working directory, else /etc/countersign/countersign.json5.
    Exit codes: 0 success, 2 invalid configuration or usage, 1 any other failure.
    Reference: man countersign; /usr/share/doc/countersign (installed) or docs/ (source).
    """

    static let run = """
    Usage: countersign run [-c FILE]

    Starts the proxy with the configuration in FILE (default: $COUNTERSIGN_CONFIG, else
    conf/countersign.json5 in the working directory, else /etc/countersign/countersign.json5).
    Logs are JSON lines on stderr.
    SIGHUP reloads the configuration and every file it names; SIGTERM or SIGINT drains:
    /readyz turns 503, new connections are still served (Connection: close) until none is
    open for limits.drain_quiet_period, at most limits.drain_timeout; then exit 0.
    """

    static let check = """
    Usage: countersign check [-c FILE] [--online | --no-secrets]
           countersign check [-c FILE] --host NAME[:PORT] --chain FILE [--at TIME] [--ocsp-response FILE]

    Loads and validates the configuration and everything it names (files, keys, secrets,
    pins) and prints a summary. Exit 0 when valid, 2 with every problem listed when not.
    With --online, also asks the KDC for a Kerberos ticket for each service a kerberos
    credential answers (HTTP@host of its hosts entries, their spn, the parent proxy).
    With --no-secrets, validates everything but secret values: *_env variables need not be
    set, *_file secrets, private keys, PKCS#12 bundles and keytabs need not exist (their
    keys and paths are still checked), so CI can check a configuration without its secrets.

    With --host and --chain, judges the PEM chain in FILE (leaf first, as a server sends it)
    with the trust policy a request for NAME:PORT (port 443 by default) would use: the
    hosts entry host:port, else host, else the longest *.suffix, else the default policy.
    The evaluation is the one the proxy runs in the TLS handshake (anchors, pins against the
    verified path, name, expiry). It prints each check and the verdict; exit 0 accepted,
    1 refused, 2 bad usage or configuration. --at TIME evaluates at that time instead of now:
    RFC 3339 (2027-01-01T00:00:00Z) or unix seconds. The policy's CRLs apply; with its
    ocsp_stapling, --ocsp-response FILE is the DER OCSP response judged as if the server had
    stapled it (without it, as if the server stapled none).
    """

    static let schema = """
    Usage: countersign schema

    Prints the JSON Schema (draft-07) of the configuration file, the same as
    docs/countersign.schema.json (installed: /usr/share/countersign/countersign.schema.json).
    Editors use it to validate and complete countersign.json5: see "Editor support" in
    docs/configuration.md (installed under /usr/share/doc/countersign/docs).
    """
}
