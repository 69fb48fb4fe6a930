import XCTest
@testable import CountersignConfig

final class DefaultsTests: XCTestCase {
    func testMinimalFileGetsTheDocumentedDefaults() throws {
        let fixture = ConfigFixture()
        let config = try fixture.load("{ \(minimalListen) }")
        XCTAssertEqual(config.sourcePath, fixture.configPath)
        XCTAssertEqual(config.listeners.count, 1)
        let listener = config.listeners[0]
        XCTAssertEqual(listener.address, ListenAddress(host: "127.0.0.1", port: 3128))
        XCTAssertEqual(listener.mode, .forward)
        XCTAssertNil(listener.upstream)
        XCTAssertEqual(listener.allow.map(\.description), ["127.0.0.0/8", "::1/128"])
        XCTAssertNil(listener.proxyAuth)
        XCTAssertNil(config.admin)
        XCTAssertGreaterThan(config.workers, 0, "workers 0 resolves to the number of processors")
        XCTAssertEqual(config.unlistedHosts, .tunnel)
        XCTAssertNil(config.interception)
        XCTAssertNil(config.parentProxy)
        XCTAssertEqual(config.stateDir, fixture.directory + "/state")
        XCTAssertTrue(config.credentials.isEmpty)
        XCTAssertTrue(config.hosts.isEmpty)
        XCTAssertEqual(config.limits, Limits())
        XCTAssertEqual(config.limits.maxConnections, 10000)
        XCTAssertEqual(config.limits.maxHeaderBytes, 65536)
        XCTAssertEqual(config.limits.replayBodyBytes, 1048576)
        XCTAssertEqual(config.limits.connectTimeout, 10)
        XCTAssertEqual(config.limits.headerTimeout, 15)
        XCTAssertEqual(config.limits.idleTimeout, 60)
        XCTAssertEqual(config.limits.tunnelIdleTimeout, 600)
        XCTAssertEqual(config.limits.halfCloseTimeout, 5)
        XCTAssertEqual(config.limits.drainTimeout, 30)
        XCTAssertEqual(config.log.level, .info)
        XCTAssertEqual(config.log.format, .json)
        XCTAssertTrue(config.log.access)
    }

    func testHostTrustAndRuleDefaults() throws {
        let fixture = ConfigFixture()
        let config = try fixture.load("""
        { \(minimalListen) \(minimalInterception)
          credentials: { svc: { user: "svc", password_env: "PW" }, t: { token_env: "TOKEN" } },
          hosts: { "api.example.com": { auth: [{ credential: "svc" }, { credential: "t", persistence: "none" }] } } }
        """, environment: ["PW": "secret", "TOKEN": "tok"])
        let host = try XCTUnwrap(config.hosts.lookup(host: "api.example.com", port: 443))
        XCTAssertTrue(host.intercept)
        XCTAssertFalse(host.upstreamTLS)
        XCTAssertNil(host.identity)
        XCTAssertEqual(host.trust.anchors, [])
        XCTAssertFalse(host.trust.anchorsOnly)
        XCTAssertEqual(host.trust.pinning, PinningMode.none)
        XCTAssertTrue(host.trust.validateDomain)
        XCTAssertFalse(host.trust.allowInvalidCertificates)
        XCTAssertNil(host.trust.serverName)
        XCTAssertEqual(host.trust.minTLSVersion, .v1_2)
        let rule = host.auth[0]
        XCTAssertEqual(rule.schemes, [.digest, .ntlm, .basic], "default: every scheme a password answers")
        XCTAssertNil(rule.realm)
        XCTAssertEqual(rule.persistence, .session)
        XCTAssertTrue(rule.preemptive)
        XCTAssertEqual(rule.maxFailures, 1)
        XCTAssertFalse(rule.allowPlaintext)
        XCTAssertEqual(host.auth[1].schemes, [.bearer])
        XCTAssertFalse(host.auth[1].preemptive, "persistence none is never preemptive")
    }

    func testAnchorsOnlyDefaultsToTrueWhenAnchorsAreGiven() throws {
        let fixture = ConfigFixture()
        fixture.write("certs/internal.pem")
        let config = try fixture.load("""
        { \(minimalListen) hosts: { "a.example": { intercept: false, trust: { anchors: ["certs/internal.pem"] } },
                                    "b.example": { intercept: false, trust: { anchors: ["certs/internal.pem"], anchors_only: false } } } }
        """)
        let a = try XCTUnwrap(config.hosts.lookup(host: "a.example", port: 443))
        XCTAssertEqual(a.trust.anchors, [fixture.directory + "/certs/internal.pem"])
        XCTAssertTrue(a.trust.anchorsOnly)
        XCTAssertFalse(try XCTUnwrap(config.hosts.lookup(host: "b.example", port: 443)).trust.anchorsOnly)
    }

