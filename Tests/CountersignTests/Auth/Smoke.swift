import XCTest
@testable import CountersignAuth
final class AuthSmokeTests: XCTestCase { func testBuilds() { XCTAssertTrue(true) } }
