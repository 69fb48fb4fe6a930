import CLibevent
import COpenSSL

/// Gives back the read buffer a TLS bufferevent keeps while its connection is idle.
///
/// bufferevent_openssl reserves input space before each `SSL_read` and keeps it when the read
/// finds nothing, which is how every read loop ends; a drain below the read high watermark
/// starts such a loop again; and `evbuffer_drain` frees chains only when it drains a
/// non-empty buffer. So each idle TLS connection, on the client side of an interception or
/// parked in the upstream pool, would hold a 32 KiB chain for nothing (measured with massif).
/// The trim runs on the next loop iteration, after libevent's read loop has made its last
/// reservation; one timer serves the whole worker.
final class IdleReadBufferTrimmer {
    private var streams: [Stream] = []
    private let base: OpaquePointer
    private lazy var timer = Timer(base: base) { [unowned self] in self.trimAll() }

    init(base: OpaquePointer) { self.base = base }

    /// Trims `stream` on the next loop iteration; plain socket streams reserve nothing and are left alone.
    func schedule(_ stream: Stream) {
        guard !stream.direct else { return }
        if streams.isEmpty { timer.arm(seconds: 0) }
        streams.append(stream)
    }

    private func trimAll() {
        let batch = streams
        streams.removeAll(keepingCapacity: true)
        for stream in batch { stream.releaseEmptyInput() }
    }
}
