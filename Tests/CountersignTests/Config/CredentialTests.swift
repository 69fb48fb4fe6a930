import XCTest
@testable import CountersignConfig

/// Secrets resolved from the environment and files, and credentials of exactly one kind.
final class CredentialTests: XCTestCase {
    let fixture = ConfigFixture()

    private func load(_ credentials: String, environment: [String: String] = [:]) throws -> Configuration {
        try fixture.load("{ \(minimalListen) credentials: { \(credentials) } }", environment: environment)
    }

    private func expectError(_ credentials: String, at path: String, containing fragment: String,
                             environment: [String: String] = [:], line: UInt = #line) {
        fixture.expectError("{ \(minimalListen) credentials: { \(credentials) } }", at: path, containing: fragment,
                            environment: environment, line: line)
    }

    func testPasswordFromTheEnvironment() throws {
        let config = try load(#"svc: { user: "svc", password_env: "SVC_PASSWORD", workstation: "HOST1" }"#,
                              environment: ["SVC_PASSWORD": "s3cret"])
        guard case .password(let user, let password, let workstation)? = config.credentials["svc"] else {
            return XCTFail("not a password credential")
        }
        XCTAssertEqual(user, "svc")
        XCTAssertEqual(password.string, "s3cret")
        XCTAssertEqual(password.source, "env SVC_PASSWORD")
        XCTAssertEqual(workstation, "HOST1")
    }

