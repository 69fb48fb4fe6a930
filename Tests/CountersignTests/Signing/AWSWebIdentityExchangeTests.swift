import CountersignSigning
import XCTest

/// STS AssumeRoleWithWebIdentity, as its API reference documents the answer.
final class AWSWebIdentityExchangeTests: XCTestCase {
    static let answer = """
    <AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
      <AssumeRoleWithWebIdentityResult>
        <SubjectFromWebIdentityToken>amzn1.account.AF6RHO7KZU5XRVQJGXK6HB56KR2A</SubjectFromWebIdentityToken>
        <Credentials>
          <SessionToken>AQoDYXdzEE0a8ANXXXXXXXXNO1ewxE5TijQyp+IEXAMPLE</SessionToken>
          <SecretAccessKey>wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY</SecretAccessKey>
          <Expiration>2014-10-24T23:00:23Z</Expiration>
          <AccessKeyId>ASgeIAIOSFODNN7EXAMPLE</AccessKeyId>
        </Credentials>
      </AssumeRoleWithWebIdentityResult>
    </AssumeRoleWithWebIdentityResponse>
    """

    func testTemporaryKeysAreReadFromTheAnswer() throws {
        let keys = try AWSWebIdentityExchange.parse(status: 200, body: Array(Self.answer.utf8))
        XCTAssertEqual(keys.credentials.accessKeyID, "ASgeIAIOSFODNN7EXAMPLE")
        XCTAssertEqual(keys.credentials.sessionToken, "AQoDYXdzEE0a8ANXXXXXXXXNO1ewxE5TijQyp+IEXAMPLE")
        XCTAssertEqual(keys.expiration, 1_414_191_623)
    }

    func testARefusalNamesOnlyTheErrorCode() {
        let body = "<ErrorResponse><Error><Code>InvalidIdentityToken</Code><Message>token eyJsecret is bad</Message></Error></ErrorResponse>"
        XCTAssertThrowsError(try AWSWebIdentityExchange.parse(status: 400, body: Array(body.utf8))) { error in
            XCTAssertEqual("\(error)", "STS answered 400 InvalidIdentityToken")
        }
    }

    func testTheFormCarriesRoleSessionAndToken() {
        let body = String(decoding: AWSWebIdentityExchange.requestBody(roleARN: "arn:aws:iam::1:role/app", sessionName: "cs",
                                                                        token: Array("a.b+c".utf8), durationSeconds: 900), as: UTF8.self)
        XCTAssertEqual(body, "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=arn%3Aaws%3Aiam%3A%3A1%3Arole%2Fapp&RoleSessionName=cs&WebIdentityToken=a.b%2Bc&DurationSeconds=900")
    }
}
