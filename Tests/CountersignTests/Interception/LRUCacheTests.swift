import XCTest
@testable import CountersignInterception

final class LRUCacheTests: XCTestCase {
    func testEvictsTheLeastRecentlyUsedAtCapacity() {
        var cache = LRUCache<String, Int>(capacity: 2)
        cache.set(1, for: "a")
        cache.set(2, for: "b")
        XCTAssertEqual(cache.value(for: "a"), 1)  // "b" is now the least recently used
        cache.set(3, for: "c")
        XCTAssertEqual(cache.count, 2)
        XCTAssertNil(cache.value(for: "b"))
        XCTAssertEqual(cache.value(for: "a"), 1)
        XCTAssertEqual(cache.value(for: "c"), 3)
    }

    func testReplacingAValueKeepsOneEntry() {
        var cache = LRUCache<String, Int>(capacity: 2)
        cache.set(1, for: "a")
        cache.set(2, for: "a")
        XCTAssertEqual(cache.count, 1)
        XCTAssertEqual(cache.value(for: "a"), 2)
    }

    func testCapacityOneKeepsOnlyTheLatest() {
        var cache = LRUCache<Int, Int>(capacity: 1)
        for key in 0..<5 { cache.set(key * 10, for: key) }
        XCTAssertEqual(cache.count, 1)
        XCTAssertEqual(cache.value(for: 4), 40)
        XCTAssertNil(cache.value(for: 3))
    }
}