    func testSecretFileIsReadRelativeToTheConfigAndLoosesTrailingNewlines() throws {
        fixture.write("secrets/token", "abc.def\r\n\n")
        let config = try load(#"api: { token_file: "secrets/token" }"#)
        guard case .token(let token)? = config.credentials["api"] else { return XCTFail("not a token") }
        XCTAssertEqual(token.bytes, Array("abc.def".utf8))
        XCTAssertEqual(token.source, "file \(fixture.directory)/secrets/token")
    }

    func testMissingEnvironmentVariableIsNamed() {
        expectError(#"svc: { user: "svc", password_env: "SVC_PASSWORD" }"#, at: "credentials.svc.password_env",
                    containing: "the environment variable SVC_PASSWORD is not set")
        expectError(#"svc: { user: "svc", password_env: "SVC_PASSWORD" }"#, at: "credentials.svc.password_env",
                    containing: "SVC_PASSWORD is empty", environment: ["SVC_PASSWORD": ""])
    }

    func testUnreadableSecretFileIsNamed() {
        expectError(#"corp: { user: "CORP\\svc", password_file: "/nonexistent/corp" }"#, at: "credentials.corp.password_file",
                    containing: "cannot read the secret file /nonexistent/corp: it does not exist")
        fixture.write("secrets/empty", "\n")
        expectError(#"t: { token_file: "secrets/empty" }"#, at: "credentials.t.token_file", containing: "is empty")
    }

    func testEnvAndFileTogetherIsAnError() {
        expectError(#"svc: { user: "svc", password_env: "A", password_file: "b" }"#, at: "credentials.svc.password_file",
                    containing: "give only one of password_env and password_file", environment: ["A": "x"])
    }

    func testNTHashIsDecodedToSixteenBytes() throws {
        let config = try load(#"legacy: { user: "CORP\\app", nt_hash_env: "H" }"#,
                              environment: ["H": "8846F7EAEE8FB117AD06BDD830B7586C"])
        guard case .ntHash(let user, let hash, nil)? = config.credentials["legacy"] else { return XCTFail("not an NT hash") }
        XCTAssertEqual(user, "CORP\\app")
        XCTAssertEqual(hash.bytes, [0x88, 0x46, 0xF7, 0xEA, 0xEE, 0x8F, 0xB1, 0x17, 0xAD, 0x06, 0xBD, 0xD8, 0x30, 0xB7, 0x58, 0x6C])
        XCTAssertEqual(config.credentials["legacy"]?.answerableSchemes, [.ntlm])
    }

    func testBadNTHashIsRefusedWithoutShowingIt() {
        fixture.expectError("{ \(minimalListen) credentials: { legacy: { user: \"u\", nt_hash_env: \"H\" } } }",
                            at: "credentials.legacy.nt_hash_env", containing: "must be 32 hex digits",
                            environment: ["H": "not-a-hash-at-all-zzzzzzzzzzzzzz"])
        let errors = fixture.errors("{ \(minimalListen) credentials: { legacy: { user: \"u\", nt_hash_env: \"H\" } } }",
                                    environment: ["H": "zz46F7EAEE8FB117AD06BDD830B7586C"])
        XCTAssertFalse(ConfigErrors(errors).description.contains("zz46"), "the value must not be echoed")
    }

    func testMixingTwoKindsIsAnErrorThatSaysSo() {
        expectError(#"svc: { user: "svc", password_env: "A", token_env: "B" }"#, at: "credentials.svc",
                    containing: "mixes the keys of a password (password_env) and a token (token_env); a credential has exactly one kind",
                    environment: ["A": "a", "B": "b"])
        expectError(#"id: { pkcs12: "x.p12", certificate: "x.pem", private_key: "x.key" }"#, at: "credentials.id",
                    containing: "a PEM identity (certificate, private_key) and a PKCS#12 identity (pkcs12)")
    }

    func testCredentialWithoutAKindOrWithStrayKeys() {
        expectError(#"svc: { user: "svc" }"#, at: "credentials.svc", containing: "has no secret")
        expectError(#"svc: { password_env: "A" }"#, at: "credentials.svc", containing: #"missing required key "user""#,
                    environment: ["A": "a"])
        expectError(#"t: { token_env: "A", user: "bob" }"#, at: "credentials.t.user",
                    containing: "user does not apply to a token credential", environment: ["A": "a"])
        expectError(#"svc: { user: "svc", password_env: "A", passphrase_env: "B" }"#, at: "credentials.svc.passphrase_env",
                    containing: "a passphrase applies only to identities", environment: ["A": "a", "B": "b"])
    }

    func testOAuth2Client() throws {
        let config = try load("""
        idp: { oauth2: { token_url: "https://idp.example.com/oauth/token", client_id: "app",
                         client_secret_env: "IDP", scope: "read", auth: "body" } }
        """, environment: ["IDP": "cs"])
        guard case .oauth2(let oauth)? = config.credentials["idp"] else { return XCTFail("not OAuth2") }
        XCTAssertEqual(oauth.tokenURL, EndpointURL(scheme: "https", host: "idp.example.com", port: 443, path: "/oauth/token"))
        XCTAssertEqual(oauth.clientID, "app")
        XCTAssertEqual(oauth.clientSecret.string, "cs")
        XCTAssertEqual(oauth.scope, "read")
        XCTAssertEqual(oauth.auth, .body)
        expectError(#"idp: { oauth2: { token_url: "https://idp/t", client_id: "app" } }"#, at: "credentials.idp.oauth2",
                    containing: "missing the client secret")
        expectError(#"idp: { oauth2: { token_url: "http://idp/t", client_id: "app", client_secret_env: "S" } }"#,
                    at: "credentials.idp.oauth2.token_url", containing: "use an https:// token_url", environment: ["S": "s"])
    }

    func testIdentityFilesMustExist() throws {
        fixture.write("certs/client.pem")
        fixture.write("certs/client.key")
        fixture.write("certs/client.p12")
        let config = try load("""
        pem: { certificate: "certs/client.pem", private_key: "certs/client.key" },
        p12: { pkcs12: "certs/client.p12", passphrase_env: "P" },
        """, environment: ["P": "pass"])
        guard case .pemIdentity(let certificate, let key, nil)? = config.credentials["pem"],
              case .pkcs12Identity(let p12, let passphrase?)? = config.credentials["p12"] else {
            return XCTFail("identities not decoded")
        }
        XCTAssertEqual(certificate, fixture.directory + "/certs/client.pem")
        XCTAssertEqual(key, fixture.directory + "/certs/client.key")
        XCTAssertEqual(p12, fixture.directory + "/certs/client.p12")
        XCTAssertEqual(passphrase.string, "pass")
        expectError(#"pem: { certificate: "certs/client.pem", private_key: "certs/missing.key" }"#,
                    at: "credentials.pem.private_key",
                    containing: "the file \(fixture.directory)/certs/missing.key does not exist (relative paths start at \(fixture.directory))")
        expectError(#"pem: { certificate: "certs/client.pem" }"#, at: "credentials.pem", containing: #"missing required key "private_key""#)
    }

    func testSecretsNeverPrint() throws {
        let config = try load(#"svc: { user: "svc", password_env: "PW" }, t: { token_env: "TOK" }"#,
                              environment: ["PW": "hunter2", "TOK": "tok-123456"])
        let secret = Secret("hunter2", source: "env PW")
        XCTAssertEqual(String(describing: secret), "<redacted>")
        XCTAssertEqual(String(reflecting: secret), "Secret(<redacted>, from env PW)")
        var dumped = ""
        dump(secret, to: &dumped)
        XCTAssertFalse(dumped.contains("hunter2"))
        for text in [String(describing: config.credentials["svc"]!), String(reflecting: config.credentials),
                     config.summary(), "\(config.credentials["t"]!)"] {
            XCTAssertFalse(text.contains("hunter2"), text)
            XCTAssertFalse(text.contains("tok-123456"), text)
        }
        XCTAssertTrue(config.summary().contains("svc: password for svc from env PW"))
    }
}
