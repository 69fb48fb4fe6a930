import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import CountersignProxy

final class ListeningSocketTests: XCTestCase {
    /// Heads must not wait for Nagle's algorithm on accepted client sockets: the listening
    /// socket carries TCP_NODELAY, and what it accepts has it without a setsockopt of its own.
    func testAcceptedSocketsHaveNoDelay() throws {
        let listening = try ListeningSocket(host: "127.0.0.1", port: 0)
        let client = try TestSocket.connect(port: listening.port)
        defer { close(client.fd) }
        var pollDescriptor = pollfd(fd: listening.fd, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&pollDescriptor, 1, 5000), 1, "the connection never reached the listener")
        let accepted = accept(listening.fd, nil, nil)
        XCTAssertGreaterThanOrEqual(accepted, 0)
        defer { close(accepted) }
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        XCTAssertEqual(getsockopt(accepted, Int32(IPPROTO_TCP), TCP_NODELAY, &value, &length), 0)
        XCTAssertEqual(value, 1, "an accepted socket waits for Nagle's algorithm")
    }
}
