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
    /// A plain socket, read by its reader and written by its writer once it has a socket.
    let direct: Bool
    /// A TLS bufferevent on its own socket: told to write at the end of the current
    /// callback too (see `flush`), rather than after a round through epoll.
    let tlsOnSocket: Bool
    fileprivate var queuedForFlush = false
    /// The input limit set by `setWatermarks`, and whether it is lifted while idle (see
    /// `releaseEmptyInput`); it is put back by the next read.
    private(set) var readHighWatermark = 0
    var readWatermarkLifted = false
    /// The `IdleReadBufferTrimmer` round this stream waits in (0: none), so a stream asked
    /// for after every request is listed once per round.
    var trimRound: UInt64 = 0
    /// The round in which a request last ended on this stream, and the one in which a second
    /// did, so it keeps its TLS buffers between records until the round ends (0: it frees
    /// them after each record).
    var idleRound: UInt64 = 0
    var busyRound: UInt64 = 0
    /// Hears of ciphertext read before it decrypts (see `watchRawReads`); removed on close.
    var rawReadWatch: RawReadWatch?
    /// Reads a direct stream's socket in place of libevent (socket_reader.c: no FIONREAD per
    /// read), and a TLS stream on its socket once its handshake is done (no read event re-added
    /// on every change to the input).
    private(set) var reader: OpaquePointer?
    /// Writes a direct stream's socket once it has one, and a TLS stream's once its handshake is
    /// done, from an output of its own (socket_writer.c: no libevent callback pass on every add and
    /// drain, no write event added and removed per response, no deferred write callback).
    private(set) var writer: OpaquePointer?
    /// An in-memory stream's buffers (Stream+InMemory.swift); nil for a bufferevent's stream.
    private(set) var memory: InMemoryEnds?

    /// `direct` is for plain socket bufferevents: writes then go out with one `writev` at
    /// the end of the current callback instead of through libevent's write event, which
    /// costs two `epoll_ctl` calls per response, from the writer's output (an accepted socket's
    /// from the start, a connecting one's once connected).
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
            reader = cs_socket_reader_new(bev, streamOwnIOTrampoline, context)
            if bufferevent_getfd(bev) >= 0 { writePlainWithOwnWriter(bev) }
        }
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
    var outputWithoutFlush: EventBuffer? {
        guard let bev else { return memory?.output.buffer }
        if let writer { return EventBuffer(cs_socket_writer_output(writer)) }
        return EventBuffer(bufferevent_get_output(bev))
    }
    var inputLength: Int { input?.count ?? 0 }
    var outputLength: Int { outputWithoutFlush?.count ?? 0 }

    /// Bytes not yet handed to the socket: this bufferevent's output plus, under a TLS
    /// filter, the output of the bufferevent below it (the encrypted bytes). The one
    /// measure of back-pressure: a writer asks `writeRoom`, never an evbuffer's length.
    var unsentLength: Int {
        guard let bev else { return memory?.output.buffer.count ?? 0 }
        if let writer { return EventBuffer(cs_socket_writer_output(writer)).count }
        var total = EventBuffer(bufferevent_get_output(bev)).count
        // A direct stream is a socket's own bufferevent, with nothing below it (asking costs a
        // locked control call, ~50 instructions, at every `writeRoom`).
        if !direct, let below = bufferevent_get_underlying(bev) { total += EventBuffer(bufferevent_get_output(below)).count }
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

    /// The flush queue of the loop thread this stream is used on, found once and used without
    /// a retain: looked up at every write and callback, the thread-specific read and its retain
    /// cost ~80 instructions each time, four times a request. Unretained is safe: a thread's
    /// queue is never freed (`FlushQueue.installForCurrentThread` keeps it for the thread's
    /// life), and a stream is only used on its loop's thread.
    private var knownFlushQueue: Unmanaged<FlushQueue>?
    private var flushQueue: Unmanaged<FlushQueue>? {
        if let knownFlushQueue { return knownFlushQueue }
        knownFlushQueue = FlushQueue.current.map { Unmanaged.passUnretained($0) }
        return knownFlushQueue
    }

    /// Flushes the streams written during the callback that is returning (see `FlushQueue`).
    func flushQueued() {
        flushQueue?._withUnsafeGuaranteedRef { $0.flushAll() }
    }

    /// Queues this stream to be flushed when the current callback returns.
    func scheduleFlush() {
        guard direct || tlsOnSocket || memory != nil, !queuedForFlush else { return }
        if let queue = flushQueue {
            queuedForFlush = true
            queue._withUnsafeGuaranteedRef { $0.add(self) }
        } else {
            flush()
        }
    }

    /// Writes what is buffered straight to the socket with the stream's writer. What the socket
    /// does not take waits in the writer for the socket to drain. Returns true when everything
    /// went out (the delegate may then want to move more). A TLS stream on its socket has its
    /// writer once its handshake is done; before that, what little it writes goes through
    /// libevent's own write callback at once, and the delegate hears `streamWritable` from
    /// libevent (false here). A direct stream still connecting keeps its bytes for its writer.
    @discardableResult
    func flush() -> Bool {
        queuedForFlush = false
        if let writer { return cs_socket_writer_flush(writer) == 1 }
        if let memory { return memory.peer?.streamTouched() ?? false }
        if tlsOnSocket, let bev {
            _ = cs_bufferevent_tls_write_now(bev, Self.tlsCoalescedBytes)
        }
        return false
    }

    func write(_ bytes: [UInt8]) {
        append(bytes)
        scheduleFlush()
    }

    func write(_ text: String) { write(Array(text.utf8)) }

    /// The write timeout last set (`setTimeouts`).
    var writeTimeout: Double? { timeouts.write }

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
        applyTimeouts(bev)
    }

    /// Gives the bufferevent, the reader and the writer the timeouts recorded; each counts anew
    /// from now.
    private func applyTimeouts(_ bev: OpaquePointer) {
        let (read, write) = timeouts
        var readTime = timeval(seconds: read ?? 0)
        var writeTime = timeval(seconds: write ?? 0)
        withUnsafePointer(to: &readTime) { readPointer in
            withUnsafePointer(to: &writeTime) { writePointer in
                _ = bufferevent_set_timeouts(bev, read == nil ? nil : readPointer, write == nil ? nil : writePointer)
                if let reader { cs_socket_reader_set_timeout(reader, read == nil ? nil : readPointer) }
                if let writer { cs_socket_writer_set_timeout(writer, write == nil ? nil : writePointer) }
            }
        }
    }

    /// Counts the read timeout from now, as a byte arriving would: an owner whose idleness
    /// begins at an event of its own (an HTTP/2 connection's last stream ending) restarts it then.
    func restartReadTimeout() {
        guard let bev else { return memory?.restartReadTimeout() ?? () }
        if let reader { return cs_socket_reader_restart_timeout(reader) }
        // libevent restarts a timeout when it is set.
        if timeouts.read != nil { applyTimeouts(bev) }
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
            if let writer { cs_socket_writer_set_low(writer, writeBudget / 4) }
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
        // What the socket has not taken yet goes to libevent, which writes it below the filter.
        if direct, let writer { EventBuffer(cs_socket_writer_output(writer)).moveAll(to: EventBuffer(bufferevent_get_output(bev))) }
        freeOwnReadingAndWriting()
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
        freeOwnReadingAndWriting()
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
    /// Stops the reader and the writer before the bufferevent (and its input) goes or changes
    /// hands; what the writer still held is dropped, as libevent drops its output.
    fileprivate func freeOwnReadingAndWriting() {
        cs_socket_reader_free(reader)
        reader = nil
        cs_socket_writer_free(writer)
        writer = nil
    }

    /// A connecting stream's reader and writer take the socket once there is one; a TLS stream on
    /// its socket passes its reading and writing to a reader and a writer of its own.
    func connected() {
        if let reader, let bev { _ = cs_socket_reader_attach(reader, bufferevent_getfd(bev)) }
        if direct, writer == nil, let bev { writePlainWithOwnWriter(bev) }
        if tlsOnSocket, let bev {
            if writer == nil { writeTLSWithOwnWriter(bev) }
            if reader == nil { readTLSWithOwnReader(bev) }
        }
    }

    /// Takes a direct stream's writing on its socket; without a writer (no memory) libevent writes.
    private func writePlainWithOwnWriter(_ bev: OpaquePointer) {
        guard let base = bufferevent_get_base(bev),
              let made = cs_socket_writer_new(base, nil, bufferevent_getfd(bev), 0, streamOwnIOTrampoline,
                                              Unmanaged.passUnretained(self).toOpaque())
        else {
            bufferevent_enable(bev, Int16(EV_WRITE))
            return
        }
        takeWriting(with: made, from: bev)
    }

    /// Takes writing over from libevent after the handshake, with the write timeout and low
    /// mark it had; what was written during the handshake goes first. Without a writer (no
    /// memory) libevent goes on writing, its idle write event dropped.
    private func writeTLSWithOwnWriter(_ bev: OpaquePointer) {
        guard let ssl = bufferevent_openssl_get_ssl(bev), let base = bufferevent_get_base(bev),
              let made = cs_socket_writer_new(base, ssl, bufferevent_getfd(bev), Self.tlsCoalescedBytes,
                                              streamOwnIOTrampoline, Unmanaged.passUnretained(self).toOpaque())
        else { return cs_bufferevent_tls_write_idle_after_handshake(bev) }
        takeWriting(with: made, from: bev)
    }

    /// The writer takes over with the write timeout and low mark set so far; what was written
    /// before it goes first. libevent's write event goes (and its output stays empty, so its
    /// output callback never acts).
    private func takeWriting(with writer: OpaquePointer, from bev: OpaquePointer) {
        bufferevent_disable(bev, Int16(EV_WRITE))
        self.writer = writer
        cs_socket_writer_set_low(writer, writeBudget / 4)
        if let seconds = timeouts.write {
            var writeTime = timeval(seconds: seconds)
            cs_socket_writer_set_timeout(writer, &writeTime)
        }
        let queued = EventBuffer(bufferevent_get_output(bev))
        guard !queued.isEmpty else { return }
        // A socket bufferevent keeps the start of its output frozen (only it may drain it).
        if direct { queued.unfreezeStart() }
        queued.moveAll(to: EventBuffer(cs_socket_writer_output(writer)))
        if direct { queued.freezeStart() }
        scheduleFlush()
    }

    /// Takes reading over from libevent after the handshake, with the limits and timeout it
    /// had, and gives back the input space libevent's handshake reads left reserved.
    private func readTLSWithOwnReader(_ bev: OpaquePointer) {
        guard let ssl = bufferevent_openssl_get_ssl(bev),
              let tlsReader = cs_socket_reader_new_tls(bev, ssl, streamOwnIOTrampoline, Unmanaged.passUnretained(self).toOpaque())
        else { return }
        let wasReading = bufferevent_get_enabled(bev) & Int16(EV_READ) != 0
        bufferevent_disable(bev, Int16(EV_READ))
        bufferevent_setwatermark(bev, Int16(EV_READ), 0, 0)
        cs_bufferevent_tls_read_pending_off(bev)
        reader = tlsReader
        rawReadWatch?.handOverToReader()
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
