import CLibevent
import COpenSSL
import XCTest
@testable import CountersignProxy

/// OpenSSL frees a TLS stream's read and write buffers after each record (the contexts'
/// SSL_MODE_RELEASE_BUFFERS), so an idle connection holds none. A stream on which two requests
/// end within one trim round is busy: it keeps them between records until a round ends in
/// which no request ended on it, when they are freed and the mode is back.
final class IdleTLSBufferTests: XCTestCase {
    private var base: OpaquePointer!
    private var context: OpaquePointer!
    private var fds: [Int32] = [-1, -1]
    private var stream: CountersignProxy.Stream!
    private var trimmer: IdleReadBufferTrimmer!

    override func setUpWithError() throws {
        base = try XCTUnwrap(event_base_new())
        context = try XCTUnwrap(SSL_CTX_new(TLS_server_method()))
        _ = SSL_CTX_ctrl(context, SSL_CTRL_MODE, Int(SSL_MODE_RELEASE_BUFFERS), nil)
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        XCTAssertEqual(evutil_make_socket_nonblocking(fds[0]), 0)
        let ssl = try XCTUnwrap(SSL_new(context))
        stream = try XCTUnwrap(CountersignProxy.Stream.tlsSocket(base: base, fd: fds[0], ssl: ssl, state: BUFFEREVENT_SSL_ACCEPTING))
        trimmer = IdleReadBufferTrimmer(base: base)
    }

    override func tearDown() {
        stream.close()
        trimmer = nil
        close(fds[1])
        SSL_CTX_free(context)
        event_base_free(base)
    }

    private var releasesBuffers: Bool {
        guard let ssl = stream.ssl else { return false }
        return SSL_ctrl(ssl, SSL_CTRL_MODE, 0, nil) & Int(SSL_MODE_RELEASE_BUFFERS) != 0
    }

    /// Runs the loop past the end of the trim round.
    private func endRound() {
        let deadline = Date().addingTimeInterval(IdleReadBufferTrimmer.delaySeconds + 0.15)
        while Date() < deadline { event_base_loop(base, Int32(EVLOOP_ONCE | EVLOOP_NONBLOCK)); usleep(1000) }
    }

    func testAConnectionIdleAfterOneRequestKeepsReleasingItsBuffers() {
        trimmer.wentIdle(stream)   // its handshake ended
        trimmer.requestEnded(on: stream)
        XCTAssertTrue(releasesBuffers)
        endRound()
        XCTAssertTrue(releasesBuffers)
    }

    func testABusyConnectionKeepsItsBuffersUntilARoundInWhichItWasNotBusy() {
        trimmer.requestEnded(on: stream)
        trimmer.requestEnded(on: stream)
        XCTAssertFalse(releasesBuffers, "a second request in the round: buffers kept between records")
        trimmer.requestEnded(on: stream)
        XCTAssertFalse(releasesBuffers)
        endRound()
        XCTAssertFalse(releasesBuffers, "busy in the round that ended: kept a round more")
        trimmer.requestEnded(on: stream)
        endRound()
        XCTAssertTrue(releasesBuffers, "one request in a round is not busy: buffers freed, released after each record again")
        trimmer.requestEnded(on: stream)
        XCTAssertTrue(releasesBuffers, "one request in the new round")
        trimmer.requestEnded(on: stream)
        XCTAssertFalse(releasesBuffers, "busy again")
    }

    func testAPooledUpstreamKeepsItsBuffersOnlyWhileItServesABusyClient() throws {
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        defer { close(pair[1]) }
        XCTAssertEqual(evutil_make_socket_nonblocking(pair[0]), 0)
        let client = try XCTUnwrap(CountersignProxy.Stream.tlsSocket(base: base, fd: pair[0], ssl: try XCTUnwrap(SSL_new(context)),
                                                                      state: BUFFEREVENT_SSL_ACCEPTING))
        defer { client.close() }
        trimmer.wentIdle(stream)   // parked twice: pooled upstreams do not count requests
        trimmer.wentIdle(stream)
        trimmer.requestEnded(on: client)
        trimmer.upstream(stream, serves: client)
        XCTAssertTrue(releasesBuffers, "its client has had one request")
        trimmer.requestEnded(on: client)
        trimmer.upstream(stream, serves: client)
        XCTAssertFalse(releasesBuffers, "its client is busy")
        endRound()
        endRound()
        XCTAssertTrue(releasesBuffers)
    }

    func testAPlainStreamIsLeftAlone() throws {
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        defer { close(pair[1]) }
        let plain = try XCTUnwrap(CountersignProxy.Stream.socket(base: base, fd: pair[0]))
        defer { plain.close() }
        trimmer.requestEnded(on: plain)
        trimmer.requestEnded(on: plain)
        XCTAssertEqual(plain.busyRound, 0)
        XCTAssertEqual(plain.trimRound, 0)
    }
}
