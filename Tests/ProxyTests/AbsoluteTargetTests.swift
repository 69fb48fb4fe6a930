import XCTest
@testable import CountersignProxy

/// Whether an absolute-form target wrote its port decides, for `upstream_tls` hosts, whether
/// `http://host/` goes to 443 or to the port the client named.
final class AbsoluteTargetTests: XCTestCase {
    func testExplicitPortIsFoundOnlyInTheAuthority() {
        XCTAssertFalse(Routing.hasExplicitPort("http://api.example/"))
        XCTAssertFalse(Routing.hasExplicitPort("http://api.example"))
        XCTAssertTrue(Routing.hasExplicitPort("http://api.example:80/"))
        XCTAssertTrue(Routing.hasExplicitPort("http://api.example:8443?q"))
        XCTAssertFalse(Routing.hasExplicitPort("http://api.example/a:b"), "a colon in the path is not a port")
        XCTAssertFalse(Routing.hasExplicitPort("http://api.example?t=1:2"), "nor one in the query")
        XCTAssertFalse(Routing.hasExplicitPort("http://[::1]/"), "an IPv6 literal's colons are not a port")
        XCTAssertTrue(Routing.hasExplicitPort("http://[::1]:8080/x"))
    }
}
