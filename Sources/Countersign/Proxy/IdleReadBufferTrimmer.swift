import CLibevent
import COpenSSL

/// Gives back the read buffer a TLS bufferevent keeps while its connection is idle.
///
/// bufferevent_openssl reserves input space before each `SSL_read` and keeps it when the read
/// finds nothing, which is how every read loop ends; a drain below the read high watermark
/// starts such a loop again; and `evbuffer_drain` frees chains only when it drains a
/// non-empty buffer. So each idle TLS connection, on the client side of an interception or
/// parked in the upstream pool, would hold a 32 KiB chain for nothing (measured with massif).
/// The trim runs a quarter of a second after a stream is listed, after libevent's read loop
/// has made its last reservation; one timer serves the whole worker. Not on the next loop
/// iteration: a kept-alive connection is listed after every request, and trimming it then
/// cost a timer, two watermark changes and a 32 KiB free and malloc per request (some 8k
/// instructions of an intercepted request's 115k). A stream listed in a round waiting to run
/// is not listed again, so a busy connection is trimmed at most four times a second.
final class IdleReadBufferTrimmer {
    static let delaySeconds = 0.25
    private var streams: [Stream] = []
    private var round: UInt64 = 1
    private let base: OpaquePointer
    private lazy var timer = Timer(base: base) { [unowned self] in self.trimAll() }

    init(base: OpaquePointer) { self.base = base }

    /// Trims `stream` when the round ends if its input is still empty then; streams read by
    /// our own readers (plain sockets, TLS after its handshake) reserve nothing and are left alone.
    func schedule(_ stream: Stream) {
        guard stream.keepsReservedInput, stream.trimRound != round else { return }
        if streams.isEmpty { timer.arm(seconds: Self.delaySeconds) }
        stream.trimRound = round
        streams.append(stream)
    }

    private func trimAll() {
        let batch = streams
        streams.removeAll(keepingCapacity: true)
        round &+= 1
        for stream in batch { stream.releaseEmptyInput() }
    }
}
