import CLibevent
import COpenSSL

/// The largest read of a TLS bufferevent: 16 KiB less an evbuffer chain header, so the space
/// reserved for it is one 16 KiB allocation.
let tlsReadSize = 16 * 1024 - 64

extension Stream {
    /// What a TLS stream on its socket sends as one record when its output starts with
    /// several smaller chains (a response head, then its body): the largest record the TLS
    /// contexts send (`max_send_fragment`).
    static let tlsCoalescedBytes = 4096
}

/// The kinds of stream: a plain socket (accepted, or to connect), TLS as a filter over a plain
/// stream, TLS on a socket itself, the server side an intercepted CONNECT switches to, and
/// in-memory pairs (an HTTP/2 client stream's own in-memory kind is in Stream+InMemory.swift).
extension Stream {
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
    /// (with recv) and writes the socket, with no plain bufferevent, evbuffer or copy in between. Bytes
    /// the SSL holds that the socket will not announce are delivered when the input drains
    /// (`cs_bufferevent_tls_read_pending_on_drain`) and after callbacks (`readPendingTLS`).
    /// On failure `ssl` is freed (by libevent) and `fd` closed.
    static func tlsSocket(base: OpaquePointer, fd: Int32, ssl: OpaquePointer, state: bufferevent_ssl_state) -> Stream? {
        // The SSL reads the socket with recv (tls_socket_bio.c); libevent takes the fd from its BIO.
        guard cs_ssl_set_socket(ssl, fd) == 0 else {
            SSL_free(ssl)
            evutil_closesocket(fd)
            return nil
        }
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
            // The TLS bufferevent watches the socket (for its handshake) before the plain stream
            // stops watching it: the socket stays in epoll throughout, where letting go first
            // made libevent drop and re-make its registration (an epoll_ctl MOD per connection).
            let fd = plain.fd
            let secured = tlsSocket(base: base, fd: fd, ssl: ssl, state: BUFFEREVENT_SSL_ACCEPTING)
            secured?.enableRead()
            // On failure tlsSocket has closed the socket already: the plain stream lets go of it
            // either way, and never closes it.
            _ = plain.detachSocket(movingInputTo: scratch.buffer, outputTo: scratch.buffer)
            return secured
        }
        return tlsFilter(base: base, replacing: plain, ssl: ssl, state: BUFFEREVENT_SSL_ACCEPTING)
    }

    /// Two linked in-memory bufferevents (what one writes, the other reads), for a request
    /// carried on an upstream HTTP/2 connection (`H2UpstreamSession`). Callbacks are deferred to the loop, so a write
    /// on one end never runs the other end's delegate inside the writer's call.
    static func pair(base: OpaquePointer) -> (Stream, Stream)? {
        var ends: [OpaquePointer?] = [nil, nil]
        let options = Int32(BEV_OPT_CLOSE_ON_FREE.rawValue | BEV_OPT_DEFER_CALLBACKS.rawValue)
        guard bufferevent_pair_new(base, options, &ends) == 0, let first = ends[0], let second = ends[1] else { return nil }
        return (Stream(bev: first), Stream(bev: second))
    }

    /// Tells a pair's other end that nothing more will be written: freeing one end sends no end
    /// of file to the other, `BEV_FINISHED` does.
    func finishWriting() {
        _ = bev.map { bufferevent_flush($0, Int16(EV_WRITE), BEV_FINISHED) }
    }
}

// MARK: - Around the socket: connecting by name, handing the socket on (to TLS), why a handshake failed

extension Stream {
    var fd: Int32 { bev.map { bufferevent_getfd($0) } ?? -1 }

    /// The event loop this stream runs on; nil once closed.
    var base: OpaquePointer? { bev.flatMap { bufferevent_get_base($0) } }

    /// A TLS stream's SSL (nil for a plain one, or once closed).
    var ssl: OpaquePointer? { bev.flatMap { bufferevent_openssl_get_ssl($0) } }

    /// Bytes a TLS filter's plain bufferevent read that the filter has not decrypted yet.
    var inputBelowFilter: Int {
        guard let bev, let below = bufferevent_get_underlying(bev) else { return 0 }
        return EventBuffer(bufferevent_get_input(below)).count
    }

    /// A plain socket stream with no socket yet: `connect` resolves and connects it.
    static func unconnected(base: OpaquePointer) -> Stream? {
        guard let bev = bufferevent_socket_new(base, -1, Int32(BEV_OPT_CLOSE_ON_FREE.rawValue)) else { return nil }
        return Stream(bev: bev, direct: true)
    }

