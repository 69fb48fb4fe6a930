import Foundation
import XCTest
@testable import CountersignInterception
import CountersignSupport

final class LeafMinterTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
    }

    func testTheSecondRequestForAHostGetsTheSameLeaf() throws {
        let minter = try LeafMinter(ca: InterceptionCA.make(in: directory, hosts: ["api.example.com"]))
        let first = try minter.leaf(for: "api.example.com")
        XCTAssertTrue(first === (try minter.leaf(for: "api.example.com")))
        XCTAssertTrue(first === (try minter.leaf(for: "API.Example.COM.")), "names compare case-insensitively")
        XCTAssertEqual(minter.cachedLeafCount, 1)
    }

    func testEveryLeafSharesTheProcessKey() throws {
        let minter = try LeafMinter(ca: InterceptionCA.make(in: directory, hosts: nil))
        let one = try minter.leaf(for: "one.example"), two = try minter.leaf(for: "two.example")
        XCTAssertTrue(one.privateKey === two.privateKey)
        XCTAssertNotEqual(one.certificatePEM, two.certificatePEM)
    }

    func testTheCacheEvictsTheLeastRecentlyUsedHostAtItsBound() throws {
        let minter = try LeafMinter(ca: InterceptionCA.make(in: directory, hosts: nil), capacity: 2)
        let a = try minter.leaf(for: "a.example")
        _ = try minter.leaf(for: "b.example")
        _ = try minter.leaf(for: "a.example")  // "b" becomes the least recently used
        _ = try minter.leaf(for: "c.example")
        XCTAssertEqual(minter.cachedLeafCount, 2)
        XCTAssertTrue(a === (try minter.leaf(for: "a.example")))
        let b = try minter.leaf(for: "b.example")
        XCTAssertEqual(b.host, "b.example")
        XCTAssertEqual(minter.cachedLeafCount, 2)
    }

    func testALeafNearExpiryIsMintedAnew() throws {
        let clock = TestClock()
        let minter = try LeafMinter(ca: InterceptionCA.make(in: directory, hosts: nil), clock: { clock.now })
        let first = try minter.leaf(for: "api.example.com")
        clock.advance(by: 5 * 24 * 3600)
        XCTAssertTrue(first === (try minter.leaf(for: "api.example.com")), "two days left: still served")
        clock.advance(by: 1.5 * 24 * 3600)
        let renewed = try minter.leaf(for: "api.example.com")
        XCTAssertFalse(first === renewed, "half a day left: minted again")
        XCTAssertGreaterThan(renewed.notAfter, first.notAfter)
    }

    func testAHostOutsideTheConstraintsIsRefusedWithTheFix() throws {
        let minter = try LeafMinter(ca: InterceptionCA.make(in: directory, hosts: ["api.example.com"]))
        XCTAssertThrowsError(try minter.leaf(for: "www.example.com")) { error in
            XCTAssertEqual("\(error)", "www.example.com is outside the interception CA's name constraints "
                + "(permitted DNS:api.example.com; excluded IP:0.0.0.0/0, IP:::/0), so clients would reject its certificate; "
                + "re-create the CA for the configured hosts with `countersign ca init --force`")
        }
    }

    func testSomethingThatIsNoHostIsRefused() throws {
        let minter = try LeafMinter(ca: InterceptionCA.make(in: directory, hosts: nil))
        XCTAssertThrowsError(try minter.leaf(for: "bad host/x")) { error in
            XCTAssertEqual("\(error)", "cannot mint a certificate for \"bad host/x\": it is neither a DNS name nor an IP literal")
        }
    }

    func testConcurrentFirstRequestsEndWithOneCachedLeaf() throws {
        let minter = try LeafMinter(ca: InterceptionCA.make(in: directory, hosts: nil))
        let leaves = Mutex<[ObjectIdentifier]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let leaf = try! minter.leaf(for: "busy.example")
            leaves.withLock { $0.append(ObjectIdentifier(leaf)) }
        }
        let cached = try minter.leaf(for: "busy.example")
        XCTAssertEqual(minter.cachedLeafCount, 1)
        XCTAssertTrue(leaves.withLock { $0 }.contains(ObjectIdentifier(cached)))
    }
}

final class TestClock: @unchecked Sendable {
    private let state = Mutex(Date())
    var now: Date { state.withLock { $0 } }
    func advance(by seconds: TimeInterval) { state.withLock { $0 += seconds } }
}
