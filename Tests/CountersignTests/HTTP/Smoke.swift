import XCTest
@testable import CountersignHTTP
final class HTTPSmokeTests: XCTestCase { func testBuilds() { XCTAssertTrue(true) } }
