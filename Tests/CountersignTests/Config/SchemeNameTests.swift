import XCTest
@testable import CountersignConfig

/// Scheme names are the challenges' (SPEC, the auth-rule paragraph): an OAuth2 credential
/// answers `bearer` challenges, and "oauth2" stays accepted as another name for bearer.
final class SchemeNameTests: XCTestCase {
    let fixture = ConfigFixture()
    let environment = ["IDP": "cs", "PW": "pw"]
    let credentials = """
    credentials: { idp: { oauth2: { token_url: "https://idp.example.com/t", client_id: "app", client_secret_env: "IDP" } },
                   svc: { user: "svc", password_env: "PW" } },
    """

    private func config(rule: String, parent: String = "") throws -> Configuration {
        try fixture.load("{ \(minimalListen) \(credentials) \(parent) hosts: { \"api.example.com\": { intercept: false, auth: [\(rule)] } } }",
                         environment: environment)
    }

    private func schemes(_ rule: String) throws -> [AuthScheme] {
        try XCTUnwrap(config(rule: rule).hosts.lookup(host: "api.example.com", port: 443)).auth[0].schemes
    }

    func testOAuth2CredentialAnswersBearerByNameAliasOrDefault() throws {
        XCTAssertEqual(try schemes(#"{ credential: "idp", schemes: ["bearer"] }"#), [.bearer])
        XCTAssertEqual(try schemes(#"{ credential: "idp", schemes: ["oauth2"] }"#), [.bearer], "oauth2 is another name for bearer")
        XCTAssertEqual(try schemes(#"{ credential: "idp" }"#), [.bearer], "the default: what the credential answers")
    }

    func testSummaryNamesTheChallengeScheme() throws {
        let summary = try config(rule: #"{ credential: "idp", schemes: ["oauth2"] }"#).summary()
        XCTAssertTrue(summary.contains("-> idp (bearer)"), summary)
        XCTAssertFalse(summary.contains("(oauth2)"), summary)
    }

    func testAliasAndNameTogetherAreListedTwice() {
        fixture.expectError("{ \(minimalListen) \(credentials) hosts: { \"api.example.com\": { intercept: false, auth: [{ credential: \"idp\", schemes: [\"bearer\", \"oauth2\"] }] } } }",
                            at: #"hosts."api.example.com".auth[0].schemes[1]"#,
                            containing: #""bearer" is listed twice ("oauth2" is another name for it)"#, environment: environment)
    }

    func testUnknownSchemeListsTheChallengeNames() {
        fixture.expectError("{ \(minimalListen) \(credentials) hosts: { \"api.example.com\": { intercept: false, auth: [{ credential: \"svc\", schemes: [\"oauth\"] }] } } }",
                            at: #"hosts."api.example.com".auth[0].schemes[0]"#,
                            containing: #""oauth" is not one of "basic", "digest", "ntlm", "negotiate", "bearer""#, environment: environment)
        fixture.expectError("{ \(minimalListen) \(credentials) hosts: { \"api.example.com\": { intercept: false, auth: [{ credential: \"svc\", schemes: [\"oauth2\"] }] } } }",
                            at: #"hosts."api.example.com".auth[0].schemes[0]"#,
                            containing: #"the credential "svc" (password) cannot answer bearer"#, environment: environment)
    }

    func testParentProxyIsNotAnsweredWithAnOAuth2Credential() {
        fixture.expectError("{ \(minimalListen) \(credentials) parent_proxy: { url: \"http://proxy.corp:8080\", auth: { credential: \"idp\" } } }",
                            at: "parent_proxy.auth.credential", containing: #""idp" is an OAuth2 credential"#, environment: environment)
    }
}