    func testInterceptionPathsDefaultAndResolveNextToTheFile() throws {
        let fixture = ConfigFixture()
        let config = try fixture.load("{ \(minimalListen) interception: {}, state_dir: \"/var/lib/countersign\" }")
        XCTAssertEqual(config.interception?.caCertificatePath, fixture.directory + "/certs/ca.pem")
        XCTAssertEqual(config.interception?.caKeyPath, fixture.directory + "/certs/ca.key")
        XCTAssertEqual(config.stateDir, "/var/lib/countersign")
    }

    func testExplicitValuesAreKept() throws {
        let fixture = ConfigFixture()
        let config = try fixture.load("""
        { listen: [{ address: "[::1]:3128", allow: ["::1", "10.0.0.0/8"] }], workers: 3, unlisted_hosts: "deny", hosts: { "a.example": { intercept: false } },
          limits: { max_connections: 5, connect_timeout: "500ms", idle_timeout: 2, tunnel_idle_timeout: "1h", half_close_timeout: "2s" },
          log: { level: "debug", format: "text", access: false } }
        """)
        XCTAssertEqual(config.listeners[0].address, ListenAddress(host: "::1", port: 3128))
        XCTAssertEqual(config.listeners[0].allow.map(\.description), ["::1/128", "10.0.0.0/8"])
        XCTAssertEqual(config.workers, 3)
        XCTAssertEqual(config.unlistedHosts, .deny)
        XCTAssertEqual(config.limits.maxConnections, 5)
        XCTAssertEqual(config.limits.connectTimeout, 0.5)
        XCTAssertEqual(config.limits.idleTimeout, 2)
        XCTAssertEqual(config.limits.tunnelIdleTimeout, 3600)
        XCTAssertEqual(config.limits.halfCloseTimeout, 2)
        XCTAssertEqual(config.limits.maxHeaderBytes, 65536)
        XCTAssertEqual(config.log.level, .debug)
        XCTAssertEqual(config.log.format, .text)
        XCTAssertFalse(config.log.access)
    }

    func testNullMeansNotSet() throws {
        let config = try ConfigFixture().load("{ \(minimalListen) admin: null, log: { level: null } }")
        XCTAssertNil(config.admin)
        XCTAssertEqual(config.log.level, .info)
    }

    func testAdminAllowDefaultsToLoopbackAndTakesCIDRs() throws {
        let loopbackOnly = try ConfigFixture().load("{ \(minimalListen) admin: { address: \"127.0.0.1:9901\" } }")
        XCTAssertEqual(loopbackOnly.admin?.allow.map(\.description), CIDR.loopback.map(\.description))
        let listed = try ConfigFixture().load("{ \(minimalListen) admin: { address: \"0.0.0.0:9901\", allow: [\"10.1.0.0/16\"] } }")
        XCTAssertEqual(listed.admin?.allow.map(\.description), ["10.1.0.0/16"])
        ConfigFixture().expectError("{ \(minimalListen) admin: { address: \"127.0.0.1:9901\", allow: [] } }",
                                    at: "admin.allow", containing: "refuses every client")
        ConfigFixture().expectError("{ \(minimalListen) admin: { address: \"127.0.0.1:9901\", allow: [\"everyone\"] } }",
                                    at: "admin.allow[0]", containing: "is not an address block")
    }

    func testConfigPathResolution() {
        XCTAssertEqual(ConfigLoader.resolvePath(cli: "/etc/cs.json5", environment: ["COUNTERSIGN_CONFIG": "/x"]), "/etc/cs.json5")
        XCTAssertEqual(ConfigLoader.resolvePath(cli: nil, environment: ["COUNTERSIGN_CONFIG": "/x.json5"]), "/x.json5")
        XCTAssertEqual(ConfigLoader.resolvePath(cli: nil, environment: ["COUNTERSIGN_CONFIG": ""]), "conf/countersign.json5")
        XCTAssertEqual(ConfigLoader.resolvePath(cli: nil, environment: [:], exists: { _ in false }), "conf/countersign.json5")
    }

    /// An installed package: no checkout configuration in the working directory, the one in /etc.
    func testInstalledConfigurationIsTheFallback() {
        let installed: (String) -> Bool = { $0 == "/etc/countersign/countersign.json5" }
        XCTAssertEqual(ConfigLoader.resolvePath(cli: nil, environment: [:], exists: installed), "/etc/countersign/countersign.json5")
        // A checkout's own file wins, and -c or $COUNTERSIGN_CONFIG win over both.
        XCTAssertEqual(ConfigLoader.resolvePath(cli: nil, environment: [:], exists: { _ in true }), "conf/countersign.json5")
        XCTAssertEqual(ConfigLoader.resolvePath(cli: nil, environment: ["COUNTERSIGN_CONFIG": "/x.json5"], exists: installed), "/x.json5")
        XCTAssertEqual(ConfigLoader.resolvePath(cli: "a.json5", environment: [:], exists: installed), "a.json5")
    }
}
