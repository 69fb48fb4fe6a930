import XCTest
@testable import CountersignHTTP

/// The one rule for an answered challenge's body, an origin's 401 and a parent's 407 alike:
/// dropped by its framing when the connection can carry the retry, else left with it.
final class ChallengeBodyTests: XCTestCase {
    private func disposal(_ head: String, method: String = "GET", free: Bool = true) throws -> ChallengeBody {
        let response = try XCTUnwrap(acceptResponse(head + "\r\n"))
        return ChallengeBody.disposal(of: response, requestMethod: method, connectionFree: free)
    }

    func testTheRuleByFramingKeepAliveAndWhatHoldsTheConnection() throws {
        let rows: [(String, String, String, Bool, ChallengeBody)] = [
            ("a Content-Length body", "HTTP/1.1 401 Unauthorized\r\nContent-Length: 300000\r\n", "GET", true, .discard(.contentLength(300000))),
            ("a chunked body", "HTTP/1.1 407 Proxy Authentication Required\r\nTransfer-Encoding: chunked\r\n", "CONNECT", true, .discard(.chunked)),
            ("no body", "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n", "CONNECT", true, .discard(.contentLength(0))),
            ("no body to a HEAD", "HTTP/1.1 401 Unauthorized\r\nContent-Length: 10\r\n", "HEAD", true, .discard(.none)),
            ("the server closes", "HTTP/1.1 401 Unauthorized\r\nContent-Length: 10\r\nConnection: close\r\n", "GET", true, .leaveWithConnection),
            ("HTTP/1.0 without keep-alive", "HTTP/1.0 407 Proxy Authentication Required\r\nContent-Length: 10\r\n", "CONNECT", true, .leaveWithConnection),
            ("a close-delimited body", "HTTP/1.1 407 Proxy Authentication Required\r\n", "CONNECT", true, .leaveWithConnection),
            ("an invalid framing", "HTTP/1.1 401 Unauthorized\r\nContent-Length: 5\r\nContent-Length: 6\r\n", "GET", true, .leaveWithConnection),
            ("the connection is not free (upload going, or ended)", "HTTP/1.1 401 Unauthorized\r\nContent-Length: 10\r\n", "POST", false,
             .leaveWithConnection),
        ]
        for (name, head, method, free, expected) in rows {
            XCTAssertEqual(try disposal(head, method: method, free: free), expected, name)
        }
    }
}
