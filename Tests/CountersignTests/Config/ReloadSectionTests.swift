import XCTest
@testable import CountersignConfig

/// `reload` and the list of files a reload re-reads (what `reload.watch` watches), and the
/// partial load the CA commands use.
final class ReloadSectionTests: XCTestCase {
    func testWatchDefaultsToTrueAndCanBeTurnedOff() throws {
        let fixture = ConfigFixture()
        XCTAssertTrue(try fixture.load("{ \(minimalListen) }").reload.watch)
        XCTAssertTrue(try fixture.load("{ \(minimalListen) reload: {} }").reload.watch)
        XCTAssertFalse(try fixture.load("{ \(minimalListen) reload: { watch: false } }").reload.watch)
        fixture.expectError("{ \(minimalListen) reload: { watch: \"yes\" } }", at: "reload.watch", containing: "expected true or false")
        fixture.expectError("{ \(minimalListen) reload: { wacth: true } }", at: "reload.wacth", containing: "unknown key")
    }

    func testEveryFileTheConfigurationReadsIsNamed() throws {
        let fixture = ConfigFixture()
        fixture.write("secrets/pw", "p\n")
        fixture.write("certs/client.pem")
        fixture.write("certs/client.key")
        fixture.write("certs/root.pem")
        let config = try fixture.load("""
        { \(minimalListen)
          credentials: { svc: { user: "u", password_file: "secrets/pw" },
                         mtls: { certificate: "certs/client.pem", private_key: "certs/client.key" } },
          hosts: { "a.test": { intercept: false, identity: "mtls", trust: { anchors: ["certs/root.pem"] } } } }
        """)
        XCTAssertEqual(Set(config.namedFiles), Set(["secrets/pw", "certs/client.pem", "certs/client.key", "certs/root.pem"]
            .map { fixture.directory + "/" + $0 }))
    }

    func testAFailedLoadStillNamesItsFiles() {
        let fixture = ConfigFixture()
        do {
            _ = try fixture.load("{ \(minimalListen) credentials: { t: { token_file: \"later/token\" } } }")
            XCTFail("a missing secret file must fail the load")
        } catch let errors as ConfigErrors {
            XCTAssertEqual(errors.namedFiles, [fixture.directory + "/later/token"])
        } catch {
            XCTFail("unexpected \(error)")
        }
    }

    func testInterceptionSectionIgnoresSecretsAndKeepsInterceptedHosts() throws {
        let fixture = ConfigFixture()
        try """
        { \(minimalListen) \(minimalInterception)
          credentials: { svc: { user: "u", password_env: "UNSET_FOR_THIS_TEST" } },
          hosts: { "a.test": { auth: [{ credential: "svc" }] }, "b.test": { intercept: false }, "c.test": { intercept: true } } }
        """.write(toFile: fixture.configPath, atomically: true, encoding: .utf8)
        let section = try ConfigLoader.loadInterception(path: fixture.configPath)
        XCTAssertEqual(section.interceptedPatterns, ["a.test", "c.test"])
        XCTAssertEqual(section.interception.caCertificatePath, fixture.directory + "/certs/ca.pem")
        XCTAssertThrowsError(try ConfigLoader.load(path: fixture.configPath, environment: [:]), "the full load needs the secret")
    }
}
