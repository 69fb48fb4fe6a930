import XCTest
@testable import CountersignConfig
final class ConfigSmokeTests: XCTestCase { func testBuilds() { XCTAssertTrue(true) } }
