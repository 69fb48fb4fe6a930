import CLibevent
import XCTest
@testable import CountersignProxy

/// A deadline given back by a connection that went is reused by the next one: it then tells
/// its new owner when it passes, never the one that gave it back, even when it was running
/// (its timer armed) when it was given back.
final class SpareDeadlinesTests: XCTestCase {
    func testAReusedDeadlineTellsOnlyItsNewOwner() throws {
        let base = try XCTUnwrap(event_base_new())
        defer { event_base_free(base) }
        let spares = SpareDeadlines(base: base)
        var (first, second) = (0, 0)
        let deadline = spares.take { first += 1 }
        deadline.begin(seconds: 0.05)
        spares.giveBack(deadline)
        XCTAssertFalse(deadline.isRunning, "a deadline given back still ran")
        let reused = spares.take { second += 1 }
        XCTAssertTrue(reused === deadline, "the spare was not reused")
        reused.begin(seconds: 0.2)
        let stop = MonotonicClock.now() + 5
        while second == 0 && MonotonicClock.now() < stop { event_base_loop(base, EVLOOP_ONCE) }
        XCTAssertEqual(second, 1, "the new owner was not told")
        XCTAssertEqual(first, 0, "the owner that gave it back was told")
        XCTAssertFalse(spares.take { first += 1 } === deadline, "a deadline in use was handed out again")
    }
}
