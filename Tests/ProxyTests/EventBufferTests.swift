import XCTest
@testable import CountersignProxy
import CountersignHTTP
import CLibevent
import Foundation

/// The one wrapper over libevent's evbuffer: bytes are moved, copied, searched and hashed
/// where they lie, across the buffer's separate chains.
final class EventBufferTests: XCTestCase {
    /// A buffer of several chains: each part added from its own evbuffer, so libevent links
    /// the chains rather than merging them.
    private func chained(_ parts: [String]) -> OwnedEventBuffer {
        let whole = OwnedEventBuffer()!
        for part in parts {
            let piece = OwnedEventBuffer()!
            piece.buffer.add(part)
            piece.buffer.moveAll(to: whole.buffer)
        }
        return whole
    }

    private func text(_ buffer: EventBuffer) -> String {
        var bytes: [UInt8] = []
        buffer.forEachSegment { bytes.append(contentsOf: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A forwarded head is written straight into the buffer's free space: after what the buffer
    /// held, byte for byte the head as an array, and only the bytes it took are committed (its
    /// reserved bound is larger), so what is added next follows it directly.
    func testAForwardedHeadIsWrittenInPlaceAfterWhatTheBufferHolds() {
        let owned = chained(["queued;", "body;"])
        let request = RequestHead(method: "GET", target: "http://o/x", headers: HeaderFields([
            HeaderField("Host", "evil"), HeaderField("Connection", "close, X-A"), HeaderField("X-A", "1"), HeaderField("Accept", "*/*"),
        ]))
        let head = ForwardedHeads.requestHead(request, framing: .none, target: "/x", hostField: "o", answers: [],
                                              handshakeLeg: false, ownExpect: false)
        owned.buffer.add(head)
        owned.buffer.add("next")
        let expected = "GET /x HTTP/1.1\r\nHost: o\r\nAccept: */*\r\nVia: 1.1 countersign\r\n\r\n"
        XCTAssertEqual(String(decoding: head.bytes, as: UTF8.self), expected)
        XCTAssertLessThan(expected.utf8.count, head.byteBound)
        XCTAssertEqual(text(owned.buffer), "queued;body;" + expected + "next")
    }

    func testSegmentsFromAnOffsetSpanChainsAndStopWhenAsked() {
        let parts = (0..<20).map { "part\($0);" }
        let owned = chained(parts)
        let buffer = owned.buffer
        XCTAssertEqual(buffer.count, parts.joined().utf8.count)
        var segments = 0
        buffer.forEachSegment { _ in segments += 1 }
        XCTAssertGreaterThan(segments, 8, "more chains than one batch of vectors")

        let offset = "part0;part1;pa".utf8.count
        var seen: [UInt8] = []
        XCTAssertFalse(buffer.forEachSegment(from: offset) { seen.append(contentsOf: $0); return false })
        XCTAssertEqual(String(decoding: seen, as: UTF8.self), String(parts.joined().dropFirst(offset)))

        var calls = 0
        XCTAssertTrue(buffer.forEachSegment(from: 0) { _ in calls += 1; return calls == 3 })
        XCTAssertEqual(calls, 3)
        XCTAssertFalse(buffer.forEachSegment(from: buffer.count) { _ in XCTFail("nothing past the end"); return true })
    }

    func testCopyKeepsTheSourceAndMoveTakesFromIt() {
        let source = chained(["abc", "def", "ghi"])
        let copy = OwnedEventBuffer()!
        source.buffer.copyAll(to: copy.buffer)
        XCTAssertEqual(text(copy.buffer), "abcdefghi")
        XCTAssertEqual(source.buffer.count, 9)

        let moved = OwnedEventBuffer()!
        source.buffer.move(4, to: moved.buffer)
        XCTAssertEqual(text(moved.buffer), "abcd")
        XCTAssertEqual(text(source.buffer), "efghi")
        source.buffer.drain(2)
        XCTAssertEqual(text(source.buffer), "ghi")
        source.buffer.drainAll()
        XCTAssertTrue(source.buffer.isEmpty)
    }

    func testPullUpLinesAndRemoveAll() {
        let buffer = chained(["1a", ";ext\r", "\nrest"])
        XCTAssertEqual(buffer.buffer.lineLength(), 6, "a CRLF split across chains is found")
        XCTAssertEqual(buffer.buffer.pullUp(6).map { String(decoding: $0, as: UTF8.self) }, "1a;ext")
        XCTAssertNil(buffer.buffer.pullUp(100), "more than is held")
        XCTAssertEqual(buffer.buffer.pullUp(0)?.count, 0)
        XCTAssertEqual(String(decoding: buffer.buffer.removeAll(), as: UTF8.self), "1a;ext\r\nrest")
        XCTAssertTrue(buffer.buffer.isEmpty)

        let bare = chained(["no line\n", "here\r"])
        XCTAssertNil(bare.buffer.lineLength(), "a bare LF or a trailing CR is not a line end")
    }

    /// A drained chain waits on its thread for the next chain of its size (chain_memory.c), so
    /// a forwarded request's reads cost no malloc; a thread keeps only four of a size, and a
    /// buffer made from a kept chain holds exactly what was added to it.
    func testDrainedChainsAreKeptForTheNextOnesOfTheirSizeAndOnlyAFew() {
        cs_chain_memory_install()
        /// What the thread saw, read once it signalled (the semaphore orders the accesses).
        final class Seen: @unchecked Sendable {
            var kept: [Int32] = []
            var text = ""
        }
        let seen = Seen()
        let done = DispatchSemaphore(value: 0)
        // A thread of its own: what it keeps starts at nothing and is freed when it ends.
        Thread {
            let old = [UInt8](repeating: UInt8(ascii: "o"), count: 5000)
            let owned = (0..<6).map { _ in OwnedEventBuffer()! }
            for buffer in owned { old.withUnsafeBytes { buffer.buffer.add($0) } }
            seen.kept.append(cs_chain_memory_kept())
            for buffer in owned { buffer.buffer.drainAll() }
            seen.kept.append(cs_chain_memory_kept())
            let fresh = OwnedEventBuffer()!
            fresh.buffer.add("new" + String(repeating: "n", count: 4997))
            seen.kept.append(cs_chain_memory_kept())
            seen.text = self.text(fresh.buffer)
            done.signal()
        }.start()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(seen.kept, [0, 4, 3], "six 8 KiB chains drained, four kept; the next chain of that size takes one")
        XCTAssertEqual(seen.text, "new" + String(repeating: "n", count: 4997))
    }

    // MARK: Writing to a socket

    private func socketPair() -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        XCTAssertEqual(fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK), 0)
        XCTAssertEqual(fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK), 0)
        return (fds[0], fds[1])
    }

