import XCTest
@testable import CountersignInterception
final class InterceptionSmokeTests: XCTestCase { func testBuilds() { XCTAssertTrue(true) } }
