/// The JSON Schema of `countersign.json5`, printed by `countersign schema` and committed as
/// `docs/countersign.schema.json`, so editors validate and complete the file. Draft-07,
/// the draft VS Code's JSON language service handles fully. A unit test walks every key the
/// decoder accepts and fails when one is missing here; keep this next to the decoder.
public enum ConfigurationJSONSchema {
    public static let id = "https://countersign.invalid/countersign.schema.json"

    public static var document: SchemaJSON {
        .object([
            ("$schema", .string("http://json-schema.org/draft-07/schema#")),
            ("$id", .string(id)),
            ("title", .string("Countersign configuration (countersign.json5)")),
            ("description", .string("An authenticating forward proxy. Reference: docs/configuration.md.")),
            ("type", .string("object")),
            ("properties", .object(topLevel)),
            ("required", .array([.string("listen")])),
            ("additionalProperties", .bool(false)),
            ("definitions", .object([("trust", trust), ("scheme", scheme)])),
        ])
    }

    private typealias S = SchemaBuilder

    private static let addressPattern = #"^(\[[0-9A-Fa-f:.]+\]|[^:\[\]]+):[0-9]{1,5}$"#
    private static let loopback: SchemaJSON = .array([.string("127.0.0.0/8"), .string("::1/128")])

    private static var topLevel: SchemaBuilder.Members {
        [
            ("listen", S.list("Where clients connect: forward-proxy and gateway listeners.", of: listener, minItems: 1)),
            ("admin", S.object("The admin listener: /healthz, /readyz, /metrics, /status, /status.json.", [
                ("address", S.text("HOST:PORT of the admin listener, e.g. \"127.0.0.1:9901\".", pattern: addressPattern)),
                ("allow", S.list("Clients allowed to reach the admin listener: address blocks (\"10.0.0.0/8\") or single addresses.",
                                 of: S.text("An address block or a single address."), default: loopback)),
            ], required: ["address"])),
            ("workers", S.integer("Event loops; 0 means one per processor. A change needs a restart.", minimum: 0, default: 0)),
            ("unlisted_hosts", S.text("Hosts without an entry under `hosts`: passed through untouched (\"tunnel\") or refused with 403 (\"deny\").",
                                      default: "tunnel", choices: ["tunnel", "deny"])),
            ("interception", S.object("The local CA that signs the certificates of intercepted hosts; created on first start when its files are missing.", [
                ("ca_certificate", S.text("The CA certificate clients must trust (PEM).", default: "certs/ca.pem")),
                ("ca_key", S.text("The CA private key (PEM, mode 0600).", default: "certs/ca.key")),
            ])),
            ("parent_proxy", parentProxy),
            ("state_dir", S.text("Directory for learned auth state of rules with persistence \"permanent\" (never a secret).", default: "state")),
            ("credentials", S.map("Named secrets and identities; auth rules and `identity` refer to them by name.", of: credential)),
            ("hosts", S.map("The upstreams Countersign authenticates to: \"host\", \"host:port\", \"*.suffix\" or an IP literal. The most specific entry wins.",
                            of: host)),
            ("limits", limits),
            ("log", S.object("Logging: JSON lines (or text) on stderr.", [
                ("level", S.text("Lowest level written.", default: "info", choices: ["debug", "info", "warn", "error"])),
                ("format", S.text("JSON lines or key=value text.", default: "json", choices: ["json", "text"])),
                ("access", S.boolean("One access line per exchange.", default: true)),
            ])),
            ("reload", S.object("Reloading without a signal.", [
                ("watch", S.boolean("Reload when the configuration file or any file it names changes (including Kubernetes' ..data symlink swap), as SIGHUP does.",
                                    default: true)),
            ])),
        ]
    }

