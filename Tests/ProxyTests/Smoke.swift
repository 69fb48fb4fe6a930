import XCTest
@testable import CountersignProxy
final class ProxySmokeTests: XCTestCase { func testBuilds() { XCTAssertNotNil(ProxyPlaceholder.base()) } }
