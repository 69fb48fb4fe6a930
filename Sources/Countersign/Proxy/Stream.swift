import CLibevent
import COpenSSL

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

/// The largest read of a TLS bufferevent: 16 KiB less an evbuffer chain header, so the space
/// reserved for it is one 16 KiB allocation.
let tlsReadSize = 16 * 1024 - 64

/// One bufferevent. The owner keeps the Stream alive for as long as the bufferevent may
/// call back; `close()` frees the bufferevent (and the socket) and silences callbacks.
final class Stream {
    private(set) var bev: OpaquePointer?
    /// Strong: the delegate is usually the stream's owner, and the cycle is broken by
    /// `close`, `relinquish` and `detachSocket`. (A weak reference would give every
    /// per-request exchange a side table and slow every retain.)
    var delegate: StreamDelegate?
    /// A plain socket written directly (see `flush`); TLS bufferevents write themselves.
    let direct: Bool
    /// A TLS bufferevent on its own socket: told to write at the end of the current
    /// callback too (see `flush`), rather than after a round through epoll.
    private let tlsOnSocket: Bool
    /// Whether libevent's write event is on: only while a direct write left bytes behind.
    private var writeEventOn = false
    fileprivate var queuedForFlush = false
    /// The input limit set by `setWatermarks`, and whether it is lifted while idle (see
    /// `releaseEmptyInput`); it is put back by the next read.
    private(set) var readHighWatermark = 0
    var readWatermarkLifted = false
    /// Hears of ciphertext read before it decrypts (see `watchRawReads`); removed on close.
    var rawReadWatch: RawReadWatch?

    /// `direct` is for plain socket bufferevents: writes then go out with one `writev` at
    /// the end of the current callback instead of through libevent's write event, which
    /// costs two `epoll_ctl` calls per response.
    init(bev: OpaquePointer, direct: Bool = false, tlsOnSocket: Bool = false) {
        self.bev = bev
        self.direct = direct
        self.tlsOnSocket = tlsOnSocket
        let context = Unmanaged.passUnretained(self).toOpaque()
        bufferevent_setcb(bev, streamReadTrampoline, streamWriteTrampoline, streamEventTrampoline, context)
        // A new bufferevent starts with writing enabled; direct streams switch it on only
        // when the socket could not take everything.
        if direct { bufferevent_disable(bev, Int16(EV_WRITE)) }
    }

    /// A new non-blocking socket bufferevent on `base`, closing `fd` when freed.
    static func socket(base: OpaquePointer, fd: Int32) -> Stream? {
        guard let bev = bufferevent_socket_new(base, fd, Int32(BEV_OPT_CLOSE_ON_FREE.rawValue)) else { return nil }
        return Stream(bev: bev, direct: true)
    }

    /// A TLS filter over `plain`'s bufferevent, which the filter takes over (bytes already
    /// buffered there are read first). Its callbacks are deferred to the event loop: a filter
    /// runs its read callback from inside whatever drained its input below the read watermark
    /// (libevent re-reads synchronously on unsuspend), which would re-enter the delegate in
    /// the middle of moving bytes. On failure `ssl` is freed and `plain`'s bufferevent too.
    static func tlsFilter(base: OpaquePointer, replacing plain: Stream, ssl: OpaquePointer, state: bufferevent_ssl_state) -> Stream? {
        guard let below = plain.bev else {
            SSL_free(ssl)
            return nil
        }
        // Our callbacks leave the plain bufferevent first: the filter installs its own.
        plain.relinquish()
        let options = Int32(BEV_OPT_CLOSE_ON_FREE.rawValue | BEV_OPT_DEFER_CALLBACKS.rawValue)
        // On failure libevent frees `ssl`, not `below`.
        guard let filter = bufferevent_openssl_filter_new(base, below, ssl, state, options) else {
            bufferevent_free(below)
            return nil
        }
        bufferevent_openssl_set_allow_dirty_shutdown(filter, 1)
        // The filter reserves input space of its largest single read before each SSL_read,
        // and evbuffer rounds a chain (its 48-byte header included) up to a power of two:
        // 16 KiB reads made 32 KiB chains. Reads that fit one 16 KiB chain halve what every
        // TLS connection holds, at the cost of a second SSL_read for a full record's tail.
        _ = bufferevent_set_max_single_read(filter, tlsReadSize)
        return Stream(bev: filter)
    }

    /// A TLS bufferevent on the socket `fd` itself (closing it when freed): OpenSSL reads
    /// and writes the socket, with no plain bufferevent, evbuffer or copy in between. Bytes
    /// the SSL holds that the socket will not announce are delivered when the input drains
    /// (`cs_bufferevent_tls_read_pending_on_drain`) and after callbacks (`readPendingTLS`).
    /// On failure `ssl` is freed (by libevent) and `fd` closed.
    static func tlsSocket(base: OpaquePointer, fd: Int32, ssl: OpaquePointer, state: bufferevent_ssl_state) -> Stream? {
        guard let bev = bufferevent_openssl_socket_new(base, fd, ssl, state, Int32(BEV_OPT_CLOSE_ON_FREE.rawValue)) else {
            evutil_closesocket(fd)
            return nil
        }
        // Many peers end TLS connections without close_notify; treat that as an EOF.
        bufferevent_openssl_set_allow_dirty_shutdown(bev, 1)
        // One 16 KiB chain per read (see `tlsReadSize`).
        _ = bufferevent_set_max_single_read(bev, tlsReadSize)
        guard cs_bufferevent_tls_read_pending_on_drain(bev) == 0 else {
            bufferevent_free(bev)
            return nil
        }
        return Stream(bev: bev, tlsOnSocket: true)
    }