    private static var listener: SchemaJSON {
        S.object("A listener.", [
            ("address", S.text("HOST:PORT to listen on: \"127.0.0.1:3128\", \"[::1]:3128\", \"0.0.0.0:3129\"; port 0 picks a free port.",
                               pattern: addressPattern)),
            ("mode", S.text("\"forward\": an HTTP_PROXY/HTTPS_PROXY endpoint. \"gateway\": origin-form requests all go to `upstream`.",
                            default: "forward", choices: ["forward", "gateway"])),
            ("upstream", S.text("Gateway listeners only: the one upstream, e.g. \"https://api.example.com\" (no path, no user info).",
                                pattern: "^https?://")),
            ("allow", S.list("Clients allowed to connect: address blocks (\"10.1.0.0/16\") or single addresses.",
                             of: S.text("An address block or a single address."), default: loopback)),
            ("proxy_auth", S.object("Forward listeners only: clients must send Basic Proxy-Authorization.", [
                ("users", S.map("The accepted users, by name.", of: S.object("A user's password.", S.secret("password", "the user's password")))),
                ("realm", S.text("Realm of the 407 challenge.", default: "countersign")),
            ], required: ["users"])),
        ], required: ["address"])
    }

    private static var parentProxy: SchemaJSON {
        S.object("A parent proxy that carries every upstream connection.", [
            ("url", S.text("\"http://proxy.corp:8080\", or \"https://…\" for TLS to the parent (no path, no user info).", pattern: "^https?://")),
            ("auth", S.object("How the parent's 407 challenges are answered.", [
                ("credential", S.text("A name under `credentials`.")),
                ("schemes", S.list("Allowed schemes in order of preference; default: every scheme the credential answers.",
                                   of: .object([("$ref", .string("#/definitions/scheme"))]))),
                ("max_failures", S.integer("Rejected answers before the final 407 goes to the client.", minimum: 1, default: 1)),
                ("allow_plaintext", S.boolean("Allow Basic (password-equivalent) answers to an http:// parent.", default: false)),
            ], required: ["credential"])),
            ("trust", S.reference("trust", "https:// parents only: how the parent's certificate is evaluated, as a host's.")),
            ("identity", S.text("https:// parents only: a PEM or PKCS#12 credential presented as a client certificate.")),
        ], required: ["url"])
    }

