import FoundationEssentials
import XCTest
@testable import CountersignAuth
import CountersignSupport

final class BasicBearerOAuth2Tests: XCTestCase {
    func testBasicRFC7617Vectors() throws {
        XCTAssertEqual(try BasicAnswer.authorization(user: "Aladdin", password: "open sesame"), "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
        // §2.1: user "test", password "123£" with charset=UTF-8.
        XCTAssertEqual(try BasicAnswer.authorization(user: "test", password: "123\u{A3}", charset: "UTF-8"), "Basic dGVzdDoxMjPCow==")
    }

    func testBasicRefusesColonInUserID() {
        XCTAssertThrowsError(try BasicAnswer.authorization(user: "a:b", password: "p"))
    }

    func testBearer() throws {
        XCTAssertEqual(try BearerAnswer.authorization(token: "mF_9.B5f-4.1JqM"), "Bearer mF_9.B5f-4.1JqM")
        XCTAssertThrowsError(try BearerAnswer.authorization(token: "abc\n")) { error in
            XCTAssertFalse("\(error)".contains("abc"), "the token must not appear in the error")
        }
    }

    func testTokenRequestWithBasicClientAuthentication() throws {
        let client = OAuth2Client(tokenURL: "https://idp.example.com/token", clientID: "my app", clientSecret: "s:cr%t", scope: "read write")
        let request = try OAuth2TokenRequest(client: client)
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(String(decoding: request.body, as: UTF8.self), "grant_type=client_credentials&scope=read+write")
        let authorization = request.headerFields.first { $0.name == "Authorization" }?.value
        // Form-encoded first (RFC 6749 §2.3.1): "my+app" : "s%3Acr%25t".
        XCTAssertEqual(authorization, "Basic " + Base64.encode(Array("my+app:s%3Acr%25t".utf8)))
        XCTAssertEqual(request.headerFields.first { $0.name == "Content-Type" }?.value, "application/x-www-form-urlencoded")
        XCTAssertFalse(request.description.contains("cr%t"))
    }

    func testTokenRequestWithSecretInBody() throws {
        let client = OAuth2Client(tokenURL: "https://idp/t", clientID: "app", clientSecret: "s&1", secretPlacement: .body)
        let request = try OAuth2TokenRequest(client: client)
        XCTAssertEqual(String(decoding: request.body, as: UTF8.self), "grant_type=client_credentials&client_id=app&client_secret=s%261")
        XCTAssertNil(request.headerFields.first { $0.name == "Authorization" })
    }

    func testTokenResponseParsesBearerCaseInsensitively() throws {
        let now = Date(timeIntervalSince1970: 1_000_000)
        let body = Array(#"{"access_token":"tok","token_type":"BEARER","expires_in":3600,"scope":"read"}"#.utf8)
        let token = try OAuth2TokenResponse.parse(status: 200, body: body, tokenURL: "https://idp/t", now: now)
        XCTAssertEqual(token.expiresAt, now.addingTimeInterval(3600))
        XCTAssertEqual(try token.authorization().text, "Bearer tok")
        XCTAssertFalse(token.description.contains("tok\""))
    }

    /// The Bearer value is checked and built when the token arrives, and again when it is read
    /// back from `state_dir` (which keeps the token, not the value); a token that cannot be sent
    /// is refused from then on without the token in the reason.
    func testTokenValueIsPreparedWhenTheTokenArrives() throws {
        let now = Date(timeIntervalSince1970: 1_000_000)
        let token = OAuth2Token(accessToken: "tok-1", obtainedAt: now, expiresAt: now.addingTimeInterval(60))
        XCTAssertEqual(token.preparedAuthorization, .success(SecretValue("Bearer tok-1")))
        let client = OAuth2Client(tokenURL: "https://idp/t", clientID: "app", clientSecret: "s")
        let file = try AuthStateFile(spaces: [], tokens: [SavedToken(credentialName: "idp", client: client, token: token)]).encoded()
        XCTAssertFalse(String(decoding: file, as: UTF8.self).contains("Bearer"), "the prepared value is not persisted")
        let restored = try XCTUnwrap(AuthStateFile.decode(file).tokens.first?.token)
        XCTAssertEqual(restored, token)
        XCTAssertEqual(try restored.authorization().bytes, Array("Bearer tok-1".utf8))

        let unsendable = OAuth2Token(accessToken: "tok en", obtainedAt: now, expiresAt: nil)
        XCTAssertThrowsError(try unsendable.authorization()) { error in
            XCTAssertFalse("\(error)".contains("tok en"), "the token must not appear in the error")
        }
        XCTAssertFalse("\(token.preparedAuthorization)".contains("tok-1"), "the prepared value prints redacted")
    }

    func testTokenResponseAcceptsExpiresInAsString() throws {
        let body = Array(#"{"access_token":"t","token_type":"bearer","expires_in":"120"}"#.utf8)
        let token = try OAuth2TokenResponse.parse(status: 200, body: body, tokenURL: "u", now: Date(timeIntervalSince1970: 0))
        XCTAssertEqual(token.expiresAt, Date(timeIntervalSince1970: 120))
    }

    func testTokenResponseRejectsOtherTokenTypes() {
        let body = Array(#"{"access_token":"t","token_type":"mac"}"#.utf8)
        XCTAssertThrowsError(try OAuth2TokenResponse.parse(status: 200, body: body, tokenURL: "u", now: Date())) { error in
            XCTAssertTrue("\(error)".contains("mac"))
        }
    }

    func testErrorResponseBecomesASentence() {
        let body = Array(#"{"error":"invalid_client","error_description":"bad secret"}"#.utf8)
        XCTAssertThrowsError(try OAuth2TokenResponse.parse(status: 401, body: body, tokenURL: "https://idp/t", now: Date())) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("https://idp/t"))
            XCTAssertTrue(text.contains("invalid_client"))
            XCTAssertTrue(text.contains("client_id"))
            XCTAssertTrue(text.contains("bad secret"))
        }
        XCTAssertThrowsError(try OAuth2TokenResponse.parse(status: 500, body: Array("oops".utf8), tokenURL: "u", now: Date())) { error in
            XCTAssertTrue("\(error)".contains("500"))
        }
    }

    func testRefreshAheadAndNeverUseExpired() {
        let start = Date(timeIntervalSince1970: 0)
        let long = OAuth2Token(accessToken: "t", obtainedAt: start, expiresAt: start.addingTimeInterval(3600))
        XCTAssertFalse(long.needsRefresh(now: start.addingTimeInterval(3539)))
        XCTAssertTrue(long.needsRefresh(now: start.addingTimeInterval(3541)), "60 s margin for a one-hour token")
        let short = OAuth2Token(accessToken: "t", obtainedAt: start, expiresAt: start.addingTimeInterval(100))
        XCTAssertFalse(short.needsRefresh(now: start.addingTimeInterval(89)))
        XCTAssertTrue(short.needsRefresh(now: start.addingTimeInterval(91)), "10% margin for a 100 s token")
        XCTAssertTrue(short.isUsable(now: start.addingTimeInterval(99)))
        XCTAssertFalse(short.isUsable(now: start.addingTimeInterval(100)))
        let endless = OAuth2Token(accessToken: "t", obtainedAt: start, expiresAt: nil)
        XCTAssertTrue(endless.isUsable(now: .distantFuture))
        XCTAssertFalse(endless.needsRefresh(now: .distantFuture))
    }

    /// The token never reaches a log through `dump` or a debugger's view of the value.
    func testTokenDumpHidesTheAccessToken() {
        let token = OAuth2Token(accessToken: "tok-secret-1", obtainedAt: Date(timeIntervalSince1970: 0), expiresAt: nil)
        var dumped = ""
        dump(token, to: &dumped)
        XCTAssertFalse(dumped.contains("tok-secret-1"), dumped)
        XCTAssertFalse(String(reflecting: token).contains("tok-secret-1"))
        XCTAssertTrue(dumped.contains("<redacted>"))
    }
}
