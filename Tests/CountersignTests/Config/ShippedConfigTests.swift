import Foundation
import XCTest
@testable import CountersignConfig

/// The files under conf/ load as documented.
final class ShippedConfigTests: XCTestCase {
    private let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private func text(_ relativePath: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(relativePath), encoding: .utf8)
    }

    func testDefaultConfigurationWorksAsShipped() throws {
        let path = repository.appendingPathComponent("conf/countersign.json5").path
        let config = try ConfigLoader.load(path: path, environment: [:])
        XCTAssertEqual(config.listeners.map(\.address), [ListenAddress(host: "127.0.0.1", port: 3128)])
        XCTAssertEqual(config.listeners[0].mode, .forward)
        XCTAssertEqual(config.admin?.address, ListenAddress(host: "127.0.0.1", port: 9901))
        XCTAssertEqual(config.unlistedHosts, .tunnel)
        XCTAssertTrue(config.hosts.isEmpty)
        XCTAssertEqual(config.interception?.caCertificatePath, repository.appendingPathComponent("certs/ca.pem").standardizedFileURL.path)
        XCTAssertEqual(config.interception?.caKeyPath, repository.appendingPathComponent("certs/ca.key").standardizedFileURL.path)
    }

    /// The SPEC's example, with the files and variables its secrets and certificates come from.
    func testSpecExampleLoads() throws {
        let fixture = ConfigFixture()
        for file in ["certs/internal-ca.pem", "certs/api.pem", "certs/client.p12", "certs/client.pem", "certs/client.key"] {
            fixture.write(file)
        }
        fixture.write("secrets/corp", "corp-password\n")
        fixture.write("secrets/api-token", "api-token-value\n")
        let environment = ["APP_PROXY_PASSWORD": "app-pw", "SVC_PASSWORD": "svc-pw", "IDP_SECRET": "idp-secret",
                           "APP_NT_HASH": "8846f7eaee8fb117ad06bdd830b7586c", "P12_PASSPHRASE": "p12-pass"]
        let config = try fixture.load(try text("conf/examples/full.json5"), environment: environment)

        XCTAssertEqual(config.listeners.count, 3)
        XCTAssertEqual(config.listeners[1].allow.map(\.description), ["10.1.0.0/16"])
        XCTAssertEqual(config.listeners[1].proxyAuth?.users["app"]?.string, "app-pw")
        XCTAssertEqual(config.listeners[2].mode, .gateway)
        XCTAssertEqual(config.listeners[2].upstream?.description, "https://api.example.com/")
        XCTAssertEqual(config.parentProxy?.url.authority, "proxy.corp:8080")
        XCTAssertEqual(config.parentProxy?.auth?.schemes, [.ntlm, .digest, .basic])
        XCTAssertEqual(Set(config.credentials.keys), ["svc", "corp", "legacy", "token", "idp", "mtls", "mtls2"])
        guard case .password("CORP\\svc", let corpPassword, "APPHOST")? = config.credentials["corp"] else {
            return XCTFail("corp credential")
        }
        XCTAssertEqual(corpPassword.string, "corp-password")
        guard case .token(let token)? = config.credentials["token"] else { return XCTFail("token credential") }
        XCTAssertEqual(token.string, "api-token-value")

        let host = try XCTUnwrap(config.hosts.lookup(host: "api.example.com", port: 443))
        XCTAssertTrue(host.upstreamTLS)
        XCTAssertEqual(host.trust.anchors, [fixture.directory + "/certs/internal-ca.pem"])
        XCTAssertTrue(host.trust.anchorsOnly)
        XCTAssertEqual(host.trust.pinning, .publicKey)
        XCTAssertEqual(host.trust.pins.count, 1)
        XCTAssertEqual(host.trust.pinnedCertificates, [fixture.directory + "/certs/api.pem"])
        XCTAssertEqual(host.trust.serverName, "api.example.com")
        XCTAssertEqual(host.identity, "mtls")
        XCTAssertEqual(host.auth.map(\.credential), ["svc", "token"])
        XCTAssertEqual(host.auth[0].realm, "admin")
        XCTAssertEqual(host.auth[0].schemes, [.digest])
        XCTAssertEqual(host.auth[1].schemes, [.bearer])
        XCTAssertEqual(config.limits.tunnelIdleTimeout, 600)
        XCTAssertEqual(config.stateDir, fixture.directory + "/state")
    }

    func testSpecExampleReportsEveryMissingSecretAtOnce() throws {
        let fixture = ConfigFixture()
        let found = fixture.errors(try text("conf/examples/full.json5"))
        let paths = Set(found.map(\.path.description))
        for expected in ["listen[1].proxy_auth.users.app.password_env", "credentials.svc.password_env",
                         "credentials.corp.password_file", "credentials.legacy.nt_hash_env", "credentials.token.token_file",
                         "credentials.idp.oauth2.client_secret_env", "credentials.mtls.pkcs12", "credentials.mtls2.certificate",
                         #"hosts."api.example.com".trust.anchors[0]"#, #"hosts."api.example.com".trust.pinned_certificates[0]"#] {
            XCTAssertTrue(paths.contains(expected), "no error at \(expected) in:\n\(ConfigErrors(found))")
        }
        XCTAssertTrue(found.allSatisfy { $0.position != nil }, "\(ConfigErrors(found))")
    }

    func testDigestExampleLoads() throws {
        let fixture = ConfigFixture()
        let config = try fixture.load(try text("conf/examples/digest-api.json5"), environment: ["API_PASSWORD": "pw"])
        XCTAssertEqual(config.unlistedHosts, .deny)
        let rule = try XCTUnwrap(config.hosts.lookup(host: "api.example.com", port: 443)?.auth.first)
        XCTAssertEqual(rule.schemes, [.digest])
        XCTAssertEqual(rule.persistence, .session)
        XCTAssertTrue(rule.preemptive)
    }

    func testSummaryNamesPoliciesButNoSecrets() throws {
        let fixture = ConfigFixture()
        fixture.write("certs/client.p12")
        let config = try fixture.load("""
        { \(minimalListen) \(minimalInterception) admin: { address: "127.0.0.1:9901" },
          credentials: { svc: { user: "svc", password_env: "PW" }, mtls: { pkcs12: "certs/client.p12", passphrase_env: "PP" } },
          hosts: { "*.example.com": { identity: "mtls", trust: { validate_domain: false, allow_invalid_certificates: true },
                                      auth: [{ credential: "svc", realm: "r", schemes: ["basic"] }] } } }
        """, environment: ["PW": "hunter2", "PP": "p12-secret"])
        let summary = config.summary()
        XCTAssertFalse(summary.contains("hunter2"))
        XCTAssertFalse(summary.contains("p12-secret"))
        for expected in ["127.0.0.1:3128 forward, clients 127.0.0.0/8 ::1/128", "admin: 127.0.0.1:9901",
                         "svc: password for svc from env PW", "mtls: PKCS#12 identity \(fixture.directory)/certs/client.p12, passphrase from env PP",
                         "*.example.com: intercept", "INVALID CERTIFICATES ALLOWED", "identity: mtls",
                         "auth: realm \"r\" -> svc (basic), persistence session, preemptive, max failures 1",
                         "limits: max_connections 10000"] {
            XCTAssertTrue(summary.contains(expected), "missing \"\(expected)\" in:\n\(summary)")
        }
    }
}
