import CEventSSL

/// What a connection does when its bufferevent has news.
protocol StreamDelegate: AnyObject {
    func streamReadable(_ stream: Stream)
    func streamWritable(_ stream: Stream)
    func stream(_ stream: Stream, event: StreamEvent)
}

/// The events libevent reports, decoded once.
struct StreamEvent: CustomStringConvertible {
    let flags: Int16

    var connected: Bool { flags & Int16(BEV_EVENT_CONNECTED) != 0 }
    var eof: Bool { flags & Int16(BEV_EVENT_EOF) != 0 }
    var error: Bool { flags & Int16(BEV_EVENT_ERROR) != 0 }
    var timeout: Bool { flags & Int16(BEV_EVENT_TIMEOUT) != 0 }
    var reading: Bool { flags & Int16(BEV_EVENT_READING) != 0 }
    var writing: Bool { flags & Int16(BEV_EVENT_WRITING) != 0 }

    var description: String {
        [connected ? "connected" : nil, eof ? "eof" : nil, error ? "error" : nil, timeout ? "timeout" : nil]
            .compactMap { $0 }.joined(separator: ",")
    }
}

/// One bufferevent. The owner keeps the Stream alive for as long as the bufferevent may
/// call back; `close()` frees the bufferevent (and the socket) and silences callbacks.
final class Stream {
    private(set) var bev: OpaquePointer?
    weak var delegate: StreamDelegate?

    init(bev: OpaquePointer) {
        self.bev = bev
        let context = Unmanaged.passUnretained(self).toOpaque()
        bufferevent_setcb(bev, streamReadTrampoline, streamWriteTrampoline, streamEventTrampoline, context)
    }

    /// A new non-blocking socket bufferevent on `base`, closing `fd` when freed.
    static func socket(base: OpaquePointer, fd: Int32) -> Stream? {
        guard let bev = bufferevent_socket_new(base, fd, Int32(BEV_OPT_CLOSE_ON_FREE.rawValue)) else { return nil }
        return Stream(bev: bev)
    }

    deinit { close() }

    var isOpen: Bool { bev != nil }
    var input: OpaquePointer { bufferevent_get_input(bev!) }
    var output: OpaquePointer { bufferevent_get_output(bev!) }
    var inputLength: Int { bev.map { evbuffer_get_length(bufferevent_get_input($0)) } ?? 0 }
    var outputLength: Int { bev.map { evbuffer_get_length(bufferevent_get_output($0)) } ?? 0 }

    /// Bytes not yet handed to the socket: this bufferevent's output plus, under a TLS
    /// filter, the output of the bufferevent below it.
    var unsentLength: Int {
        guard let bev else { return 0 }
        var total = evbuffer_get_length(bufferevent_get_output(bev))
        if let below = bufferevent_get_underlying(bev) { total += evbuffer_get_length(bufferevent_get_output(below)) }
        return total
    }

    private var flushWatch: Timer?

    /// Stops reading and closes once everything queued has reached the socket (a TLS
    /// filter's output drains into the plain bufferevent below it before that one writes),
    /// or after `limit` seconds; then calls `done`. The watch keeps the stream alive.
    func closeWhenFlushed(limit: Double = 10, done: @escaping () -> Void) {
        guard let bev, flushWatch == nil else {
            if self.bev == nil { done() }
            return
        }
        disableRead()
        let deadline = MonotonicClock.now() + limit
        var finish: (() -> Void)?
        finish = { [self] in
            guard self.unsentLength == 0 || MonotonicClock.now() >= deadline else {
                self.flushWatch?.arm(seconds: 0.01)
                return
            }
            self.flushWatch = nil
            self.close()
            finish = nil
            done()
        }
        flushWatch = Timer(base: bufferevent_get_base(bev)) { finish?() }
        finish?()
    }

    func enableRead() { if let bev { bufferevent_enable(bev, Int16(EV_READ)) } }
    func disableRead() { if let bev { bufferevent_disable(bev, Int16(EV_READ)) } }
    func enableReadWrite() { if let bev { bufferevent_enable(bev, Int16(EV_READ | EV_WRITE)) } }

