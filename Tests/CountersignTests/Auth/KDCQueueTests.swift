import Foundation
import Synchronization
import XCTest
@testable import CountersignAuth

/// The KDC threads' queue: bounded, refusing at once beyond its capacity, every accepted
/// job's result delivered, and room made again as jobs finish.
final class KDCQueueTests: XCTestCase {
    func testBeyondItsCapacityTheQueueRefusesAtOnce() {
        let queue = KDCQueue(threads: 1, capacity: 2)
        let release = DispatchSemaphore(value: 0)
        let delivered = Mutex<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        for number in 1...2 {
            XCTAssertTrue(queue.submit({ release.wait(); return number }, deliver: { value in
                delivered.withLock { $0.append(value) }
                done.signal()
            }))
        }
        XCTAssertEqual(queue.inFlight, 2)
        let start = Date()
        XCTAssertFalse(queue.submit({ 3 }, deliver: { _ in XCTFail("a refused job ran") }))
        XCTAssertLessThan(Date().timeIntervalSince(start), 0.5, "a refusal does not wait for room")
        release.signal()
        release.signal()
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(delivered.withLock { $0 }, [1, 2], "one thread: in order")
        XCTAssertEqual(queue.inFlight, 0)
        XCTAssertTrue(queue.submit({ 4 }, deliver: { _ in done.signal() }), "room again once jobs finished")
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
}
