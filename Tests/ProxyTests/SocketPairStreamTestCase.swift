import CLibevent
import XCTest
@testable import CountersignProxy

/// The stream reading and writing tests' fixture: a plain stream on one end of a socket pair,
/// with its own event base and its delegate's calls recorded, the test acting as the peer on the
/// other end (`fds[1]`, closed in `tearDown` unless the test closed it and set -1).
class SocketPairStreamTestCase: XCTestCase {
    final class Recorder: CountersignProxy.StreamDelegate {
        var readable = 0
        var writable = 0
        /// Each event with the direction it came from: "eof/reading", "timeout/writing".
        var events: [String] = []
        func streamReadable(_ stream: CountersignProxy.Stream) { readable += 1 }
        func streamWritable(_ stream: CountersignProxy.Stream) { writable += 1 }
        func stream(_ stream: CountersignProxy.Stream, event: StreamEvent) {
            events.append("\(event)" + (event.reading ? "/reading" : "") + (event.writing ? "/writing" : ""))
        }
    }

    private(set) var base: OpaquePointer!
    var fds: [Int32] = [-1, -1]
    private(set) var stream: CountersignProxy.Stream!
    let recorder = Recorder()

    /// Both ends non-blocking, so the peer can fill the stream's socket and read it without waiting.
    var nonblockingEnds: Bool { false }

    override func setUpWithError() throws {
        base = try XCTUnwrap(event_base_new())
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        if nonblockingEnds {
            XCTAssertEqual(evutil_make_socket_nonblocking(fds[0]), 0)
            XCTAssertEqual(evutil_make_socket_nonblocking(fds[1]), 0)
        }
        stream = try XCTUnwrap(CountersignProxy.Stream.socket(base: base, fd: fds[0]))
        stream.delegate = recorder
    }

    override func tearDown() {
        stream.close()
        if fds[1] >= 0 { close(fds[1]) }
        event_base_free(base)
    }
}
