import CLibevent

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
            if tlsOnSocket, tlsWriter == nil { bufferevent_enable(bev, Int16(EV_WRITE)) }
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
}
