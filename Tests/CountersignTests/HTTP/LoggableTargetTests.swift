import XCTest
@testable import CountersignHTTP

/// What the access log and `/status` may show of a target a client sent: never a password
/// it put in the userinfo, never a query.
final class LoggableTargetTests: XCTestCase {
    func testUserinfoAndQueryAreLeftOut() {
        let cases: [(String, String)] = [
            ("http://user:s3cret@api.example.com/x", "http://…@api.example.com/x"),
            ("http://user:s3cret@api.example.com", "http://…@api.example.com"),
            ("https://a@b:p%40ss@api.example.com:8443/x?token=abc", "https://…@api.example.com:8443/x?…"),
            ("user:s3cret@api.example.com:443", "…@api.example.com:443"),
            ("HTTP://u:p@h/", "HTTP://…@h/"),
            ("http://api.example.com/a@b", "http://api.example.com/a@b"),
            ("/path/with@at?key=1", "/path/with@at?…"),
            ("/plain", "/plain"),
            ("http://h/?u:p@x", "http://h/?…"),
            ("api.example.com:443", "api.example.com:443"),
        ]
        for (target, logged) in cases {
            XCTAssertEqual(LoggableTarget.of(target), logged, target)
            XCTAssertFalse(LoggableTarget.of(target).contains("s3cret"), target)
        }
    }
}