    /// The server side of TLS on a plain socket stream whose owner just wrote its last plain
    /// bytes (the `200` of an intercepted CONNECT). When those bytes went out and nothing
    /// the client sent after them is buffered, TLS runs on the socket itself (`tlsSocket`);
    /// otherwise (a client that sent its ClientHello right behind its CONNECT, a socket that
    /// did not take the `200` at once) a filter over `plain` reads what is buffered first.
    /// `plain` is taken over either way; on failure `ssl` is freed and the socket closed.
    static func acceptingTLS(base: OpaquePointer, replacing plain: Stream, ssl: OpaquePointer) -> Stream? {
        if plain.direct, plain.inputLength == 0, plain.flush() || plain.outputLength == 0, plain.unsentLength == 0,
           let scratch = OwnedEventBuffer() {
            let fd = plain.detachSocket(movingInputTo: scratch.buffer, outputTo: scratch.buffer)
            return tlsSocket(base: base, fd: fd, ssl: ssl, state: BUFFEREVENT_SSL_ACCEPTING)
        }
        return tlsFilter(base: base, replacing: plain, ssl: ssl, state: BUFFEREVENT_SSL_ACCEPTING)
    }

    deinit { close() }

    var isOpen: Bool { bev != nil }
    /// The input buffer; nil once the stream is closed.
    var input: EventBuffer? { bev.map { EventBuffer(bufferevent_get_input($0)) } }
    /// The output buffer; nil once the stream is closed. Taking it (to add bytes) schedules a flush.
    var output: EventBuffer? {
        guard let bev else { return nil }
        scheduleFlush()
        return EventBuffer(bufferevent_get_output(bev))
    }
    var inputLength: Int { bev.map { EventBuffer(bufferevent_get_input($0)).count } ?? 0 }
    var outputLength: Int { bev.map { EventBuffer(bufferevent_get_output($0)).count } ?? 0 }

    /// Bytes not yet handed to the socket: this bufferevent's output plus, under a TLS
    /// filter, the output of the bufferevent below it (the encrypted bytes). The one
    /// measure of back-pressure: a writer asks `writeRoom`, never an evbuffer's length.
    var unsentLength: Int {
        guard let bev else { return 0 }
        var total = EventBuffer(bufferevent_get_output(bev)).count
        if let below = bufferevent_get_underlying(bev) { total += EventBuffer(bufferevent_get_output(below)).count }
        return total
    }

    /// How many unsent bytes this stream may hold (`setWatermarks`); 0 means unbounded.
    private(set) var writeBudget = 0

    /// Bytes a writer may add now without the unsent total going over the budget.
    var writeRoom: Int {
        guard writeBudget > 0 else { return .max }
        return max(writeBudget - unsentLength, 0)
    }

    private var flushWatch: Timer?

    /// What a TLS stream on its socket sends as one record when its output starts with
    /// several smaller chains (a response head, then its body): the largest record the TLS
    /// contexts send (`max_send_fragment`).
    static let tlsCoalescedBytes = 4096

