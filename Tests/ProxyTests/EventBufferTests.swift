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
}
