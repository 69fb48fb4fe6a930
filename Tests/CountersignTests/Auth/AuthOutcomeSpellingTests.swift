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

    /// Counters are array slots by `ordinal`: every outcome has its own, and `all` names it back.
    func testEveryOutcomeHasItsOwnSlot() {
        XCTAssertEqual(AuthOutcome.all.count, 1 + 6 * AuthSchemeName.allCases.count)
        XCTAssertEqual(Set(AuthOutcome.all).count, AuthOutcome.all.count)
        for outcome in AuthOutcome.all {
            XCTAssertEqual(AuthOutcome.all[outcome.ordinal], outcome)
            XCTAssertEqual(outcome.spelled, outcome.description)
        }
    }
}
