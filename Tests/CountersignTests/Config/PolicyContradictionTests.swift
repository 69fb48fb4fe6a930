import XCTest
@testable import CountersignConfig

/// Settings that are each valid but contradict each other.
final class PolicyContradictionTests: XCTestCase {
    let fixture = ConfigFixture()
    let pin = "sha256//r8udi/Mxd6pLOS73ElSfLb5bgwSMuZx5MVIjnTYGd+I="
    let environment = ["PW": "pw", "TOK": "tok"]
    let credentials = #"credentials: { svc: { user: "svc", password_env: "PW" }, tok: { token_env: "TOK" }, mtls: { pkcs12: "certs/c.p12" } },"#

    override func setUp() {
        fixture.write("certs/c.p12")
        fixture.write("certs/api.pem")
    }

    private func expectHostError(_ host: String, at path: String, containing fragment: String, line: UInt = #line) {
        fixture.expectError("{ \(minimalListen) \(minimalInterception) \(credentials) hosts: { \"api.example.com\": { \(host) } } }",
                            at: #"hosts."api.example.com"."# + path, containing: fragment, environment: environment, line: line)
    }

    func testAllowInvalidWithDomainValidationAndNoPins() {
        expectHostError("trust: { allow_invalid_certificates: true }", at: "trust.allow_invalid_certificates",
                        containing: "add pins, or set validate_domain: false")
    }

    func testAllowInvalidIsAcceptedWithAPinOrWithoutNameValidation() throws {
        for trust in ["allow_invalid_certificates: true, pinning: \"public-key\", pins: [\"\(pin)\"]",
                      "allow_invalid_certificates: true, validate_domain: false"] {
            let config = try fixture.load("{ \(minimalListen) hosts: { \"lab\": { intercept: false, trust: { \(trust) } } } }")
            XCTAssertTrue(try XCTUnwrap(config.hosts.lookup(host: "lab", port: 443)).trust.allowInvalidCertificates)
        }
    }

    func testPinsWithoutPinning() {
        expectHostError("trust: { pins: [\"\(pin)\"] }", at: "trust.pins", containing: "set pinning, or remove them")
        expectHostError("trust: { pinning: \"none\", pinned_certificates: [\"certs/api.pem\"] }", at: "trust.pinned_certificates",
                        containing: "pins take effect only with pinning")
    }

    func testPinningWithoutPins() {
        expectHostError("trust: { pinning: \"public-key\" }", at: "trust.pinning",
                        containing: "needs pins (sha256//...) or pinned_certificates")
        expectHostError("trust: { pinning: \"certificate\", pins: [\"\(pin)\"] }", at: "trust.pinning",
                        containing: "pinning \"certificate\" needs pinned_certificates")
        expectHostError("trust: { pinning: \"certificate\", pinned_certificates: [\"certs/api.pem\"], pins: [\"\(pin)\"] }",
                        at: "trust.pins", containing: "not used with pinning \"certificate\"")
    }

    func testPinsAreParsedAndBadPinsShowTheExpectedForm() throws {
        let config = try fixture.load("""
        { \(minimalListen) hosts: { "a": { intercept: false, trust: { pinning: "public-key",
            pins: ["\(pin)", "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="] } } } }
        """)
        let pins = try XCTUnwrap(config.hosts.lookup(host: "a", port: 443)).trust.pins
        XCTAssertEqual(pins.count, 2)
        XCTAssertEqual(pins[0].prefix(4), [0xAF, 0xCB, 0x9D, 0x8B])
        XCTAssertEqual(pins[1], Array(repeating: 0, count: 32))
        expectHostError("trust: { pinning: \"public-key\", pins: [\"\(pin)\", \"md5//abc\"] }", at: "trust.pins[1]",
                        containing: #"expected "sha256//" followed by the base64 of a 32-byte SHA-256"#)
        expectHostError("trust: { pinning: \"public-key\", pins: [\"sha256//AAAA\"] }", at: "trust.pins[0]",
                        containing: "decodes to 3 bytes, not 32")
    }

    func testAnchorsAndPinnedCertificatesMustExist() {
        expectHostError("trust: { anchors: [\"certs/none.pem\"] }", at: "trust.anchors[0]",
                        containing: "the file \(fixture.directory)/certs/none.pem does not exist")
        expectHostError("trust: { pinning: \"certificate\", pinned_certificates: [\"certs\"] }", at: "trust.pinned_certificates[0]",
                        containing: "is a directory")
        expectHostError("trust: { anchors_only: true }", at: "trust.anchors_only", containing: "anchors_only: true needs anchors")
    }

    func testTLSVersionAndServerName() {
        expectHostError("trust: { min_tls_version: \"1.1\" }", at: "trust.min_tls_version", containing: #"not one of "1.2", "1.3""#)
        expectHostError("trust: { min_tls_version: 1.3 }", at: "trust.min_tls_version", containing: #"write the version as a string"#)
        expectHostError("trust: { max_chain_depth: -1 }", at: "trust.max_chain_depth", containing: "counts intermediates")
        expectHostError("trust: { revocation: { crl_files: [] } }", at: "trust.revocation.crl_files", containing: "an empty list checks nothing")
        expectHostError("trust: { revocation: { ocsp_stapling: \"must\" } }", at: "trust.revocation.ocsp_stapling", containing: #"not one of "off", "prefer", "require""#)
        expectHostError("trust: { revocation: { ocsp_stapling: \"prefer\" }, allow_invalid_certificates: true, validate_domain: false }",
                        at: "trust.revocation", containing: "revocation needs a verified path")
        expectHostError("trust: { server_name: \"bad name\" }", at: "trust.server_name", containing: "is not a host name")
    }

    func testCredentialReferences() {
        expectHostError("auth: [{ credential: \"svx\" }]", at: "auth[0].credential",
                        containing: #"the credential "svx" is not defined under `credentials` (did you mean "svc"?)"#)
        expectHostError("identity: \"missing\"", at: "identity", containing: #""missing" is not defined"#)
        expectHostError("identity: \"svc\"", at: "identity", containing: #""svc" is a password credential, not an identity"#)
        expectHostError("auth: [{ credential: \"mtls\" }]", at: "auth[0].credential",
                        containing: "is a client identity (PKCS#12 identity); identities are presented with `identity`")
    }

    func testSchemesMustBeKnownAndAnswerable() {
        expectHostError("auth: [{ credential: \"svc\", schemes: [\"kerberos\"] }]", at: "auth[0].schemes[0]",
                        containing: #""kerberos" is not one of "basic", "digest", "ntlm", "negotiate", "bearer""#)
        expectHostError("auth: [{ credential: \"svc\", schemes: [\"negotiate\"] }]", at: "auth[0].schemes[0]",
                        containing: #"the credential "svc" (password) cannot answer negotiate; it answers "digest", "ntlm", "basic""#)
        expectHostError("auth: [{ credential: \"svc\", schemes: [\"bearer\"] }]", at: "auth[0].schemes[0]",
                        containing: #"the credential "svc" (password) cannot answer bearer; it answers "digest", "ntlm", "basic""#)
        expectHostError("auth: [{ credential: \"tok\", schemes: [\"ntlm\"] }]", at: "auth[0].schemes[0]",
                        containing: "cannot answer ntlm")
        expectHostError("auth: [{ credential: \"svc\", schemes: [\"basic\", \"basic\"] }]", at: "auth[0].schemes[1]",
                        containing: "listed twice")
        expectHostError("auth: [{ credential: \"svc\", schemes: [] }]", at: "auth[0].schemes", containing: "at least one scheme")
    }

    func testRuleSettings() {
        expectHostError("auth: [{ credential: \"svc\", persistence: \"none\", preemptive: true }]", at: "auth[0].preemptive",
                        containing: "persistence \"none\" remembers nothing")
        expectHostError("auth: [{ credential: \"svc\", max_failures: 0 }]", at: "auth[0].max_failures", containing: "at least one")
        expectHostError("auth: [{ schemes: [\"basic\"] }]", at: "auth[0]", containing: #"missing required key "credential""#)
    }

    func testARuleAfterACatchAllRuleIsUnreachable() {
        expectHostError("auth: [{ credential: \"svc\" }, { realm: \"admin\", credential: \"svc\" }]", at: "auth[1]",
                        containing: #"is never used: hosts."api.example.com".auth[0] has no realm and already answers its schemes"#)
    }

    func testDenyingEverything() {
        fixture.expectError("{ \(minimalListen) unlisted_hosts: \"deny\" }", at: "unlisted_hosts",
                            containing: "refuses every request")
    }

    func testPermanentPersistenceNeedsAUsableStateDir() throws {
        fixture.write("state-file", "not a directory")
        fixture.expectError("""
        { \(minimalListen) \(minimalInterception) \(credentials) state_dir: "state-file",
          hosts: { "api.example.com": { auth: [{ credential: "svc", persistence: "permanent" }] } } }
        """, at: #"hosts."api.example.com".auth[0].persistence"#, containing: "exists and is not a directory",
                            environment: environment)
        let config = try fixture.load("""
        { \(minimalListen) \(minimalInterception) \(credentials) state_dir: "state/new",
          hosts: { "api.example.com": { auth: [{ credential: "svc", persistence: "permanent" }] } } }
        """, environment: environment)
        XCTAssertEqual(config.stateDir, fixture.directory + "/state/new", "a missing state_dir under a writable directory is fine")
    }

    func testInterceptingHostsNeedTheCA() {
        fixture.expectError("{ \(minimalListen) hosts: { \"api.example.com\": {} } }", at: #"hosts."api.example.com""#,
                            containing: "no interception CA is configured")
    }

    func testListenerModes() {
        fixture.expectError("{ listen: [{ address: \"127.0.0.1:8080\", mode: \"gateway\" }] }", at: "listen[0]",
                            containing: "a gateway listener needs upstream")
        fixture.expectError("{ listen: [{ address: \"127.0.0.1:8080\", upstream: \"https://api.example.com\" }] }",
                            at: "listen[0].upstream", containing: #"add mode: "gateway" or remove upstream"#)
        fixture.expectError("{ listen: [{ address: \"127.0.0.1:8080\", mode: \"gateway\", upstream: \"https://api.example.com/v1\" }] }",
                            at: "listen[0].upstream", containing: "remove \"/v1\"")
        fixture.expectError("{ unlisted_hosts: \"deny\", hosts: { \"other.example\": { intercept: false } }, listen: [{ address: \"127.0.0.1:8080\", mode: \"gateway\", upstream: \"https://api.example.com\" }] }",
                            at: "listen[0].upstream", containing: "unlisted_hosts is \"deny\"")
        fixture.expectError("""
        { listen: [{ address: "127.0.0.1:8080", mode: "gateway", upstream: "https://api.example.com",
                     proxy_auth: { users: { app: { password_env: "X" } } } }] }
        """, at: "listen[0].proxy_auth", containing: "cannot answer 407")
    }

    func testProxyAuthUsers() throws {
        let config = try fixture.load("""
        { listen: [{ address: "0.0.0.0:3129", allow: ["10.1.0.0/16"], proxy_auth: { users: { app: { password_env: "APP" } } } }] }
        """, environment: ["APP": "pw"])
        XCTAssertEqual(config.listeners[0].proxyAuth?.users["app"]?.string, "pw")
        XCTAssertEqual(config.listeners[0].proxyAuth?.realm, "countersign")
        fixture.expectError("{ listen: [{ address: \"127.0.0.1:1\", proxy_auth: { users: { app: {} } } }] }",
                            at: "listen[0].proxy_auth.users.app", containing: "missing the password")
        fixture.expectError("{ listen: [{ address: \"127.0.0.1:1\", proxy_auth: { users: {} } }] }",
                            at: "listen[0].proxy_auth.users", containing: "at least one user")
    }

    func testDuplicateListenAddresses() {
        fixture.expectError("{ listen: [{ address: \"127.0.0.1:3128\" }, { address: \"127.0.0.1:3128\" }] }",
                            at: "listen[1].address", containing: "already used by listen[0]", atLine: 1)
        fixture.expectError("{ listen: [{ address: \"0.0.0.0:3128\" }, { address: \"127.0.0.1:3128\" }] }",
                            at: "listen[1].address", containing: "already used by listen[0] (0.0.0.0:3128)")
        fixture.expectError("{ listen: [{ address: \"127.0.0.1:3128\" }], admin: { address: \"127.0.0.1:3128\" } }",
                            at: "admin.address", containing: "already used by listen[0]")
        XCTAssertNoThrow(try fixture.load("{ listen: [{ address: \"127.0.0.1:0\" }, { address: \"127.0.0.1:0\" }] }"),
                         "port 0 picks a free port each time")
    }

    func testParentProxy() throws {
        let config = try fixture.load("""
        { \(minimalListen) \(credentials) parent_proxy: { url: "http://proxy.corp:8080", auth: { credential: "svc" } } }
        """, environment: environment)
        XCTAssertEqual(config.parentProxy?.url, EndpointURL(scheme: "http", host: "proxy.corp", port: 8080, path: "/"))
        XCTAssertEqual(config.parentProxy?.auth?.schemes, [.digest, .ntlm, .basic])
        fixture.expectError("{ \(minimalListen) parent_proxy: { url: \"http://proxy.corp:8080/x\" } }", at: "parent_proxy.url",
                            containing: "a proxy URL has no path")
        fixture.expectError("{ \(minimalListen) \(credentials) parent_proxy: { url: \"http://p:1\", auth: { credential: \"nope\" } } }",
                            at: "parent_proxy.auth.credential", containing: "is not defined", environment: environment)
    }

    /// The SPEC gives parent_proxy.auth max_failures with the auth rules' meaning.
    func testParentProxyAuthTakesMaxFailures() throws {
        XCTAssertEqual(try fixture.load("""
        { \(minimalListen) \(credentials) parent_proxy: { url: "http://p:1", auth: { credential: "svc" } } }
        """, environment: environment).parentProxy?.auth?.maxFailures, 1)
        XCTAssertEqual(try fixture.load("""
        { \(minimalListen) \(credentials) parent_proxy: { url: "http://p:1", auth: { credential: "svc", max_failures: 3 } } }
        """, environment: environment).parentProxy?.auth?.maxFailures, 3)
        fixture.expectError("{ \(minimalListen) \(credentials) parent_proxy: { url: \"http://p:1\", auth: { credential: \"svc\", max_failures: 0 } } }",
                            at: "parent_proxy.auth.max_failures", containing: "at least one answer", environment: environment)
    }

    func testBasicToAPlainParentNeedsAllowPlaintext() throws {
        fixture.expectError("{ \(minimalListen) \(credentials) parent_proxy: { url: \"http://p:1\", auth: { credential: \"svc\", schemes: [\"basic\"] } } }",
                            at: "parent_proxy.auth.allow_plaintext", containing: "set allow_plaintext: true", environment: environment)
        fixture.expectError("{ \(minimalListen) \(credentials) parent_proxy: { url: \"http://p:1\", auth: { credential: \"tok\", schemes: [\"bearer\"] } } }",
                            at: "parent_proxy.auth.allow_plaintext", containing: "use an https:// url", environment: environment)
        let allowed = try fixture.load("""
        { \(minimalListen) \(credentials) parent_proxy: { url: "http://p:1", auth: { credential: "svc", schemes: ["basic"], allow_plaintext: true } } }
        """, environment: environment)
        XCTAssertEqual(allowed.parentProxy?.auth?.allowPlaintext, true)
        // Digest and NTLM never reveal the password; TLS to the parent protects Basic; next to
        // them (listed, or by default) Basic is only withheld at run time, and `check` warns.
        for (url, schemes) in [("http://p:1", #"schemes: ["digest", "ntlm"]"#), ("https://p:1", #"schemes: ["basic"]"#), ("http://p:1", ""),
                               ("http://p:1", #"schemes: ["ntlm", "digest", "basic"]"#)] {
            let config = try fixture.load("""
            { \(minimalListen) \(credentials) parent_proxy: { url: "\(url)", auth: { credential: "svc", \(schemes) } } }
            """, environment: environment)
            XCTAssertEqual(config.parentProxy?.auth?.allowPlaintext, false)
            XCTAssertEqual(config.parentProxy?.auth?.withheld(overTLS: url.hasPrefix("https")),
                           url.hasPrefix("https") || schemes.contains("digest\", \"ntlm") ? [] : [.basic])
        }
    }

    func testParentTrustAndIdentityNeedAnHTTPSParent() throws {
        let config = try fixture.load("""
        { \(minimalListen) \(credentials) parent_proxy: { url: "https://proxy.corp:3129", trust: { anchors: ["certs/api.pem"] }, identity: "mtls" } }
        """, environment: environment)
        XCTAssertEqual(config.parentProxy?.usesTLS, true)
        XCTAssertEqual(config.parentProxy?.trust.anchors.count, 1)
        XCTAssertEqual(config.parentProxy?.trust.anchorsOnly, true)
        XCTAssertEqual(config.parentProxy?.identity, "mtls")
        fixture.expectError("{ \(minimalListen) parent_proxy: { url: \"http://p:1\", trust: { anchors: [\"certs/api.pem\"] } } }",
                            at: "parent_proxy.trust", containing: "write the url as \"https://p:1\"")
        fixture.expectError("{ \(minimalListen) \(credentials) parent_proxy: { url: \"http://p:1\", identity: \"mtls\" } }",
                            at: "parent_proxy.identity", containing: "needs TLS to the parent", environment: environment)
        fixture.expectError("{ \(minimalListen) \(credentials) parent_proxy: { url: \"https://p:1\", identity: \"svc\" } }",
                            at: "parent_proxy.identity", containing: "not an identity", environment: environment)
        fixture.expectError("{ \(minimalListen) parent_proxy: { url: \"https://p:1\", trust: { pinning: \"public-key\" } } }",
                            at: "parent_proxy.trust.pinning", containing: "needs pins")
    }

    /// A header one stage of the host writes cannot be injected too: an injected Authorization
    /// would switch the host's challenge answers off (the request then carries "the client's
    /// own" Authorization).
    func testInjectingAHeaderAnotherStageWritesIsRefused() {
        let apiKey = #"inject: [{ header: "Authorization", credential: "tok", prefix: "Token " }]"#
        expectHostError(#"intercept: false, auth: [{ credential: "svc" }], "# + apiKey, at: "inject",
                        containing: "injects Authorization (credential tok), which its auth rules (answering a 401) also writes")
    }

    /// The same header injected on a host with no stage of its own writing it is fine.
    func testInjectingAuthorizationWithoutAuthRulesIsAccepted() throws {
        let config = try fixture.load("{ \(minimalListen) \(credentials) hosts: { \"api.example.com\": { intercept: false, "
                                      + #"inject: [{ header: "Authorization", credential: "tok", prefix: "Token " }] } } }"#, environment: environment)
        XCTAssertEqual(try XCTUnwrap(config.hosts.lookup(host: "api.example.com", port: 443)).inject.count, 1)
    }
}