    func write(_ bytes: [UInt8]) {
        guard let bev else { return }
        bytes.withUnsafeBytes { _ = bufferevent_write(bev, $0.baseAddress, $0.count) }
    }

    func write(_ text: String) {
        write(Array(text.utf8))
    }

    /// Read timeout (no bytes arrived) and write timeout (output could not drain), in seconds;
    /// nil leaves that direction without a timeout.
    func setTimeouts(read: Double?, write: Double?) {
        guard let bev else { return }
        var readTime = timeval(seconds: read ?? 0)
        var writeTime = timeval(seconds: write ?? 0)
        withUnsafePointer(to: &readTime) { readPointer in
            withUnsafePointer(to: &writeTime) { writePointer in
                _ = bufferevent_set_timeouts(bev, read == nil ? nil : readPointer, write == nil ? nil : writePointer)
            }
        }
    }

    /// Input stops being read above `readHigh`; `writeLow` is when writable fires.
    func setWatermarks(readHigh: Int, writeLow: Int) {
        guard let bev else { return }
        bufferevent_setwatermark(bev, Int16(EV_READ), 0, readHigh)
        bufferevent_setwatermark(bev, Int16(EV_WRITE), writeLow, 0)
    }

    var fd: Int32 { bev.map { bufferevent_getfd($0) } ?? -1 }

    /// Frees the bufferevent but keeps its socket open, returning it. What was buffered in
    /// either direction is moved to the given evbuffers first.
    func detachSocket(movingInputTo input: OpaquePointer, outputTo output: OpaquePointer) -> Int32 {
        guard let bev else { return -1 }
        evbuffer_add_buffer(input, bufferevent_get_input(bev))
        // A socket bufferevent keeps the start of its output frozen (only it may drain
        // it); it is about to be freed, so take the bytes it had not written yet.
        let pendingOutput = bufferevent_get_output(bev)
        evbuffer_unfreeze(pendingOutput, 1)
        evbuffer_add_buffer(output, pendingOutput)
        let fd = bufferevent_getfd(bev)
        bufferevent_setfd(bev, -1)
        close()
        return fd
    }

    /// The OpenSSL error codes a TLS bufferevent collected (why a handshake failed).
    func takeOpenSSLErrors() -> [UInt] {
        guard let bev else { return [] }
        var codes: [UInt] = []
        while true {
            let code = bufferevent_get_openssl_error(bev)
            if code == 0 { break }
            codes.append(code)
        }
        return codes
    }

    /// Forgets the bufferevent without freeing it: something else (a TLS filter) owns it now.
    func relinquish() {
        guard let bev else { return }
        self.bev = nil
        bufferevent_setcb(bev, nil, nil, nil, nil)
    }

    func close() {
        guard let bev else { return }
        self.bev = nil
        if let ssl = bufferevent_openssl_get_ssl(bev) {
            // Marked as shut down so OpenSSL keeps the session resumable (a TLS connection
            // freed without it is treated as failed and its session dropped).
            SSL_set_quiet_shutdown(ssl, 1)
            SSL_shutdown(ssl)
        }
        bufferevent_setcb(bev, nil, nil, nil, nil)
        bufferevent_free(bev)
    }
}

extension timeval {
    init(seconds: Double) {
        let whole = seconds.rounded(.down)
        self.init(tv_sec: Int(whole), tv_usec: Int((seconds - whole) * 1_000_000))
    }
}

// The trampolines take a strong reference for the length of the callback, so a delegate
// may close and release its Stream from inside a callback safely.
private func streamReadTrampoline(_ bev: OpaquePointer?, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    let stream = Unmanaged<Stream>.fromOpaque(context).takeUnretainedValue()
    stream.delegate?.streamReadable(stream)
}

private func streamWriteTrampoline(_ bev: OpaquePointer?, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    let stream = Unmanaged<Stream>.fromOpaque(context).takeUnretainedValue()
    stream.delegate?.streamWritable(stream)
}

private func streamEventTrampoline(_ bev: OpaquePointer?, _ events: Int16, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    let stream = Unmanaged<Stream>.fromOpaque(context).takeUnretainedValue()
    stream.delegate?.stream(stream, event: StreamEvent(flags: events))
}
