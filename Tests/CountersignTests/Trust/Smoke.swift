import XCTest
@testable import CountersignTrust
final class TrustSmokeTests: XCTestCase { func testBuilds() { XCTAssertTrue(true) } }
