import XCTest
@testable import CountersignConfig

/// `credentials.<name>.kerberos` and a rule's `spn`: exactly one source of tickets, a principal
/// with its realm, an NTLM identity allowed alongside, one krb5.conf per process.
final class KerberosCredentialTests: XCTestCase {
    let fixture = ConfigFixture()

    private func load(_ credentials: String, hosts: String = "", environment: [String: String] = [:]) throws -> Configuration {
        try fixture.load("{ \(minimalListen) credentials: { \(credentials) }, \(hosts) }", environment: environment)
    }

    private func expectError(_ credentials: String, hosts: String = "", at path: String, containing fragment: String,
                             environment: [String: String] = [:], line: UInt = #line) {
        fixture.expectError("{ \(minimalListen) credentials: { \(credentials) }, \(hosts) }", at: path, containing: fragment,
                            environment: environment, line: line)
    }

    func testKeytabCredential() throws {
        fixture.write("svc.keytab", "keys")
        let config = try load(#"krb: { kerberos: { principal: "svc@CORP.EXAMPLE", keytab_file: "svc.keytab" } }"#)
        guard case .kerberos(let settings, nil)? = config.credentials["krb"], case .keytab(let path) = settings.source else {
            return XCTFail("not a keytab Kerberos credential")
        }
        XCTAssertEqual(settings.principal, "svc@CORP.EXAMPLE")
        XCTAssertEqual(path, "\(fixture.directory)/svc.keytab")
        XCTAssertEqual(config.credentials["krb"]?.answerableSchemes, [.negotiate])
        XCTAssertTrue(config.namedFiles.contains(path), "a keytab rotated on disk must trigger a reload")
    }

    func testPasswordAndCcacheSources() throws {
        fixture.write("krb5cc_app", "cache")
        let config = try load(#"""
            pw: { kerberos: { principal: "svc@CORP.EXAMPLE", password_env: "KRB_PW" } },
            cc: { kerberos: { principal: "svc@CORP.EXAMPLE", ccache: "FILE:krb5cc_app" } },
            """#, environment: ["KRB_PW": "s3cret"])
        guard case .kerberos(let pw, nil)? = config.credentials["pw"], case .password(let secret) = pw.source,
              case .kerberos(let cc, nil)? = config.credentials["cc"], case .ccache(let cache) = cc.source else {
            return XCTFail("not the expected sources")
        }
        XCTAssertEqual(secret.string, "s3cret")
        XCTAssertEqual(cache, "FILE:\(fixture.directory)/krb5cc_app")
        XCTAssertFalse(config.summary().contains("s3cret"))
    }

    func testAnNTLMIdentityAlongside() throws {
        fixture.write("svc.keytab", "keys")
        let config = try load(#"both: { user: "CORP\\svc", password_env: "PW", kerberos: { principal: "svc@CORP.EXAMPLE", keytab_file: "svc.keytab" } }"#,
                              environment: ["PW": "x"])
        guard case .kerberos(_, .password(let user, _, _)?)? = config.credentials["both"] else { return XCTFail("no NTLM identity alongside") }
        XCTAssertEqual(user, "CORP\\svc")
        XCTAssertEqual(config.credentials["both"]?.answerableSchemes, [.negotiate, .digest, .ntlm, .basic])
    }

    func testExactlyOneSource() {
        fixture.write("svc.keytab", "keys")
        expectError(#"k: { kerberos: { principal: "svc@R", keytab_file: "svc.keytab", ccache: "MEMORY:x" } }"#,
                    at: "credentials.k.kerberos.ccache", containing: "give exactly one of keytab_file, password_env / password_file, or ccache")
        expectError(#"k: { kerberos: { principal: "svc@R" } }"#, at: "credentials.k.kerberos", containing: "has no source of tickets; add keytab_file")
        expectError(#"k: { kerberos: { keytab_file: "svc.keytab" } }"#, at: "credentials.k.kerberos",
                    containing: #"missing required key "principal""#)
        expectError(#"k: { kerberos: { principal: "svc", keytab_file: "svc.keytab" } }"#, at: "credentials.k.kerberos.principal",
                    containing: #"write it as "name@REALM""#)
        expectError(#"k: { kerberos: { principal: "svc@R", keytab_file: "missing.keytab" } }"#, at: "credentials.k.kerberos.keytab_file",
                    containing: "does not exist")
        expectError(#"k: { kerberos: { principal: "svc@R", ccache: "FILE:/nonexistent/cc" } }"#, at: "credentials.k.kerberos.ccache",
                    containing: "fill it with kinit first")
        expectError(#"k: { kerberos: { principal: "svc@R", keytab_file: "svc.keytab", realm: "R" } }"#, at: "credentials.k.kerberos.realm",
                    containing: "unknown key")
    }

    func testKerberosMixesOnlyWithAnNTLMIdentity() {
        fixture.write("svc.keytab", "keys")
        expectError(#"k: { token_env: "T", kerberos: { principal: "svc@R", keytab_file: "svc.keytab" } }"#, at: "credentials.k",
                    containing: "mixes kerberos with token_env", environment: ["T": "x"])
        expectError(#"k: { user: "svc", kerberos: { principal: "svc@R", keytab_file: "svc.keytab" } }"#, at: "credentials.k.user",
                    containing: "belongs to the NTLM identity kept next to kerberos")
    }

    func testOneKrb5ConfPerProcess() {
        fixture.write("svc.keytab", "keys")
        fixture.write("a.conf", "[libdefaults]\n")
        fixture.write("b.conf", "[libdefaults]\n")
        expectError(#"""
            a: { kerberos: { principal: "svc@R", keytab_file: "svc.keytab", krb5_conf: "a.conf" } },
            b: { kerberos: { principal: "svc@R", keytab_file: "svc.keytab", krb5_conf: "b.conf" } },
            """#, at: "credentials.b.kerberos.krb5_conf", containing: "one process reads one krb5.conf")
    }

    func testRuleSPN() throws {
        fixture.write("svc.keytab", "keys")
        let credential = #"krb: { kerberos: { principal: "svc@R", keytab_file: "svc.keytab" } }, svc: { user: "u", password_env: "PW" }"#
        let config = try load(credential, hosts: #"hosts: { "api.example.com": { intercept: false, auth: [{ credential: "krb", spn: "HTTP/api-lb.example.com@R" }] } }"#,
                              environment: ["PW": "x"])
        XCTAssertEqual(config.hosts.entries.first?.auth.first?.spn, "HTTP/api-lb.example.com@R")
        expectError(credential, hosts: #"hosts: { "api.example.com": { intercept: false, auth: [{ credential: "krb", spn: "no host" }] } }"#,
                    at: #"hosts."api.example.com".auth[0].spn"#, containing: "is not a service name", environment: ["PW": "x"])
        expectError(credential, hosts: #"hosts: { "api.example.com": { intercept: false, auth: [{ credential: "svc", schemes: ["digest"], spn: "HTTP@x" }] } }"#,
                    at: #"hosts."api.example.com".auth[0].spn"#, containing: "answers no negotiate", environment: ["PW": "x"])
    }
}