    private func readAll(_ fd: Int32) -> String {
        var bytes: [UInt8] = []
        var scratch = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            bytes.append(contentsOf: scratch[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Every chain goes, in order, in one call, and what went is drained: the peer reads the
    /// buffer's bytes exactly, and the buffer is empty.
    func testWritingToASocketSendsEveryChainInOrderAndDrainsWhatWent() {
        let (near, far) = socketPair()
        defer { close(near); close(far) }
        let parts = (0..<40).map { "chain \($0) of forty;" }
        let owned = chained(parts)
        var segments = 0
        owned.buffer.forEachSegment { _ in segments += 1 }
        XCTAssertGreaterThan(segments, 20, "the bytes lie in many chains")
        XCTAssertEqual(owned.buffer.write(to: near), parts.joined().utf8.count)
        XCTAssertTrue(owned.buffer.isEmpty)
        XCTAssertEqual(readAll(far), parts.joined())
    }

    /// A socket that takes only part of the buffer leaves the rest in it, from the first byte
    /// that did not go: after the peer reads, writing again sends exactly the remainder.
    func testASocketThatTakesPartLeavesTheRestToWriteNext() {
        let (near, far) = socketPair()
        defer { close(near); close(far) }
        var small: Int32 = 4096
        setsockopt(near, SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        let parts = (0..<64).map { index in String(repeating: Character(UnicodeScalar(UInt8(97 + index % 26))), count: 4000) }
        let owned = chained(parts)
        let total = owned.buffer.count
        let first = owned.buffer.write(to: near)
        XCTAssertGreaterThan(first, 0)
        XCTAssertLessThan(first, total, "the socket took all of 256,000 bytes: the test cannot tell")
        XCTAssertEqual(owned.buffer.count, total - first)
        var received = readAll(far)
        while !owned.buffer.isEmpty {
            // A full socket says EAGAIN until the peer reads; any other error ends the test
            // (asserting and going on would write again for ever).
            if owned.buffer.write(to: near) < 0 {
                let error = cs_errno()
                guard error == EAGAIN else { return XCTFail("writing the remainder failed: errno \(error)") }
            }
            received += readAll(far)
        }
        XCTAssertEqual(received, parts.joined())
    }
}
