import CLibevent
import XCTest
@testable import CountersignProxy

/// A deadline is absolute: beginning it again while it runs (what every arriving byte of a
/// head does) never moves it; only `end` or `restart` does.
final class DeadlineTests: XCTestCase {
    private func runUntil(_ base: OpaquePointer, _ done: () -> Bool, limit: Double = 5) {
        let stop = MonotonicClock.now() + limit
        while !done() && MonotonicClock.now() < stop { event_base_loop(base, EVLOOP_ONCE) }
    }

    func testBeginningAgainDoesNotPushItBack() throws {
        let base = try XCTUnwrap(event_base_new())
        defer { event_base_free(base) }
        var firedAt: Double?
        var runningWhenFired: Bool?
        var deadline: Deadline!
        deadline = Deadline(base: base) {
            firedAt = MonotonicClock.now()
            runningWhenFired = deadline.isRunning
        }
        let started = MonotonicClock.now()
        deadline.begin(seconds: 0.3)
        // Bytes keep arriving every 0.05 s: each begins the deadline again.
        let byte = Timer(base: base) { deadline.begin(seconds: 0.3) }
        var ticks = 0
        while firedAt == nil && ticks < 40 {
            byte.arm(seconds: 0.05)
            event_base_loop(base, EVLOOP_ONCE)
            ticks += 1
        }
        // A deadline that moved would not fire before the bytes stop (40 ticks, 2 s); the bound
        // leaves room for a loaded machine. (After it fired, a byte due in the same loop turn may
        // begin it again: whether it was over is asked when it fires.)
        let fired = try XCTUnwrap(firedAt, "the deadline never fired while it was begun again and again")
        XCTAssertLessThan(fired - started, 1.5, "begin() moved a running deadline")
        XCTAssertEqual(runningWhenFired, false, "a deadline that fired is over")
    }

    func testEndCancelsAndRestartStartsOver() throws {
        let base = try XCTUnwrap(event_base_new())
        defer { event_base_free(base) }
        var fired = 0
        let deadline = Deadline(base: base) { fired += 1 }
        deadline.begin(seconds: 0.05)
        deadline.end()
        XCTAssertFalse(deadline.isRunning)
        var waited = false
        let wait = Timer(base: base) { waited = true }
        wait.arm(seconds: 0.15)
        runUntil(base) { waited }
        XCTAssertEqual(fired, 0, "an ended deadline fired")

        deadline.begin(seconds: 0.05)
        deadline.restart(seconds: 0.1)
        if case .running = deadline.state {} else { XCTFail("restart left it idle") }
        runUntil(base) { fired > 0 }
        XCTAssertEqual(fired, 1)
    }

    /// Ending a deadline leaves its timer armed (no timer operation per met deadline): the
    /// next one must still pass at its own time, later or earlier than the timer's.
    func testADeadlineBegunAfterAnEndedOneKeepsItsOwnTime() throws {
        let base = try XCTUnwrap(event_base_new())
        defer { event_base_free(base) }
        var firedAt: Double?
        let deadline = Deadline(base: base) { firedAt = MonotonicClock.now() }
        deadline.begin(seconds: 0.3)
        var halfway = false
        let pause = Timer(base: base) { halfway = true }
        pause.arm(seconds: 0.15)
        runUntil(base) { halfway }
        deadline.end()
        let later = MonotonicClock.now()
        deadline.begin(seconds: 0.3)
        runUntil(base) { firedAt != nil }
        let fired = try XCTUnwrap(firedAt)
        XCTAssertGreaterThan(fired - later, 0.29, "it fired at the ended deadline's time")
        XCTAssertLessThan(fired - later, 0.45)

        firedAt = nil
        deadline.begin(seconds: 2)
        deadline.end()
        let shorter = MonotonicClock.now()
        deadline.begin(seconds: 0.1)
        runUntil(base) { firedAt != nil }
        let firedShorter = try XCTUnwrap(firedAt, "a shorter deadline after a longer one never fired")
        XCTAssertLessThan(firedShorter - shorter, 0.5, "it waited for the longer deadline's timer")
    }
}
