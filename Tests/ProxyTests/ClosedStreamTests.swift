import CLibevent
import XCTest
@testable import CountersignProxy

/// A stream's buffers exist only while its bufferevent does: once closed (by a peer's reset,
/// a timeout or a teardown earlier in the same callback) they are nil, never a trap.
final class ClosedStreamTests: XCTestCase {
    func testAClosedStreamHasNoBuffersAndMovesNothing() throws {
        let base = try XCTUnwrap(event_base_new())
        defer { event_base_free(base) }
        var fds: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        defer { close(fds[1]) }
        let stream = try XCTUnwrap(Stream.socket(base: base, fd: fds[0]))
        let open = try XCTUnwrap(stream.input)
        XCTAssertNotNil(stream.output)
        XCTAssertTrue(open.isEmpty)

        stream.close()
        XCTAssertNil(stream.input)
        XCTAssertNil(stream.output)
        XCTAssertEqual(stream.inputLength, 0)
        XCTAssertEqual(stream.unsentLength, 0)
        XCTAssertFalse(stream.flush())
        stream.write("after close")  // dropped, not a crash

        // A relay between a closed stream and an open one moves nothing.
        var other: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &other), 0)
        defer { close(other[1]) }
        let peer = try XCTUnwrap(Stream.socket(base: base, fd: other[0]))
        defer { peer.close() }
        var pump = BodyPump(.untilClose)
        guard let source = stream.input, let destination = peer.output else { return }
        _ = pump.pump(from: source, to: destination, room: .max)
        XCTFail("a closed stream handed out a buffer")
    }
}
