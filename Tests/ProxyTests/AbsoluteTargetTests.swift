import XCTest
@testable import CountersignProxy

/// Whether an absolute-form target wrote its port decides, for `upstream_tls` hosts, whether
/// `http://host/` goes to 443 or to the port the client named.
final class AbsoluteTargetTests: XCTestCase {
    func testExplicitPortIsFoundOnlyInTheAuthority() {
        XCTAssertFalse(ClientConnection.hasExplicitPort("http://api.example/"))
        XCTAssertFalse(ClientConnection.hasExplicitPort("http://api.example"))
        XCTAssertTrue(ClientConnection.hasExplicitPort("http://api.example:80/"))
        XCTAssertTrue(ClientConnection.hasExplicitPort("http://api.example:8443?q"))
        XCTAssertFalse(ClientConnection.hasExplicitPort("http://api.example/a:b"), "a colon in the path is not a port")
        XCTAssertFalse(ClientConnection.hasExplicitPort("http://api.example?t=1:2"), "nor one in the query")
        XCTAssertFalse(ClientConnection.hasExplicitPort("http://[::1]/"), "an IPv6 literal's colons are not a port")
        XCTAssertTrue(ClientConnection.hasExplicitPort("http://[::1]:8080/x"))
    }
}
