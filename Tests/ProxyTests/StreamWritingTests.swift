import CLibevent
import XCTest
@testable import CountersignProxy

/// A plain stream writes its socket with its own writer (socket_writer.c), keeping the
/// bufferevent's contract: what a full socket held back goes out whole and in order once it
/// drains, the owner hears `streamWritable` when the unsent bytes are down to a quarter of the
/// budget, and a peer that stops reading meets the write timeout.
final class StreamWritingTests: SocketPairStreamTestCase {
    override var nonblockingEnds: Bool { true }

    override func setUpWithError() throws {
        try super.setUpWithError()
        stream.enableReadWrite()
    }

    /// Adds `count` bytes in chains of a few kilobytes, each chain of one letter.
    private func queue(_ count: Int) -> [UInt8] {
        var expected: [UInt8] = []
        var index = 0
        while expected.count < count {
            let chain = [UInt8](repeating: UInt8(97 + index % 26), count: min(3000, count - expected.count))
            chain.withUnsafeBytes { stream.outputWithoutFlush?.add($0) }
            expected += chain
            index += 1
        }
        return expected
    }

    func testWhatAFullSocketHeldBackGoesOutWholeAndInOrderAndWritableIsTold() {
        stream.setWatermarks(readHigh: 0, writeBudget: 64 * 1024)
        let expected = queue(4 * 1024 * 1024)
        XCTAssertFalse(stream.flush(), "the socket could not take everything at once")
        XCTAssertGreaterThan(stream.unsentLength, 0)
        let received = peerReads(expected.count)
        XCTAssertEqual(received.count, expected.count)
        XCTAssertTrue(received == expected, "the bytes arrived as written")
        XCTAssertEqual(stream.unsentLength, 0)
        XCTAssertGreaterThan(recorder.writable, 0, "the owner heard the output drain")
        XCTAssertEqual(recorder.events, [], "no write failed")
        // Direct writing goes on once the socket drained.
        _ = queue(100)
        XCTAssertTrue(stream.flush())
    }

    /// Reads what the peer gets until `count` bytes came or ten seconds passed.
    private func peerReads(_ count: Int) -> [UInt8] {
        var received: [UInt8] = []
        var bytes = [UInt8](repeating: 0, count: 64 * 1024)
        let deadline = Date().addingTimeInterval(10)
        while received.count < count && Date() < deadline {
            event_base_loop(base, Int32(EVLOOP_ONCE | EVLOOP_NONBLOCK))
            let got = bytes.withUnsafeMutableBytes { recv(fds[1], $0.baseAddress, $0.count, 0) }
            if got > 0 { received += bytes[..<got] } else { usleep(200) }
        }
        return received
    }

    /// A tunnel takes the socket over (`detachSocket`) with what the socket had not taken yet.
    func testDetachingTheSocketHandsOverWhatTheWriterHeldBack() throws {
        let expected = queue(4 * 1024 * 1024)
        XCTAssertFalse(stream.flush())
        let held = try XCTUnwrap(OwnedEventBuffer())
        let fd = stream.detachSocket(movingInputTo: held.buffer, outputTo: held.buffer)
        defer { close(fd) }
        XCTAssertGreaterThan(held.buffer.count, 0)
        var sent: [UInt8] = []
        held.buffer.forEachSegment { sent += $0 }
        let received = peerReads(expected.count - sent.count)
        XCTAssertTrue(received + sent == expected, "the socket's bytes and the held ones are the whole, in order")
    }

    /// A TLS filter takes the bufferevent over (`relinquish`): libevent writes what the socket
    /// had not taken yet.
    func testRelinquishingLeavesWhatTheWriterHeldBackForLibeventToWrite() throws {
        let expected = queue(4 * 1024 * 1024)
        XCTAssertFalse(stream.flush())
        let bev = try XCTUnwrap(stream.bev)
        stream.relinquish()
        defer { bufferevent_free(bev) }
        let received = peerReads(expected.count)
        XCTAssertEqual(received.count, expected.count)
        XCTAssertTrue(received == expected, "the bytes arrived as written")
    }

    func testAPeerThatStopsReadingMeetsTheWriteTimeout() {
        stream.setTimeouts(read: nil, write: 0.2)
        _ = queue(4 * 1024 * 1024)
        let start = Date()
        XCTAssertFalse(stream.flush())
        let deadline = Date().addingTimeInterval(3)
        while recorder.events.isEmpty && Date() < deadline {
            event_base_loop(base, Int32(EVLOOP_ONCE | EVLOOP_NONBLOCK))
            usleep(1000)
        }
        XCTAssertEqual(recorder.events, ["timeout/writing"])
        XCTAssertGreaterThan(Date().timeIntervalSince(start), 0.15)
    }

    func testAPeerThatWentAwayEndsWritingWithAnError() {
        signal(SIGPIPE, SIG_IGN)
        close(fds[1])
        fds[1] = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)  // closed by tearDown
        _ = queue(100)
        XCTAssertFalse(stream.flush())
        // Reading hears the end of file on its own.
        var writing: [String] { recorder.events.filter { $0.hasSuffix("/writing") } }
        let deadline = Date().addingTimeInterval(3)
        while writing.isEmpty && Date() < deadline {
            event_base_loop(base, Int32(EVLOOP_ONCE | EVLOOP_NONBLOCK))
            usleep(1000)
        }
        XCTAssertEqual(writing, ["error/writing"])
    }
}
