import CLibevent
import XCTest
@testable import CountersignProxy

/// A plain stream reads its socket with its own reader (no FIONREAD per read) and keeps the
/// bufferevent's contract: bytes then `streamReadable`, reading paused at the high watermark
/// and resumed by a drain, a read timeout restarted by each read, EOF reported once.
final class StreamReadingTests: SocketPairStreamTestCase {
    private func peerSends(_ text: String) {
        XCTAssertEqual(text.utf8.count, Array(text.utf8).withUnsafeBytes { send(fds[1], $0.baseAddress, $0.count, 0) })
    }

    /// Runs the loop for a tenth of a second, for what must not happen.
    private func settle() {
        let deadline = Date().addingTimeInterval(0.1)
        while Date() < deadline { event_base_loop(base, Int32(EVLOOP_ONCE | EVLOOP_NONBLOCK)); usleep(1000) }
    }

    /// Runs the loop until `done` or two seconds pass.
    private func runLoop(until done: () -> Bool) {
        let deadline = Date().addingTimeInterval(2)
        while !done() && Date() < deadline { event_base_loop(base, Int32(EVLOOP_ONCE | EVLOOP_NONBLOCK)); usleep(1000) }
    }

    func testBytesArriveThenEndOfFileOnce() {
        stream.enableReadWrite()
        peerSends("hello")
        runLoop { stream.inputLength == 5 }
        XCTAssertEqual(stream.inputLength, 5)
        XCTAssertGreaterThan(recorder.readable, 0)
        close(fds[1])
        fds[1] = -1
        runLoop { !recorder.events.isEmpty }
        settle()
        XCTAssertEqual(recorder.events, ["eof/reading"])
    }

    func testReadingPausesAtTheHighWatermarkAndADrainResumesIt() {
        stream.setWatermarks(readHigh: 8, writeBudget: 0)
        stream.enableReadWrite()
        peerSends("0123456789abcdefghij")
        runLoop { stream.inputLength >= 8 }
        settle()
        XCTAssertEqual(stream.inputLength, 8, "reading stops at the watermark")
        stream.input?.drain(8)
        runLoop { stream.inputLength == 8 }
        settle()
        XCTAssertEqual(stream.inputLength, 8, "the drain resumed reading, again up to the watermark")
        stream.input?.drain(8)
        runLoop { stream.inputLength == 4 }
        settle()
        XCTAssertEqual(stream.inputLength, 4, "all 20 bytes were read")
    }

    func testDisabledReadingLeavesBytesInTheSocketUntilEnabled() {
        stream.enableReadWrite()
        stream.disableRead()
        peerSends("later")
        settle()
        XCTAssertEqual(stream.inputLength, 0)
        stream.enableRead()
        runLoop { stream.inputLength == 5 }
        XCTAssertEqual(stream.inputLength, 5)
    }

    func testAQuietPeerMeetsTheReadTimeoutAndEachReadRestartsIt() {
        stream.setTimeouts(read: 0.3, write: nil)
        stream.enableReadWrite()
        let start = Date()
        for _ in 0..<4 {
            usleep(150_000)
            peerSends("x")
            runLoop { stream.inputLength > 0 }
            stream.input?.drain(stream.inputLength)
        }
        XCTAssertEqual(recorder.events, [], "bytes every 150 ms keep a 300 ms read timeout from firing")
        runLoop { !recorder.events.isEmpty }
        XCTAssertEqual(recorder.events, ["timeout/reading"])
        XCTAssertGreaterThan(Date().timeIntervalSince(start), 0.8)
    }

    /// The read timeout is a stored expiry checked by a timer armed once: pausing reading
    /// stops it, enabling again restarts it from then, and a shorter timeout is not kept
    /// waiting for the timer armed for a longer one.
    func testTheReadTimeoutCountsOnlyWhileReadingAndFromTheLatestStart() {
        stream.setTimeouts(read: 0.2, write: nil)
        stream.enableReadWrite()
        stream.disableRead()
        usleep(300_000)
        settle()
        XCTAssertEqual(recorder.events, [], "the timeout ran while reading was off")
        let enabled = Date()
        stream.enableRead()
        runLoop { !recorder.events.isEmpty }
        XCTAssertEqual(recorder.events, ["timeout/reading"])
        XCTAssertGreaterThan(Date().timeIntervalSince(enabled), 0.19, "the timeout did not restart with reading")

        recorder.events = []
        stream.setTimeouts(read: 5, write: nil)
        stream.enableRead()
        let shortened = Date()
        stream.setTimeouts(read: 0.1, write: nil)
        runLoop { !recorder.events.isEmpty }
        XCTAssertEqual(recorder.events, ["timeout/reading"])
        XCTAssertLessThan(Date().timeIntervalSince(shortened), 1, "a shortened timeout waited for the longer one")
    }
}