    /// Resolves `host` with `dnsBase` and connects; the delegate hears `connected` or the failure.
    func connect(dnsBase: OpaquePointer, host: String, port: UInt16) {
        guard let bev else { return }
        bufferevent_socket_connect_hostname(bev, dnsBase, AF_UNSPEC, host, Int32(port))
    }

    /// Why resolving the host of `connect` failed, in the resolver's words; nil when it did not.
    var resolverFailure: String? {
        guard let bev else { return nil }
        let code = bufferevent_socket_get_dns_error(bev)
        return code == 0 ? nil : String(cString: evutil_gai_strerror(code))
    }

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
        // Then what its writer had not written (all of it, once the writer has the socket).
        if let writer { EventBuffer(cs_socket_writer_output(writer)).moveAll(to: output) }
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
}

// MARK: - A TLS stream's idle buffers (see IdleReadBufferTrimmer; plain streams keep none)

extension Stream {
    /// Gives back the read and write buffers a busy TLS stream kept (`IdleReadBufferTrimmer`):
    /// the next read or write makes them again, with the release mode back. `SSL_free_buffers`
    /// frees nothing while a record is partly read or partly written.
    func releaseTLSBuffers() {
        busyRound = 0
        guard let ssl else { return }
        keepTLSBuffers(false)
        _ = SSL_free_buffers(ssl)
    }

    /// Whether OpenSSL keeps its read and write buffers between records (a busy stream) or
    /// frees them whenever a record drains them (the contexts' SSL_MODE_RELEASE_BUFFERS).
    func keepTLSBuffers(_ keep: Bool) {
        guard let ssl else { return }
        _ = SSL_ctrl(ssl, keep ? SSL_CTRL_CLEAR_MODE : SSL_CTRL_MODE, Int(SSL_MODE_RELEASE_BUFFERS), nil)
    }

    /// Frees the input buffer's chains when it holds no data (see `IdleReadBufferTrimmer`).
    /// The read watermark is lifted first, or the drain below would start a read that
    /// reserves the space again; the next read puts it back. A stream with a reader has no
    /// libevent read watermark (putting one back would hang a callback on its input for good).
    func releaseEmptyInput() {
        guard let bev else { return }
        let input = EventBuffer(bufferevent_get_input(bev))
        guard input.isEmpty else { return }
        if readHighWatermark > 0, !readWatermarkLifted, reader == nil {
            readWatermarkLifted = true
            bufferevent_setwatermark(bev, Int16(EV_READ), 0, 0)
        }
        // Draining a whole non-empty buffer frees every chain, reserved space included.
        withUnsafeBytes(of: UInt8(0)) { input.add($0) }
        input.drain(1)
    }

    func restoreReadWatermark() {
        readWatermarkLifted = false
        guard let bev else { return }
        bufferevent_setwatermark(bev, Int16(EV_READ), 0, readHighWatermark)
    }
}

/// Reading switched on and off (and a stream's first writing, `enableReadWrite`): by the
/// reader a stream has (its own, socket_reader.c), else by libevent, else (an in-memory
/// stream) by its peer.
extension Stream {
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
            if tlsOnSocket, writer == nil { bufferevent_enable(bev, Int16(EV_WRITE)) }
            return
        }
        bufferevent_enable(bev, Int16(EV_READ | EV_WRITE))
        if tlsOnSocket { cs_bufferevent_tls_write_idle_before_handshake(bev) }
        readPendingTLS()
    }

    /// A TLS stream on its socket reads what its SSL already holds, which the socket will
    /// not announce (`cs_bufferevent_tls_read_pending`); its reader, once it has one, does that itself.
    func readPendingTLS() {
        if tlsOnSocket, reader == nil, let bev { _ = cs_bufferevent_tls_read_pending(bev) }
    }

    /// Whether idle, this stream's input keeps space libevent reserved for a read that found
    /// nothing (see `IdleReadBufferTrimmer`): only TLS streams libevent reads itself.
    var keepsReservedInput: Bool { !direct && reader == nil && memory == nil }

    /// Whether idle, this stream holds buffers the trimmer gives back (`releaseEmptyInput`,
    /// `releaseTLSBuffers`): every TLS stream.
    var keepsIdleBuffers: Bool { tlsOnSocket || keepsReservedInput }
}
