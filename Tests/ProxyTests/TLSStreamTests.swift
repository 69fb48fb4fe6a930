import CLibevent
import COpenSSL
import CountersignInterception
import XCTest
@testable import CountersignProxy

/// A TLS stream's own reader (socket_reader.c) and writer (socket_writer.c) after the handshake.
/// OpenSSL reads ahead, so records can wait inside the SSL with the socket drained, and the
/// socket will not announce them: they arrive when reading resumes (a drain below the high
/// watermark, or reading switched on again), with nothing more from the peer. A short output
/// of several chains (a head, then its body) leaves as one record, and what a full socket held
/// back goes out whole and in order once it drains.
final class TLSStreamTests: XCTestCase {
    private final class Recorder: CountersignProxy.StreamDelegate {
        var events: [String] = []
        func streamReadable(_ stream: CountersignProxy.Stream) {}
        func streamWritable(_ stream: CountersignProxy.Stream) {}
        func stream(_ stream: CountersignProxy.Stream, event: StreamEvent) { events.append("\(event)") }
    }

    private var directory: URL!
    private var base: OpaquePointer!
    private var fds: [Int32] = [-1, -1]
    private var stream: CountersignProxy.Stream!
    private var serverSSL: OpaquePointer!
    private var clientContext: OpaquePointer!
    private var client: OpaquePointer!
    private let recorder = Recorder()

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("countersign-tls-stream-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let ca = try InterceptionCA.create(certificatePath: directory.appendingPathComponent("ca.pem").path,
                                           keyPath: directory.appendingPathComponent("ca.key").path,
                                           scope: .hosts(["api.example"]), force: true)
        // The interception context reads ahead, as every TLS context of the proxy does.
        let context = try InterceptionTLSContext(minter: LeafMinter(ca: ca))
        serverSSL = try context.makeServerSSL(for: "api.example")
        base = try XCTUnwrap(event_base_new())
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        XCTAssertEqual(evutil_make_socket_nonblocking(fds[0]), 0)
        XCTAssertEqual(evutil_make_socket_nonblocking(fds[1]), 0)
        stream = try XCTUnwrap(CountersignProxy.Stream.tlsSocket(base: base, fd: fds[0], ssl: serverSSL, state: BUFFEREVENT_SSL_ACCEPTING))
        stream.delegate = recorder
        stream.enableReadWrite()
        clientContext = try XCTUnwrap(SSL_CTX_new(TLS_client_method()))
        client = try XCTUnwrap(SSL_new(clientContext))
        SSL_set_fd(client, fds[1])
        try handshake()
    }

    override func tearDown() {
        stream.close()
        SSL_free(client)
        SSL_CTX_free(clientContext)
        close(fds[1])
        event_base_free(base)
        try? FileManager.default.removeItem(at: directory)
    }

    /// Drives the client's handshake and the loop until the stream reads with its own reader.
    private func handshake() throws {
        let deadline = Date().addingTimeInterval(5)
        var done = false
        while Date() < deadline {
            if !done { done = SSL_connect(client) == 1 }
            if done && stream.reader != nil { return }
            event_base_loop(base, Int32(EVLOOP_ONCE | EVLOOP_NONBLOCK))
            usleep(1000)
        }
        XCTFail("the handshake did not finish: \(recorder.events)")
    }

    /// Runs the loop until `done` or two seconds pass.
    private func runLoop(until done: () -> Bool) {
        let deadline = Date().addingTimeInterval(2)
        while !done() && Date() < deadline { event_base_loop(base, Int32(EVLOOP_ONCE | EVLOOP_NONBLOCK)); usleep(1000) }
    }

    /// Runs the loop for a tenth of a second, for what must not happen.
    private func settle() {
        let deadline = Date().addingTimeInterval(0.1)
        while Date() < deadline { event_base_loop(base, Int32(EVLOOP_ONCE | EVLOOP_NONBLOCK)); usleep(1000) }
    }

    /// Two records, each its own SSL_write, in the socket at once.
    private func clientSends(_ records: String...) {
        for record in records {
            XCTAssertEqual(Array(record.utf8).withUnsafeBytes { SSL_write(client, $0.baseAddress, Int32($0.count)) }, Int32(record.utf8.count))
        }
    }

    private var inputText: String {
        guard let input = stream.input, let bytes = input.pullUp(input.count) else { return "" }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Stops at the watermark after the first record, the second read ahead into the SSL.
    private func readFirstOfTwoRecords() {
        stream.setWatermarks(readHigh: 5, writeBudget: 0)
        clientSends("first", "secnd")
        runLoop { stream.inputLength == 5 }
        settle()
        XCTAssertEqual(inputText, "first", "reading stops at the watermark")
        XCTAssertEqual(SSL_has_pending(serverSSL), 1, "the second record waits inside the SSL, not in the socket")
    }

    func testARecordLeftInsideTheSSLArrivesWhenADrainResumesReading() {
        readFirstOfTwoRecords()
        stream.input?.drain(5)
        runLoop { stream.inputLength == 5 }
        XCTAssertEqual(inputText, "secnd")
        XCTAssertEqual(recorder.events, ["connected"], "the handshake's, and no ending")
    }

    func testARecordLeftInsideTheSSLArrivesWhenReadingIsSwitchedOnAgain() {
        readFirstOfTwoRecords()
        stream.disableRead()
        stream.input?.drain(5)
        settle()
        XCTAssertEqual(stream.inputLength, 0, "nothing is read while reading is off")
        stream.enableRead()
        runLoop { stream.inputLength == 5 }
        XCTAssertEqual(inputText, "secnd")
        XCTAssertEqual(recorder.events, ["connected"], "the handshake's, and no ending")
    }

    /// `text` as a chain of its own at the end of the stream's output (as a body moved from
    /// the upstream's input is), not flushed.
    private func appendChain(_ text: String) throws {
        let chain = try XCTUnwrap(OwnedEventBuffer())
        chain.buffer.add(text)
        chain.buffer.moveAll(to: try XCTUnwrap(stream.outputWithoutFlush))
    }

    /// What the client reads with one SSL_read (one record at most, in TLS 1.3).
    private func clientReadsOnce() -> String {
        var bytes = [UInt8](repeating: 0, count: 16 * 1024)
        var count: Int32 = -1
        runLoop {
            count = bytes.withUnsafeMutableBytes { SSL_read(client, $0.baseAddress, Int32($0.count)) }
            return count > 0
        }
        return count > 0 ? String(decoding: bytes[..<Int(count)], as: UTF8.self) : ""
    }

    func testAHeadAndItsBodyInTwoChainsLeaveAsOneRecord() throws {
        let head = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
        let body = String(repeating: "b", count: 1000)
        try appendChain(head)
        try appendChain(body)
        XCTAssertTrue(stream.flush(), "the socket took all of it")
        XCTAssertEqual(clientReadsOnce(), head + body)
    }

    /// Many short heads and bodies, more than the socket holds: the writer waits for it with a
    /// record made of several chains pending, and offers the same bytes again when it drains.
    func testWhatAFullSocketHeldBackGoesOutWholeAndInOrder() throws {
        var expected = ""
        for index in 0..<600 {
            let head = "HTTP/1.1 200 OK\r\nX-Index: \(index)\r\n\r\n"
            let body = String(repeating: Character(Unicode.Scalar(UInt8(97 + index % 26))), count: 1000)
            try appendChain(head)
            try appendChain(body)
            expected += head + body
        }
        XCTAssertFalse(stream.flush(), "the socket could not take everything at once")
        var received = ""
        let deadline = Date().addingTimeInterval(10)
        var bytes = [UInt8](repeating: 0, count: 16 * 1024)
        while received.utf8.count < expected.utf8.count && Date() < deadline {
            event_base_loop(base, Int32(EVLOOP_ONCE | EVLOOP_NONBLOCK))
            let count = bytes.withUnsafeMutableBytes { SSL_read(client, $0.baseAddress, Int32($0.count)) }
            if count > 0 { received += String(decoding: bytes[..<Int(count)], as: UTF8.self) } else { usleep(200) }
        }
        XCTAssertEqual(received.utf8.count, expected.utf8.count)
        XCTAssertTrue(received == expected, "the bytes arrived as written")
        XCTAssertEqual(stream.unsentLength, 0)
        XCTAssertEqual(recorder.events, ["connected"], "no write failed")
    }
}
