import Foundation
import Synchronization
import XCTest
@testable import CountersignAuth

/// The KDC threads' queue: bounded, refusing at once beyond its capacity, every accepted
/// job's result delivered, and room made again as jobs finish.
final class KDCQueueTests: XCTestCase {
    func testBeyondItsCapacityTheQueueRefusesAtOnce() {
        let queue = KDCQueue(threads: 1, capacity: 2, maxThreads: 1)
        let release = DispatchSemaphore(value: 0)
        let delivered = Mutex<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        for number in 1...2 {
            XCTAssertNotNil(queue.submit({ release.wait(); return number }, deliver: { value in
                delivered.withLock { $0.append(value) }
                done.signal()
            }))
        }
        XCTAssertEqual(queue.inFlight, 2)
        let start = Date()
        XCTAssertNil(queue.submit({ 3 }, deliver: { _ in XCTFail("a refused job ran") }))
        XCTAssertLessThan(Date().timeIntervalSince(start), 0.5, "a refusal does not wait for room")
        release.signal()
        release.signal()
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(delivered.withLock { $0 }, [1, 2], "one thread: in order")
        XCTAssertEqual(queue.inFlight, 0)
        XCTAssertNotNil(queue.submit({ 4 }, deliver: { _ in done.signal() }), "room again once jobs finished")
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
    }

    func testAStuckJobDoesNotHoldTheOtherThread() {
        let queue = KDCQueue(threads: 2, capacity: 4)
        let stuck = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        queue.submit({ stuck.wait() }, deliver: { _ in })
        queue.submit({ 1 }, deliver: { _ in done.signal() })
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        stuck.signal()
    }

    func testACancelledJobIsDroppedBeforeItRunsAndFreesItsPlace() {
        let queue = KDCQueue(threads: 1, capacity: 2, maxThreads: 1)
        let stuck = DispatchSemaphore(value: 0)
        let ran = Mutex(false)
        let done = DispatchSemaphore(value: 0)
        queue.submit({ stuck.wait() }, deliver: { _ in done.signal() })
        let abandoned = queue.submit({ ran.withLock { $0 = true } }, deliver: { _ in XCTFail("a cancelled job's result was delivered") })
        XCTAssertEqual(queue.inFlight, 2)
        abandoned?.cancel()
        XCTAssertEqual(queue.inFlight, 1, "a cancelled job no longer holds a place")
        XCTAssertNotNil(queue.submit({ 5 }, deliver: { _ in done.signal() }), "so the queue has room again at once")
        stuck.signal()
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        XCTAssertFalse(ran.withLock { $0 }, "the job whose caller left never ran")
    }

    func testAResultIsNotDeliveredToACallerThatCancelledWhileItRan() {
        let queue = KDCQueue(threads: 1, capacity: 2)
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let delivered = Mutex(false)
        let job = queue.submit({ started.signal(); release.wait() }, deliver: { _ in delivered.withLock { $0 = true } })
        XCTAssertEqual(started.wait(timeout: .now() + 5), .success)
        job?.cancel()
        release.signal()
        XCTAssertTrue(waitUntil { queue.inFlight == 0 })
        XCTAssertFalse(delivered.withLock { $0 })
    }

    /// A KDC that does not answer holds threads for as long as the library waits; a job
    /// submitted meanwhile (the KDC answering again) must not wait for them.
    func testAJobWaitingBehindStuckThreadsGetsASpareThreadThatLeavesAfterwards() {
        let queue = KDCQueue(threads: 1, capacity: 8, maxThreads: 2)
        let stuck = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        queue.submit({ stuck.wait() }, deliver: { _ in })
        XCTAssertTrue(waitUntil { queue.threadCount == 1 && queue.inFlight == 1 })
        let start = Date()
        guard let waiting = queue.submit({ 1 }, deliver: { _ in done.signal() }) else { return XCTFail("refused") }
        XCTAssertTrue(waiting.foundEveryThreadBusy)
        XCTAssertEqual(done.wait(timeout: .now() + 0.3), .timedOut, "queued behind the stuck thread")
        queue.startSpareThread(ifStillWaiting: waiting)
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        XCTAssertLessThan(Date().timeIntervalSince(start), 2, "answered by a spare thread, not after the stuck one")
        XCTAssertTrue(waitUntil { queue.threadCount == 1 }, "the spare thread leaves with nothing to do; \(queue.threadCount) threads")
        stuck.signal()
        XCTAssertTrue(waitUntil { queue.inFlight == 0 && queue.threadCount == 1 })
    }

    func testSpareThreadsAreBounded() {
        let queue = KDCQueue(threads: 1, capacity: 16, maxThreads: 3)
        let stuck = DispatchSemaphore(value: 0)
        let jobs = (0..<10).compactMap { _ in queue.submit({ stuck.wait() }, deliver: { _ in }) }
        for job in jobs { queue.startSpareThread(ifStillWaiting: job) }
        XCTAssertTrue(waitUntil { queue.threadCount == 3 })
        XCTAssertEqual(queue.threadCount, 3, "never more than maxThreads")

        let cancelled = queue.submit({ stuck.wait() }, deliver: { _ in })!
        cancelled.cancel()
        queue.startSpareThread(ifStillWaiting: cancelled)
        XCTAssertEqual(queue.threadCount, 3, "a cancelled job asks for nothing")
        for _ in 0..<11 { stuck.signal() }
        XCTAssertTrue(waitUntil { queue.inFlight == 0 && queue.threadCount == 1 })
    }

    private func waitUntil(timeout: Double = 5, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return condition()
    }
}