    /// Stops reading and closes once everything queued has reached the socket (a TLS
    /// filter's output drains into the plain bufferevent below it before that one writes),
    /// or after `limit` seconds; then calls `done`. The watch keeps the stream alive.
    func closeWhenFlushed(limit: Double = 10, done: @escaping () -> Void) {
        guard let bev, flushWatch == nil else {
            if self.bev == nil { done() }
            return
        }
        disableRead()
        flush()
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

    func enableRead() {
        guard let bev else { return }
        bufferevent_enable(bev, Int16(EV_READ))
        readPendingTLS()
    }
    func disableRead() { if let bev { bufferevent_disable(bev, Int16(EV_READ)) } }
    func enableReadWrite() {
        guard let bev else { return }
        bufferevent_enable(bev, Int16(direct ? EV_READ : EV_READ | EV_WRITE))
        readPendingTLS()
    }

    /// A TLS stream on its socket reads what its SSL already holds, which the socket will
    /// not announce (`cs_bufferevent_tls_read_pending`).
    fileprivate func readPendingTLS() {
        if tlsOnSocket, let bev { _ = cs_bufferevent_tls_read_pending(bev) }
    }

    /// Queues this stream to be flushed when the current callback returns.
    func scheduleFlush() {
        guard direct || tlsOnSocket, !queuedForFlush else { return }
        if let queue = FlushQueue.current {
            queuedForFlush = true
            queue.add(self)
        } else {
            flush()
        }
    }

    /// Writes what is buffered straight to the socket. What the socket does not take is
    /// left to libevent's write event, switched on until the buffer drains. Returns true
    /// when everything went out (the delegate may then want to move more).
    /// A TLS stream on its socket writes through libevent's own write callback at once; the
    /// delegate then hears `streamWritable` from libevent (false here).
    @discardableResult
    func flush() -> Bool {
        queuedForFlush = false
        if tlsOnSocket, let bev {
            _ = cs_bufferevent_tls_write_now(bev, Self.tlsCoalescedBytes)
            return false
        }
        guard direct, let bev, !writeEventOn else { return false }
        let buffer = EventBuffer(bufferevent_get_output(bev))
        guard !buffer.isEmpty else { return false }
        // The bufferevent keeps the start of its output frozen; it does the same around its own writes.
        buffer.unfreezeStart()
        let written = buffer.write(to: bufferevent_getfd(bev))
        buffer.freezeStart()
        if written < 0 || !buffer.isEmpty {
            // Let libevent finish (or report the error through the event callback).
            writeEventOn = true
            bufferevent_enable(bev, Int16(EV_WRITE))
            return false
        }
        return true
    }

    /// The write event fired: once the buffer is empty, direct writes take over again.
    fileprivate func wroteFromEvent() {
        guard direct, writeEventOn, let bev, EventBuffer(bufferevent_get_output(bev)).isEmpty else { return }
        writeEventOn = false
        bufferevent_disable(bev, Int16(EV_WRITE))
    }

    func write(_ bytes: [UInt8]) {
        guard let bev else { return }
        bytes.withUnsafeBytes { _ = bufferevent_write(bev, $0.baseAddress, $0.count) }
        scheduleFlush()
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

    /// Input stops being read above `readHigh`; writers keep the unsent bytes within
    /// `writeBudget` (see `writeRoom`), and writable fires once a quarter of it is left.
    /// Under a TLS filter the bufferevent below takes at most half the budget of
    /// ciphertext: the filter then keeps the rest as plaintext and tells us when it has
    /// passed it down (libevent fires a filter's write callback only when the filter
    /// itself drains, never when the socket below it does).
    func setWatermarks(readHigh: Int, writeBudget: Int) {
        guard let bev else { return }
        readHighWatermark = readHigh
        readWatermarkLifted = false
        self.writeBudget = writeBudget
        bufferevent_setwatermark(bev, Int16(EV_READ), 0, readHigh)
        bufferevent_setwatermark(bev, Int16(EV_WRITE), writeBudget / 4, 0)
        if let below = bufferevent_get_underlying(bev) {
            bufferevent_setwatermark(below, Int16(EV_WRITE), 0, max(writeBudget / 2, 1))
        }
        // A higher limit may let reading resume with bytes already inside the SSL.
        readPendingTLS()
    }

    var fd: Int32 { bev.map { bufferevent_getfd($0) } ?? -1 }

    /// Frees the bufferevent but keeps its socket open, returning it. What was buffered in
    /// either direction is moved to the given evbuffers first.
    func detachSocket(movingInputTo input: EventBuffer, outputTo output: EventBuffer) -> Int32 {
        guard let bev else { return -1 }
        EventBuffer(bufferevent_get_input(bev)).moveAll(to: input)
        // A socket bufferevent keeps the start of its output frozen (only it may drain
        // it); it is about to be freed, so take the bytes it had not written yet.
        let pendingOutput = EventBuffer(bufferevent_get_output(bev))
        pendingOutput.unfreezeStart()
        pendingOutput.moveAll(to: output)
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
        flush()
        self.bev = nil
        delegate = nil
        bufferevent_setcb(bev, nil, nil, nil, nil)
        // Whoever takes over (a TLS filter) expects libevent to do the writing again.
        if direct { bufferevent_enable(bev, Int16(EV_WRITE)) }
    }

    func close() {
        delegate = nil
        rawReadWatch?.detach()
        rawReadWatch = nil
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

// The trampolines take a strong reference for the length of the callback, so a delegate
// may close and release its Stream from inside a callback safely.
private func streamReadTrampoline(_ bev: OpaquePointer?, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    let stream = Unmanaged<Stream>.fromOpaque(context).takeUnretainedValue()
    if stream.readWatermarkLifted { stream.restoreReadWatermark() }
    stream.delegate?.streamReadable(stream)
    FlushQueue.current?.flushAll()
    stream.readPendingTLS()
}

private func streamWriteTrampoline(_ bev: OpaquePointer?, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    let stream = Unmanaged<Stream>.fromOpaque(context).takeUnretainedValue()
    stream.wroteFromEvent()
    stream.delegate?.streamWritable(stream)
    FlushQueue.current?.flushAll()
}

private func streamEventTrampoline(_ bev: OpaquePointer?, _ events: Int16, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    let stream = Unmanaged<Stream>.fromOpaque(context).takeUnretainedValue()
    stream.delegate?.stream(stream, event: StreamEvent(flags: events))
    FlushQueue.current?.flushAll()
    // A handshake can end with the peer's first records already read ahead.
    stream.readPendingTLS()
}
