import CLibevent
import COpenSSL

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
    /// The `IdleReadBufferTrimmer` round this stream waits in (0: none), so a stream asked
    /// for after every request is listed once per round.
    var trimRound: UInt64 = 0
    /// Hears of ciphertext read before it decrypts (see `watchRawReads`); removed on close.
    var rawReadWatch: RawReadWatch?
    /// Reads a direct stream's socket in place of libevent (socket_reader.c: no FIONREAD per
    /// read), and a TLS stream on its socket once its handshake is done (no read event re-added
    /// on every change to the input).
    private(set) var reader: OpaquePointer?
    /// An in-memory stream's buffers (Stream+InMemory.swift); nil for a bufferevent's stream.
    private(set) var memory: InMemoryEnds?

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
        // when the socket could not take everything. Their reading is the reader's.
        if direct {
            bufferevent_disable(bev, Int16(EV_WRITE))
            reader = cs_socket_reader_new(bev, streamReaderTrampoline, context)
        }
    }

    /// A stream on the accepted socket `fd` (non-blocking already: libevent's listener accepts
    /// with SOCK_NONBLOCK, or sets it where accept4 is missing), closed when the stream is (or
    /// at once, when no stream could be made).
    static func socket(base: OpaquePointer, fd: Int32) -> Stream? {
        guard let bev = bufferevent_socket_new(base, fd, Int32(BEV_OPT_CLOSE_ON_FREE.rawValue)) else {
            evutil_closesocket(fd)
            return nil
        }
        return Stream(bev: bev, direct: true)
    }

    /// An in-memory stream: no bufferevent, its peer fills `input` and takes `output`.
    init(memory: InMemoryEnds) {
        (direct, tlsOnSocket) = (false, false)
        self.memory = memory
    }

    deinit { close() }

    var isOpen: Bool { bev != nil || memory != nil }
    /// The input buffer; nil once the stream is closed.
    var input: EventBuffer? { bev.map { EventBuffer(bufferevent_get_input($0)) } ?? memory.map(inMemoryInput) }
    /// The output buffer; nil once the stream is closed. Taking it (to add bytes) schedules a flush.
    var output: EventBuffer? {
        guard let buffer = outputWithoutFlush else { return nil }
        scheduleFlush()
        return buffer
    }
    /// The output buffer for bytes the caller flushes later (`scheduleFlush`).
    var outputWithoutFlush: EventBuffer? { bev.map { EventBuffer(bufferevent_get_output($0)) } ?? memory?.output.buffer }
    var inputLength: Int { input?.count ?? 0 }
    var outputLength: Int { outputWithoutFlush?.count ?? 0 }

    /// Bytes not yet handed to the socket: this bufferevent's output plus, under a TLS
    /// filter, the output of the bufferevent below it (the encrypted bytes). The one
    /// measure of back-pressure: a writer asks `writeRoom`, never an evbuffer's length.
    var unsentLength: Int {
        guard let bev else { return memory?.output.buffer.count ?? 0 }
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
    /// The read and write timeouts last given to the bufferevent.
    private var timeouts: (read: Double?, write: Double?) = (nil, nil)

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
        guard let bev else { return memory?.setReading(true) ?? () }
        if let reader { return cs_socket_reader_enable(reader, 1) }
        bufferevent_enable(bev, Int16(EV_READ))
        readPendingTLS()
    }
    func disableRead() {
        guard let bev else { return memory?.setReading(false) ?? () }
        if let reader { return cs_socket_reader_enable(reader, 0) }
        bufferevent_disable(bev, Int16(EV_READ))
    }
    /// A direct stream writes itself (see `flush`) and reads with its reader.
    func enableReadWrite() {
        guard let bev else { return memory?.setReading(true) ?? () }
        if let reader {
            cs_socket_reader_enable(reader, 1)
            if tlsOnSocket { bufferevent_enable(bev, Int16(EV_WRITE)) }
            return
        }
        bufferevent_enable(bev, Int16(EV_READ | EV_WRITE))
        if tlsOnSocket { cs_bufferevent_tls_write_idle_before_handshake(bev) }
        readPendingTLS()
    }

    /// A TLS stream on its socket reads what its SSL already holds, which the socket will
    /// not announce (`cs_bufferevent_tls_read_pending`); its reader, once it has one, does that itself.
    fileprivate func readPendingTLS() {
        if tlsOnSocket, reader == nil, let bev { _ = cs_bufferevent_tls_read_pending(bev) }
    }

    /// Whether idle, this stream's input keeps space libevent reserved for a read that found
    /// nothing (see `IdleReadBufferTrimmer`): only TLS streams libevent reads itself.
    var keepsReservedInput: Bool { !direct && reader == nil && memory == nil }

    /// Queues this stream to be flushed when the current callback returns.
    func scheduleFlush() {
        guard direct || tlsOnSocket || memory != nil, !queuedForFlush else { return }
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
        if let memory { return memory.peer?.streamTouched() ?? false }
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
        append(bytes)
        scheduleFlush()
    }

    func write(_ text: String) { write(Array(text.utf8)) }

    /// Read timeout (no bytes arrived) and write timeout (output could not drain), in seconds;
    /// nil leaves that direction without a timeout.
    func setTimeouts(read: Double?, write: Double?) {
        guard let bev else { return memory?.setTimeouts(read: read, write: write) ?? () }
        // The reader restarts its timeout either way; libevent's own are set only when they
        // change (the same ones are set again for every request).
        guard read != timeouts.read || write != timeouts.write else {
            if let reader { cs_socket_reader_restart_timeout(reader) }
            return
        }
        timeouts = (read, write)
        var readTime = timeval(seconds: read ?? 0)
        var writeTime = timeval(seconds: write ?? 0)
        withUnsafePointer(to: &readTime) { readPointer in
            withUnsafePointer(to: &writeTime) { writePointer in
                _ = bufferevent_set_timeouts(bev, read == nil ? nil : readPointer, write == nil ? nil : writePointer)
                if let reader { cs_socket_reader_set_timeout(reader, read == nil ? nil : readPointer) }
            }
        }
    }

    /// Input stops being read above `readHigh`; writers keep the unsent bytes within
    /// `writeBudget` (see `writeRoom`), and writable fires once a quarter of it is left.
    /// Under a TLS filter the bufferevent below takes at most half the budget of
    /// ciphertext: the filter then keeps the rest as plaintext and tells us when it has
    /// passed it down (libevent fires a filter's write callback only when the filter
    /// itself drains, never when the socket below it does).
    /// A limit already in place is not set again: an upstream connection gets one limit for
    /// the response head and another for its body on every request, and each libevent call
    /// re-adds the read event.
    func setWatermarks(readHigh: Int, writeBudget: Int) {
        guard let bev else {
            // An in-memory stream's input is bounded by its peer (an HTTP/2 stream's window).
            if memory != nil { self.writeBudget = writeBudget }
            return
        }
        if readHigh != readHighWatermark || readWatermarkLifted {
            readHighWatermark = readHigh
            readWatermarkLifted = false
            if let reader {
                cs_socket_reader_set_high(reader, readHigh)
            } else {
                bufferevent_setwatermark(bev, Int16(EV_READ), 0, readHigh)
            }
        }
        // 0 is also the budget before the first call, when the filter below has no limit yet.
        if writeBudget != self.writeBudget || writeBudget == 0 {
            self.writeBudget = writeBudget
            bufferevent_setwatermark(bev, Int16(EV_WRITE), writeBudget / 4, 0)
            if let below = bufferevent_get_underlying(bev) {
                bufferevent_setwatermark(below, Int16(EV_WRITE), 0, max(writeBudget / 2, 1))
            }
        }
        // A higher limit may let reading resume with bytes already inside the SSL.
        readPendingTLS()
    }

    /// Forgets the bufferevent without freeing it: something else (a TLS filter) owns it now.
    func relinquish() {
        guard let bev else { return }
        flush()
        freeReader()
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
        memory?.close()
        memory = nil
        guard let bev else { return }
        freeReader()
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

extension Stream {
    /// Stops the reader before the bufferevent (and its input) goes or changes hands.
    fileprivate func freeReader() { cs_socket_reader_free(reader); reader = nil }

    /// A connecting stream's reader watches the socket once there is one; a TLS stream on its
    /// socket drops the write event libevent turns on when the handshake ends, and its reading
    /// passes to a reader of its own.
    fileprivate func connected() {
        if let reader, let bev { _ = cs_socket_reader_attach(reader, bufferevent_getfd(bev)) }
        if tlsOnSocket, let bev {
            cs_bufferevent_tls_write_idle_after_handshake(bev)
            if reader == nil { readTLSWithOwnReader(bev) }
        }
    }

    /// Takes reading over from libevent after the handshake, with the limits and timeout it
    /// had, and gives back the input space libevent's handshake reads left reserved.
    private func readTLSWithOwnReader(_ bev: OpaquePointer) {
        guard let ssl = bufferevent_openssl_get_ssl(bev),
              let tlsReader = cs_socket_reader_new_tls(bev, ssl, streamReaderTrampoline, Unmanaged.passUnretained(self).toOpaque())
        else { return }
        let wasReading = bufferevent_get_enabled(bev) & Int16(EV_READ) != 0
        bufferevent_disable(bev, Int16(EV_READ))
        bufferevent_setwatermark(bev, Int16(EV_READ), 0, 0)
        cs_bufferevent_tls_read_pending_off(bev)
        reader = tlsReader
        readWatermarkLifted = false
        cs_socket_reader_set_high(tlsReader, readHighWatermark)
        if let seconds = timeouts.read {
            var readTime = timeval(seconds: seconds)
            cs_socket_reader_set_timeout(tlsReader, &readTime)
        }
        // The reader is in place, so the watermark stays as it is set above.
        releaseEmptyInput()
        cs_socket_reader_enable(tlsReader, wasReading ? 1 : 0)
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
    if events & Int16(BEV_EVENT_CONNECTED) != 0 { stream.connected() }
    stream.delegate?.stream(stream, event: StreamEvent(flags: events))
    FlushQueue.current?.flushAll()
    // A handshake can end with the peer's first records already read ahead.
    stream.readPendingTLS()
}

/// The reader's news: bytes arrived (EV_READ), or how reading ended, as the bufferevent reports it.
private func streamReaderTrampoline(_ what: Int16, _ context: UnsafeMutableRawPointer?) {
    if what == Int16(EV_READ) {
        streamReadTrampoline(nil, context)
    } else {
        streamEventTrampoline(nil, what, context)
    }
}
