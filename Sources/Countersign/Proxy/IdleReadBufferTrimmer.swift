import CLibevent
import COpenSSL

/// Gives back the buffers a TLS stream keeps while its connection is idle, and lets a busy one
/// keep them.
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
///
/// OpenSSL's own read and write buffers (some 21 KiB a connection) are freed after every record
/// that drains them (the contexts' SSL_MODE_RELEASE_BUFFERS), which keeps an idle connection
/// small but costs a malloc and free of each per record (~2.8k instructions an intercepted
/// request). A client stream on which a second request ends within one round is busy, and so is
/// an upstream taken from the pool for it: they keep their buffers between records until the
/// end of a round in which they were not busy, when the buffers are freed and the mode comes
/// back. A connection that serves one request and waits keeps the mode throughout, and so does
/// a pooled upstream serving one new client after another (an upstream's own requests are not
/// counted: it serves whichever client takes it).
final class IdleReadBufferTrimmer {
    static let delaySeconds = 0.25
    private var streams: [Stream] = []
    private var round: UInt64 = 1
    private let base: OpaquePointer
    private lazy var timer = Timer(base: base) { [unowned self] in self.trimAll() }

    init(base: OpaquePointer) { self.base = base }

    /// Tells that an exchange ended on client `stream` and it waits for the next request: a
    /// stream on which a second request ends within a round is busy (`keepBuffers`).
    /// These three are inlined: asked of every plain stream at every request, they mostly
    /// answer at their first check, and a call to one retained the trimmer and its streams.
    @inline(__always) func requestEnded(on stream: Stream) {
        guard stream.keepsIdleBuffers else { return }
        guard stream.idleRound != round else { return keepBuffers(of: stream) }
        stream.idleRound = round
        listReservedInput(of: stream)
    }

    /// Tells that `stream` waits with nothing to read, other than at the end of a client's
    /// request: after a handshake, after a request head was dispatched, an upstream back in the
    /// pool (which serves a different client each time it leaves it, so its requests do not
    /// count toward busy). Counting these too marked every client busy after one request.
    @inline(__always) func wentIdle(_ stream: Stream) {
        guard stream.keepsIdleBuffers else { return }
        listReservedInput(of: stream)
    }

    /// A stream libevent reads is trimmed when the round ends; a stream read by our own reader
    /// reserves no input (only a busy one, listed by `keepBuffers`, has anything to give back).
    private func listReservedInput(of stream: Stream) {
        guard stream.keepsReservedInput else { return }
        list(stream)
    }

    /// `upstream`, taken from the pool for a request of `client`, keeps its TLS buffers too when
    /// that client is busy.
    @inline(__always) func upstream(_ upstream: Stream, serves client: Stream) {
        if isBusy(client) { keepBuffers(of: upstream) }
    }

    /// Whether a request of `client` ended twice this round (an upstream serving it keeps its buffers).
    @inline(__always) func isBusy(_ client: Stream) -> Bool { client.busyRound == round }

    /// A busy stream keeps its TLS buffers between records until the end of a round in which
    /// it was not busy.
    private func keepBuffers(of stream: Stream) {
        guard stream.busyRound != round, stream.keepsIdleBuffers else { return }
        stream.busyRound = round
        stream.keepTLSBuffers(true)
        list(stream)
    }

    private func list(_ stream: Stream) {
        guard stream.trimRound != round else { return }
        if streams.isEmpty { timer.arm(seconds: Self.delaySeconds) }
        stream.trimRound = round
        streams.append(stream)
    }

    private func trimAll() {
        let batch = streams
        streams.removeAll(keepingCapacity: true)
        let ended = round
        round &+= 1
        for stream in batch {
            // Whatever its kind now: one listed during its handshake has its reader by now.
            stream.releaseEmptyInput()
            guard stream.busyRound != 0 else { continue }
            // Busy this round: it keeps its buffers a round more (freed and made again every
            // round, they would leave a hole in the heap each time).
            if stream.busyRound == ended {
                stream.trimRound = round
                streams.append(stream)
            } else {
                stream.releaseTLSBuffers()
            }
        }
        if !streams.isEmpty { timer.arm(seconds: Self.delaySeconds) }
    }
}
