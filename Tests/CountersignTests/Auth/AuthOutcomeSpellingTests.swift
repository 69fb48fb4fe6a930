import XCTest
@testable import CountersignAuth

/// The spellings /status and the access log show, made once rather than per request.
final class AuthOutcomeSpellingTests: XCTestCase {
    func testKnownSpellings() {
        XCTAssertEqual(AuthOutcome.answered(.digest).spelled, "digest:answered")
        XCTAssertEqual(AuthOutcome.preemptive(.basic).spelled, "basic:preemptive")
        XCTAssertEqual(AuthOutcome.notAuthorized(.ntlm).spelled, "ntlm:not-authorized")
        XCTAssertEqual(AuthOutcome.mutualAuthFailed(.negotiate).spelled, "negotiate:mutual-auth-failed")
        XCTAssertEqual(AuthOutcome.notAttempted.spelled, "none")
    }
}
