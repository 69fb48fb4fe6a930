/// Writes to a stream that leave once per loop iteration, after every callback due in it, rather
/// than at the end of each callback: for an HTTP/2 connection, the frames of the streams that
/// several callbacks served together share TLS records and one `write`.
final class IterationFlush {
    private let stream: Stream
    private let base: OpaquePointer
    private lazy var timer = Timer(base: base) { [unowned self] in self.stream.scheduleFlush() }

    init(stream: Stream, base: OpaquePointer) {
        self.stream = stream
        self.base = base
    }

    func write(_ bytes: [UInt8]) {
        stream.append(bytes)
        timer.fireSoon()
    }

    /// A frame whose payload is the first `count` octets of `source`, moved behind `header`
    /// (libevent relinks whole chains; nothing passes through an array).
    func write(header: UnsafeRawBufferPointer, payload count: Int, from source: EventBuffer) {
        guard let output = stream.outputWithoutFlush else { return source.drain(count) }
        output.add(header)
        if count > 0 { source.move(count, to: output) }
        timer.fireSoon()
    }

    /// The stream is closing: nothing more to flush.
    func cancel() { timer.cancel() }
}
