import XCTest
@testable import CountersignProxy

/// When a drain ends: quiet for the quiet period, or at drain_timeout whatever is open.
final class DrainRuleTests: XCTestCase {
    private let rule = DrainRule(quietPeriod: 1, timeout: 30)

    func testKeepsServingWhileConnectionsArriveWithinTheQuietPeriod() {
        XCTAssertEqual(rule.verdict(elapsed: 0, sinceBusy: 0), .keepServing)
        XCTAssertEqual(rule.verdict(elapsed: 20, sinceBusy: 0.9), .keepServing, "an arrival 0.9 s ago keeps it serving")
    }

    func testEndsOnceNothingWasOpenOrArrivedForTheQuietPeriod() {
        XCTAssertEqual(rule.verdict(elapsed: 1, sinceBusy: 1), .quiet)
        XCTAssertEqual(rule.verdict(elapsed: 12, sinceBusy: 3), .quiet)
    }

    func testTheTimeoutWinsOverConnectionsStillOpen() {
        XCTAssertEqual(rule.verdict(elapsed: 30, sinceBusy: 0), .timedOut)
    }

    func testProgressKeepsTheLatestMomentAndNeverGoesBack() {
        let progress = DrainProgress()
        progress.noteBusy(at: 5_000_000_000)
        progress.noteBusy(at: 2_000_000_000)  // a worker's older note arriving late
        XCTAssertEqual(progress.secondsSinceBusy(at: 6_500_000_000), 1.5, accuracy: 1e-9)
        XCTAssertEqual(progress.secondsSinceBusy(at: 4_000_000_000), 0, "a moment before the last note is not quiet")
    }
}
