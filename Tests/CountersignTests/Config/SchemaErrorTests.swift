import XCTest
@testable import CountersignConfig

/// Unknown keys, wrong types, missing keys and bad values, each named by key path and line.
final class SchemaErrorTests: XCTestCase {
    let fixture = ConfigFixture()

    func testUnknownKeyIsNamedWithASuggestionAndLine() {
        let error = fixture.expectError("{\n  \(minimalListen)\n  listn: [],\n}", at: "listn",
                                        containing: #"unknown key "listn" (did you mean "listen"?)"#, atLine: 3)
        XCTAssertEqual(error?.description, "\(fixture.configPath):3:3: listn: unknown key \"listn\" (did you mean \"listen\"?)")
    }

    func testUnknownNestedKeyHasAQuotedPath() {
        fixture.expectError("""
        { \(minimalListen) \(minimalInterception)
          hosts: { "api.example.com": { trust: { anchorsOnly: true } } } }
        """, at: #"hosts."api.example.com".trust.anchorsOnly"#, containing: #"did you mean "anchors_only"?"#, atLine: 2)
    }

    func testUnknownKeyWithoutNearMissListsTheAllowedKeys() {
        fixture.expectError("{ \(minimalListen) log: { colour: true } }", at: "log.colour",
                            containing: "allowed here: level, format, access")
    }

    func testWrongTypes() {
        fixture.expectError("{ \(minimalListen) workers: \"2\" }", at: "workers", containing: "expected a whole number, found a string")
        fixture.expectError("{ \(minimalListen) workers: 1.5 }", at: "workers", containing: "expected a whole number, found 1.5")
        fixture.expectError("{ listen: { address: \"127.0.0.1:1\" } }", at: "listen", containing: "expected an array")
        fixture.expectError("{ \(minimalListen) log: { access: \"yes\" } }", at: "log.access", containing: "expected true or false")
        fixture.expectError("[]", at: "(top level)", containing: "expected an object")
    }

    func testMissingRequiredKeys() {
        fixture.expectError("{ admin: { address: \"127.0.0.1:9901\" } }", at: "(top level)",
                            containing: #"missing required key "listen"; add listen: [{ address: "127.0.0.1:3128" }]"#)
        fixture.expectError("{ listen: [{ mode: \"forward\" }] }", at: "listen[0]", containing: #"missing required key "address""#)
        fixture.expectError("{ listen: [] }", at: "listen", containing: "at least one listener")
    }

    func testBadValuesSayWhatIsExpected() {
        fixture.expectError("{ listen: [{ address: \"127.0.0.1\" }] }", at: "listen[0].address", containing: "has no port")
        fixture.expectError("{ listen: [{ address: \"::1:3128\" }] }", at: "listen[0].address", containing: "put IPv6 addresses in brackets")
        fixture.expectError("{ listen: [{ address: \"127.0.0.1:70000\" }] }", at: "listen[0].address", containing: "ports are 0 to 65535")
        fixture.expectError("{ listen: [{ address: \"127.0.0.1:1\", allow: [\"10.1.2.0/16\"] }] }", at: "listen[0].allow[0]",
                            containing: #"did you mean "10.1.0.0/16"?"#)
        fixture.expectError("{ \(minimalListen) limits: { idle_timeout: \"10 minutes\" } }", at: "limits.idle_timeout",
                            containing: "not a duration")
        fixture.expectError("{ \(minimalListen) log: { level: \"warning\" } }", at: "log.level",
                            containing: #""warning" is not one of "debug", "info", "warn", "error" (did you mean "warn"?)"#)
        fixture.expectError("{ \(minimalListen) unlisted_hosts: \"block\" }", at: "unlisted_hosts", containing: #"not one of "tunnel", "deny""#)
        fixture.expectError("{ listen: [{ address: \"localhost:3128\", mode: \"reverse\" }] }", at: "listen[0].mode",
                            containing: #"not one of "forward", "gateway""#)
    }

    func testNumericLimits() {
        fixture.expectError("{ \(minimalListen) workers: -1 }", at: "workers", containing: "cannot be negative")
        fixture.expectError("{ \(minimalListen) limits: { max_connections: 0 } }", at: "limits.max_connections", containing: "at least 1")
        fixture.expectError("{ \(minimalListen) limits: { replay_body_bytes: -5 } }", at: "limits.replay_body_bytes", containing: "at least 1")
        fixture.expectError("{ \(minimalListen) limits: { drain_timeout: 0 } }", at: "limits.drain_timeout", containing: "longer than zero")
        fixture.expectError("{ \(minimalListen) limits: { half_close_timeout: 0 } }", at: "limits.half_close_timeout", containing: "longer than zero")
        fixture.expectError("{ \(minimalListen) limits: { half_close_timeout: \"soon\" } }", at: "limits.half_close_timeout", containing: "not a duration")
        fixture.expectError("{ \(minimalListen) limits: { max_header_bytes: 100 } }", at: "limits.max_header_bytes", containing: "1024")
    }

    func testEveryErrorIsCollectedAndPrintedOnePerLine() {
        let found = fixture.errors("""
        {
          listen: [{ address: "nope" }],
          workers: -2,
          log: { level: "loud" },
          extra: 1,
        }
        """)
        XCTAssertEqual(found.map(\.path.description), ["listen[0].address", "workers", "log.level", "extra"])
        XCTAssertEqual(found.map { $0.position?.line }, [2, 3, 4, 5])
        XCTAssertEqual(ConfigErrors(found).description.split(separator: "\n").count, 4)
    }

    func testSyntaxErrorsCarryTheFileAndPosition() {
        let found = fixture.errors("{\n  listen: [\n    { address: '127.0.0.1:3128' }\n    { address: '127.0.0.1:3129' },\n  ],\n}")
        XCTAssertEqual(found.count, 1)
        XCTAssertEqual(found.first?.position, SourcePosition(line: 4, column: 5))
        XCTAssertEqual(found.first?.description, "\(fixture.configPath):4:5: expected ',' or ']' after an array element, found '{'")
    }

    func testMissingConfigurationFile() {
        XCTAssertThrowsError(try ConfigLoader.load(path: fixture.directory + "/absent.json5", environment: [:])) { error in
            XCTAssertTrue("\(error)".contains("the configuration file does not exist; give another with -c FILE"), "\(error)")
        }
    }

    func testLoadingFromAFile() throws {
        fixture.write("countersign.json5", "{ \(minimalListen) }")
        let config = try ConfigLoader.load(path: fixture.configPath, environment: [:])
        XCTAssertEqual(config.listeners.first?.address.port, 3128)
    }

    func testBadHostPatterns() {
        fixture.expectError("{ \(minimalListen) hosts: { \"api.*.example.com\": {} } }", at: #"hosts."api.*.example.com""#,
                            containing: "only as the whole first label")
        fixture.expectError("{ \(minimalListen) hosts: { \"api.example.com:0\": {} } }", at: #"hosts."api.example.com:0""#,
                            containing: "bad port")
        fixture.expectError("{ \(minimalListen) \(minimalInterception) hosts: { \"API.example.com\": {}, \"api.example.com\": {} } }",
                            at: #"hosts."api.example.com""#, containing: #"names the same host as "API.example.com""#)
    }

    func testURLsRefuseCredentialsAndOtherSchemes() {
        let error = fixture.expectError(
            "{ listen: [{ address: \"127.0.0.1:8080\", mode: \"gateway\", upstream: \"https://bob:hunter2@api.example.com\" }] }",
            at: "listen[0].upstream", containing: "credentials belong in `credentials`")
        XCTAssertFalse(error?.description.contains("hunter2") ?? true, "the password must not be echoed")
        fixture.expectError("{ listen: [{ address: \"127.0.0.1:8080\", mode: \"gateway\", upstream: \"ftp://api.example.com\" }] }",
                            at: "listen[0].upstream", containing: "only http and https")
    }
}
