import XCTest
@testable import CountersignConfig

/// `credentials.<name>.aws`: static keys or web identity, and every mistake named at its key
/// path with what to write instead.
final class AWSCredentialConfigTests: XCTestCase {
    let fixture = ConfigFixture()

    private func load(_ credentials: String, environment: [String: String] = [:]) throws -> Configuration {
        try fixture.load("{ \(minimalListen) credentials: { \(credentials) } }", environment: environment)
    }

    private func expectError(_ aws: String, at path: String, containing fragment: String, line: UInt = #line) {
        fixture.write("token", "eyJ.token\n")
        fixture.expectError("{ \(minimalListen) credentials: { irsa: { aws: { \(aws) } } } }", at: path, containing: fragment,
                            environment: ["K": "AKID", "S": "secret"], line: line)
    }

    func testWebIdentityWithItsDefaults() throws {
        fixture.write("token", "eyJ.token\n")
        let config = try load(#"irsa: { aws: { role_arn: "arn:aws:iam::123456789012:role/app", web_identity_token_file: "token" } }"#)
        guard case .aws(.webIdentity(let identity))? = config.credentials["irsa"] else { return XCTFail("not a web identity") }
        XCTAssertEqual(identity.roleARN, "arn:aws:iam::123456789012:role/app")
        XCTAssertEqual(identity.tokenFile, "\(fixture.directory)/token")
        XCTAssertEqual(identity.stsEndpoint.description, AWSWebIdentityConfig.defaultEndpoint.description)
        XCTAssertEqual(identity.sessionName, "countersign")
        XCTAssertNil(identity.durationSeconds)
    }

    func testWebIdentityWithEverythingGiven() throws {
        fixture.write("token", "eyJ.token\n")
        let config = try load(#"irsa: { aws: { role_arn: "arn:aws:iam::123456789012:role/app", web_identity_token_file: "token", "#
                              + #"sts_endpoint: "http://127.0.0.1:4566/", role_session_name: "job-7", duration: "30m" } }"#)
        guard case .aws(.webIdentity(let identity))? = config.credentials["irsa"] else { return XCTFail("not a web identity") }
        XCTAssertEqual(identity.stsEndpoint.host, "127.0.0.1")
        XCTAssertEqual(identity.sessionName, "job-7")
        XCTAssertEqual(identity.durationSeconds, 1800)
    }

    func testStaticKeysWithASessionToken() throws {
        let config = try load(#"aws: { aws: { access_key_id_env: "K", secret_access_key_env: "S", session_token_env: "T" } }"#,
                              environment: ["K": "AKID", "S": "secret", "T": "token"])
        guard case .aws(.keys(let keys))? = config.credentials["aws"] else { return XCTFail("not static keys") }
        XCTAssertEqual(keys.accessKeyID.string, "AKID")
        XCTAssertEqual(keys.sessionToken?.string, "token")
    }

    func testMissingRoleOrTokenFileSaysWhatToAdd() {
        expectError(#"web_identity_token_file: "token""#, at: "credentials.irsa.aws",
                    containing: #"missing required key "role_arn"; add role_arn: "arn:aws:iam::"#)
        expectError(#"role_arn: "arn:aws:iam::123456789012:role/app""#, at: "credentials.irsa.aws",
                    containing: #"missing required key "web_identity_token_file"; add web_identity_token_file:"#)
    }

    func testEachBadWebIdentityValueIsNamed() {
        let base = #"role_arn: "arn:aws:iam::123456789012:role/app", web_identity_token_file: "token", "#
        expectError(#"role_arn: "app-role", web_identity_token_file: "token""#, at: "credentials.irsa.aws.role_arn",
                    containing: "is not an IAM role ARN (arn:aws:iam::ACCOUNT:role/NAME)")
        expectError(base + #"sts_endpoint: "http://sts.example.com/""#, at: "credentials.irsa.aws.sts_endpoint",
                    containing: "use an https:// sts_endpoint (http:// only to 127.0.0.1, ::1 or localhost)")
        expectError(base + #"role_session_name: "has space""#, at: "credentials.irsa.aws.role_session_name",
                    containing: "is not a role session name (2 to 64 letters, digits and _+=,.@-)")
        expectError(base + #"duration: "5m""#, at: "credentials.irsa.aws.duration", containing: "must be 15m to 12h")
        expectError(base + #"duration: "13h""#, at: "credentials.irsa.aws.duration", containing: "must be 15m to 12h")
    }

    func testStaticKeysAndWebIdentityTogetherAreRefused() {
        expectError(#"role_arn: "arn:aws:iam::123456789012:role/app", web_identity_token_file: "token", access_key_id_env: "K""#,
                    at: "credentials.irsa.aws.access_key_id_env", containing: "give either static keys or web identity")
    }

    func testStaticKeysWithoutAnAccessKeyIdSayWhatToAdd() {
        expectError(#"secret_access_key_env: "S""#, at: "credentials.irsa.aws",
                    containing: "missing the access key id; add access_key_id_env or access_key_id_file")
    }

    /// The SigV4 signature is the request's Authorization: a challenge answer or an injected
    /// Authorization on the same host would fight it, so the configuration says so up front.
    func testAnAWSHostCannotAlsoAnswerChallengesOrInjectAuthorization() {
        let credentials = #"aws: { aws: { access_key_id_env: "K", secret_access_key_env: "S" } }, svc: { user: "u", password_env: "K" }"#
        let sign = #"intercept: false, sign: { credential: "aws", format: "aws-sigv4" }"#
        fixture.expectError("{ \(minimalListen) credentials: { \(credentials) }, hosts: { \"s3.example.com\": { \(sign), auth: [{ credential: \"svc\" }] } } }",
                            at: #"hosts."s3.example.com".auth"#, containing: "SigV4 signature", environment: ["K": "AKID", "S": "secret"])
        fixture.expectError("{ \(minimalListen) credentials: { \(credentials) }, hosts: { \"s3.example.com\": { \(sign), "
                            + #"inject: [{ header: "authorization", credential: "svc" }] } } }"#,
                            at: #"hosts."s3.example.com".inject"#, containing: "aws-sigv4 signing", environment: ["K": "AKID", "S": "secret"])
        // Every field the SigV4 signer writes, not only Authorization.
        fixture.expectError("{ \(minimalListen) credentials: { \(credentials) }, hosts: { \"s3.example.com\": { \(sign), "
                            + #"inject: [{ header: "X-Amz-Security-Token", credential: "svc" }] } } }"#,
                            at: #"hosts."s3.example.com".inject"#, containing: "injects X-Amz-Security-Token (credential svc), which its aws-sigv4 signing",
                            environment: ["K": "AKID", "S": "secret"])
    }
}