    private static var credential: SchemaJSON {
        S.object("A credential. Its kind follows from its keys: password, NT hash, token, value, oauth2, kerberos, PEM or PKCS#12 identity. Secrets come from *_env or *_file.",
            [("user", S.text("User name; \"DOMAIN\\\\user\" for NTLM."))]
            + S.secret("password", "the password")
            + S.secret("nt_hash", "the NT hash (32 hex digits: MD4 of the UTF-16LE password)")
            + [("workstation", S.text("Workstation name sent in NTLM messages."))]
            + S.secret("token", "the Bearer token")
            + S.secret("value", "a bare secret such as an API key, for inject and placeholders")
            + [("signing", S.object("A key RFC 9421 request signatures are made with (hosts.*.sign).", [
                   ("key_id", S.text("Sent as keyid; the name the verifier knows the key by.")),
               ] + S.secret("hmac_secret", "the HMAC-SHA256 shared secret (its raw bytes are the key)") + [
                   ("private_key", S.text("A PEM private key: Ed25519, ECDSA P-256/P-384 or RSA.")),
               ] + S.secret("passphrase", "the passphrase of private_key"), required: ["key_id"]))]
            + [("verifying", S.object("A key an origin's RFC 9421 response signatures must verify with (hosts.*.verify_responses).", [
                   ("key_id", S.text("The keyid the origin signs with; a signature naming another is not accepted.")),
               ] + S.secret("hmac_secret", "the HMAC-SHA256 shared secret") + [
                   ("public_key", S.text("A PEM public key: Ed25519, ECDSA P-256/P-384 or RSA.")),
               ], required: ["key_id"]))]
            + [("aws", S.object("AWS keys that sign with Signature V4 (hosts.*.sign with format aws-sigv4): static keys (with an optional session token), or web identity (role_arn + web_identity_token_file).",
                   S.secret("access_key_id", "the AWS access key id") + S.secret("secret_access_key", "the AWS secret access key")
                   + S.secret("session_token", "the session token of temporary keys") + [
                   ("role_arn", S.text("Web identity: the IAM role assumed with AssumeRoleWithWebIdentity.", pattern: "^arn:")),
                   ("web_identity_token_file", S.text("Web identity: the OIDC token file (watched: a rotated token brings new keys).")),
                   ("sts_endpoint", S.text("Web identity: the STS endpoint; https:// (http:// only to 127.0.0.1, ::1 or localhost).",
                                           default: "https://sts.amazonaws.com")),
                   ("role_session_name", S.text("Web identity: RoleSessionName (2 to 64 of letters, digits and _+=,.@-).", default: "countersign")),
                   ("duration", .object([("type", .array([.string("string"), .string("number")])),
                                         ("description", .string("Web identity: how long the temporary keys asked for last, 15m to 12h; default STS's (1h). A duration such as \"1h\" or a number of seconds.")),
                                         ("pattern", .string(#"^[0-9]+(\.[0-9]+)?(ms|s|m|h)$"#)), ("exclusiveMinimum", .integer(0))])),
               ]))]
            + [("oauth2", S.object("OAuth2 client credentials; answers bearer challenges with a fetched token.", [
                   ("token_url", S.text("The token endpoint; must be https://.", pattern: "^https://")),
                   ("client_id", S.text("The client id.")),
               ] + S.secret("client_secret", "the client secret") + [
                   ("scope", S.text("Requested scope.")),
                   ("auth", S.text("Where the client secret goes: an Authorization: Basic header or the form body.",
                                   default: "basic", choices: ["basic", "body"])),
               ], required: ["token_url", "client_id"])),
               ("kerberos", S.object("Kerberos for Negotiate: a keytab, a password or a credential cache.", [
                   ("principal", S.text("The client principal, e.g. \"svc@CORP.EXAMPLE\".")),
                   ("keytab_file", S.text("A keytab holding the principal's keys.")),
               ] + S.secret("password", "the principal's password") + [
                   ("ccache", S.text("A credential cache to take tickets from instead of a keytab or password.")),
                   ("krb5_conf", S.text("A krb5.conf to use instead of the system's.")),
               ], required: ["principal"])),
               ("certificate", S.text("PEM client certificate file (with private_key).")),
               ("private_key", S.text("PEM private key file of `certificate`.")),
               ("pkcs12", S.text("PKCS#12 file holding the client certificate and key.")),
              ]
            + S.secret("passphrase", "the passphrase of private_key or pkcs12"))
    }

    private static var host: SchemaJSON {
        S.object("How Countersign treats one upstream host.", [
            ("intercept", S.boolean("Terminate CONNECT with a certificate minted by the interception CA; false: blind tunnel.", default: true)),
            ("upstream_tls", S.boolean("Send plain http:// requests for this host upstream over TLS.", default: false)),
            ("http2", S.boolean("Offer HTTP/2 (ALPN h2) to intercepted clients and upstream.", default: true)),
            ("trust", S.reference("trust", "How the upstream's certificate is evaluated; default: system roots, name checked.")),
            ("identity", S.text("A PEM or PKCS#12 credential presented when the upstream asks for a client certificate.")),
            ("auth", S.list("Protection-space rules; the first whose realm matches answers the challenge.", of: authRule,
                            default: .array([]))),
            ("inject", S.list("Credentials set on every request to this host, replacing what the client sent under that name.",
                              of: injectRule, default: .array([]))),
            ("sign", S.object("RFC 9421 signatures, or AWS Signature V4, on every request to this host, made last (after auth answers and inject) and anew for each attempt.", [
                ("credential", S.text("A credential with signing (rfc9421) or aws (aws-sigv4).")),
                ("format", S.text("The signature format.", choices: ["rfc9421", "aws-sigv4"])),
                ("region", S.text("aws-sigv4: the region signed for; default from the host name, else the client's credential scope.")),
                ("service", S.text("aws-sigv4: the signing name (s3, execute-api, ...); default from the host name, else the client's credential scope.")),
                ("payload", S.text("aws-sigv4: how the body is covered; an aws-chunked body keeps its streaming mode whatever this says.",
                                   default: "signed", choices: ["signed", "unsigned", "client"])),
                ("components", S.list("Covered components: derived (@method, @authority, @path, @query, @target-uri, @scheme, @request-target, \"@query-param\";name=\"x\") and field names; a field the request lacks is left out.",
                                      of: S.text("A component identifier."))),
                ("content_digest", S.text("The RFC 9530 Content-Digest added to a request with a body (held whole to hash it).",
                                          default: "sha-256", choices: ["sha-256", "sha-512", "none"])),
                ("label", S.text("The Signature-Input / Signature member name.", default: "sig1")),
                ("expires_in", .object([("type", .array([.string("string"), .string("number")])),
                                        ("description", .string("How long after created the signature expires (the expires parameter); none when left out. A duration: \"500ms\", \"10s\", \"10m\", \"1h\" or a number of seconds.")),
                                        ("pattern", .string(#"^[0-9]+(\.[0-9]+)?(ms|s|m|h)$"#)), ("exclusiveMinimum", .integer(0))])),
                ("nonce", S.boolean("A fresh random nonce in every signature.", default: true)),
                ("tag", S.text("The tag parameter, for the verifier to select this signature by.")),
                ("algorithm", S.text("For an RSA key: which RSA algorithm (default rsa-pss-sha512).", choices: ["rsa-pss-sha512", "rsa-v1_5-sha256"])),
            ], required: ["credential", "format"])),
            ("verify_responses", S.object("Every response from this host must carry a valid RFC 9421 signature (and Content-Digest) before any of it reaches the client; else 502.", [
                ("credential", S.text("A credential with verifying.")),
                ("components", S.list("Components the signature must cover at least.", of: S.text("A component identifier."),
                                      default: .array([.string("@status"), .string("content-digest")]))),
                ("max_age", S.duration("How old the signature's created may be.", default: "5m")),
                ("content_digest", S.text("required: a response with content must carry a matching Content-Digest; if-present: one that is there must match.",
                                          default: "required", choices: ["required", "if-present"])),
            ], required: ["credential"])),
            ("placeholders", S.list("Credentials whose placeholders (countersign:NAME) are resolved toward this host; a placeholder for any other credential is refused with 403.",
                                    of: S.text("A credential name (password, token, value or OAuth2)."), default: .array([]))),
        ])
    }

    private static var injectRule: SchemaJSON {
        S.object("One injected credential: a header (with an optional prefix) or a query parameter.", [
            ("header", S.text("The header field to set, e.g. \"X-Api-Key\".")),
            ("query", S.text("The query parameter to set, e.g. \"api_key\".")),
            ("credential", S.text("A password, token, value or OAuth2 credential.")),
            ("prefix", S.text("Written before the secret in a header, e.g. \"Token \".")),
        ], required: ["credential"])
    }

    private static var authRule: SchemaJSON {
        S.object("An auth rule.", [
            ("credential", S.text("A name under `credentials`.")),
            ("schemes", S.list("Allowed schemes in order of preference; default: every scheme the credential answers.",
                               of: .object([("$ref", .string("#/definitions/scheme"))]))),
            ("realm", S.text("Only challenges with this realm; default: any realm.")),
            ("persistence", S.text("Remember what worked: not at all, until restart or reload, or in state_dir across restarts.",
                                   default: "session", choices: ["none", "session", "permanent"])),
            ("preemptive", S.boolean("Answer later requests in the same protection space without waiting for a challenge (default true unless persistence is \"none\").")),
            ("max_failures", S.integer("Rejected answers before the final 401 goes to the client and this protection space is no longer answered.",
                                       minimum: 1, default: 1)),
            ("allow_plaintext", S.boolean("Allow password-equivalent answers (Basic, Bearer) over an unencrypted upstream connection.",
                                          default: false)),
            ("spn", S.text("Negotiate: the service principal to ask a ticket for; default \"HTTP@host\".")),
        ], required: ["credential"])
    }

    private static var trust: SchemaJSON {
        S.object("Trust evaluation of an upstream's certificate chain.", [
            ("anchors", S.list("Trusted root certificates (PEM files); omitted: the system roots.", of: S.text("A PEM file."), minItems: 1)),
            ("anchors_only", S.boolean("Trust only `anchors`, not the system roots too (default true when anchors are given).")),
            ("pinning", S.text("Pinning mode.", default: "none", choices: ["none", "public-key", "certificate"])),
            ("pins", S.list("SPKI pins: \"sha256//\" and the base64 SHA-256 of a SubjectPublicKeyInfo; `countersign pin HOST` prints them.",
                            of: S.text("An SPKI pin.", pattern: #"^sha256//?[A-Za-z0-9+/]{43}=$"#), default: .array([]))),
            ("pinned_certificates", S.list("Pinned certificates (PEM files): their keys are pins (public-key), or they are the anchors and one must be on the verified path (certificate).",
                                           of: S.text("A PEM file."), default: .array([]))),
            ("validate_domain", S.boolean("The certificate must match server_name.", default: true)),
            ("allow_invalid_certificates", S.boolean("Skip the chain and name checks (labs only; needs pins when validate_domain is true).",
                                                     default: false)),
            ("server_name", S.text("SNI and the name validated; default: the request's host.")),
            ("min_tls_version", S.text("Lowest TLS version accepted.", default: "1.2", choices: ["1.2", "1.3"])),
            ("max_chain_depth", S.integer("Most intermediates between the leaf and the anchor of the verified path (self-issued ones not counted); omitted: no bound.",
                                          minimum: 0)),
            ("revocation", S.object("Revocation checks of the verified path; nothing is fetched over the network.", [
                ("crl_files", S.list("CRL files (PEM, one or more CRLs each, or DER), reloaded when they change; every certificate of the verified path whose issuer has a CRL here is checked, and a CRL past its nextUpdate fails closed.",
                                     of: S.text("A CRL file."), minItems: 1)),
                ("ocsp_stapling", S.text("Ask the upstream for a stapled OCSP response: \"prefer\" refuses a valid staple saying revoked, \"require\" also refuses a missing or invalid one.",
                                         default: "off", choices: ["off", "prefer", "require"])),
            ])),
        ])
    }

    private static var scheme: SchemaJSON {
        .object([("type", .string("string")),
                 ("description", .string("A challenge scheme; \"oauth2\" is another name for \"bearer\" answered by an OAuth2 credential.")),
                 ("enum", .array(["basic", "digest", "ntlm", "negotiate", "bearer", "oauth2"].map(SchemaJSON.string)))])
    }

    private static var limits: SchemaJSON {
        S.object("Resource limits and timeouts.", [
            ("max_connections", S.integer("Client connections at once.", minimum: 1, default: 10000)),
            ("max_header_bytes", S.integer("Largest request or response head (431 beyond).", minimum: 1024, default: 65536)),
            ("replay_body_bytes", S.integer("Request body kept for replay after a challenge.", minimum: 1, default: 1_048_576)),
            ("signed_body_bytes", S.integer("A body held whole to be digested and signed; larger ones get 413.", minimum: 1, default: 8_388_608)),
            ("held_bodies_bytes", S.integer("All bodies held for signing at once, process-wide; past it 503.", minimum: 1, default: 67_108_864)),
            ("connect_timeout", S.duration("Upstream TCP connect, then each TLS handshake from its start.", default: "10s")),
            ("header_timeout", S.duration("Absolute deadline for a complete head (or an intercepted client's TLS handshake), from its first byte.", default: "15s")),
            ("idle_timeout", S.duration("Idle keep-alive connection; also the longest silence within a request or response body.", default: "60s")),
            ("tunnel_idle_timeout", S.duration("Idle CONNECT tunnel or WebSocket.", default: "10m")),
            ("half_close_timeout", S.duration("Idle tunnel once one side has closed its half (HAProxy's client-fin/server-fin).", default: "5s")),
            ("drain_timeout", S.duration("Longest drain after SIGTERM before the remaining connections are closed.", default: "30s")),
            ("drain_quiet_period", S.duration("A drain ends once no client connection has been open and none arrived for this long.", default: "1s")),
            ("h2_max_concurrent_streams", S.integer("Streams an HTTP/2 client may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS).", minimum: 1, default: 100)),
        ])
    }
}
