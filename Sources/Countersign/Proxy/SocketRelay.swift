import CEventSSL

/// An established tunnel relayed with two plain read events and no buffers while idle:
/// bytes go socket → worker scratch buffer → socket, and only what the receiving socket
/// cannot take at once waits in an evbuffer, with the sending side paused until it drains.
/// That keeps an idle tunnel to a few hundred bytes. EOF on one side is passed on as a
/// half-close (`shutdown(SHUT_WR)`), so protocols that rely on it keep working.
final class SocketRelay {
    /// One socket of the relay.
    final class Side {
        let fd: Int32
        unowned let relay: SocketRelay
        var readEvent: OpaquePointer?
        var writeEvent: OpaquePointer?
        /// Bytes waiting to be written to this socket.
        var pending: OpaquePointer?
        var readClosed = false
        var writeShut = false
        var bytesRead: UInt64 = 0

        init(fd: Int32, relay: SocketRelay) {
            self.fd = fd
            self.relay = relay
        }

        var pendingCount: Int { pending.map { evbuffer_get_length($0) } ?? 0 }
    }

    private(set) var client: Side!
    private(set) var upstream: Side!
    private let context: WorkerContext
    private let idleTimeout: Double
    private var lastActivity = MonotonicClock.now()
    private var finished = false
    /// Called once when both directions have ended, or on error or idle timeout.
    var onFinish: ((_ reason: String?) -> Void)?

    init(context: WorkerContext, clientFD: Int32, upstreamFD: Int32, toClient: OpaquePointer?, toUpstream: OpaquePointer?, idleTimeout: Double) {
        self.context = context
        self.idleTimeout = idleTimeout
        client = Side(fd: clientFD, relay: self)
        upstream = Side(fd: upstreamFD, relay: self)
        for side in [client!, upstream!] {
            let pointer = Unmanaged.passUnretained(side).toOpaque()
            side.readEvent = event_new(context.base, side.fd, Int16(EV_READ | EV_PERSIST), relayReadTrampoline, pointer)
        }
        client.pending = toClient
        upstream.pending = toUpstream
    }

    func start() {
        for side in [client!, upstream!] {
            if side.pendingCount > 0 {
                // Early bytes: the other side waits until they are written.
                armWrite(side)
            } else {
                if let pending = side.pending { evbuffer_free(pending) }
                side.pending = nil
                enableRead(of: peer(of: side))
            }
        }
    }

    private func peer(of side: Side) -> Side { side === client ? upstream : client }

    private func enableRead(of side: Side) {
        guard !side.readClosed, let event = side.readEvent else { return }
        var timeout = timeval(seconds: idleTimeout)
        event_add(event, &timeout)
    }

    fileprivate func readable(_ side: Side, timedOut: Bool) {
        if timedOut {
            if MonotonicClock.now() - lastActivity >= idleTimeout { finish("tunnel_idle_timeout") }
            return
        }
        let destination = peer(of: side)
        let scratch = context.scratch
        // A few rounds per wake-up while the socket has more and the peer takes it all:
        // bulk transfers then cost one epoll round trip per several buffers.
        var count = 0
        for _ in 0..<8 {
            count = recv(side.fd, scratch.baseAddress, scratch.count, 0)
            guard count > 0 else { break }
            lastActivity = MonotonicClock.now()
            side.bytesRead += UInt64(count)
            if side === client { context.metrics.bytesFromClients.add(count) } else { context.metrics.bytesToClients.add(count) }
            var sent = 0
            if destination.pendingCount == 0 {
                sent = send(destination.fd, scratch.baseAddress, count, Int32(MSG_NOSIGNAL))
                if sent < 0 {
                    let error = cs_errno()
                    guard error == EAGAIN || error == EWOULDBLOCK else {
                        finish("connection_terminated")
                        return
                    }
                    sent = 0
                }
            }
            if sent < count {
                if destination.pending == nil { destination.pending = evbuffer_new() }
                evbuffer_add(destination.pending, scratch.baseAddress! + sent, count - sent)
                // Pause this side until the destination has taken what is waiting.
                event_del(side.readEvent)
                armWrite(destination)
                return
            }
            if count < scratch.count { return }
        }
        if count > 0 { return }
        if count < 0 {
            let error = cs_errno()
            if error == EAGAIN || error == EWOULDBLOCK || error == EINTR { return }
            finish("connection_terminated")
            return
        }
        // EOF: pass the half-close on once everything read so far is written.
        side.readClosed = true
        event_del(side.readEvent)
        if destination.pendingCount == 0 { shutWrite(destination) }
        finishIfDone()
    }

    fileprivate func writable(_ side: Side, timedOut: Bool) {
        guard let pending = side.pending else { return }
        if timedOut {
            // The receiver has not taken a byte for the whole idle timeout.
            finish("tunnel_idle_timeout")
            return
        }
        let written = evbuffer_write(pending, side.fd)
        if written < 0 {
            let error = cs_errno()
            guard error == EAGAIN || error == EWOULDBLOCK || error == EINTR else {
                finish("connection_terminated")
                return
            }
        } else if written > 0 {
            lastActivity = MonotonicClock.now()
        }
        if evbuffer_get_length(pending) > 0 {
            armWrite(side)
            return
        }
        evbuffer_free(pending)
        side.pending = nil
        let source = peer(of: side)
        if source.readClosed {
            shutWrite(side)
            finishIfDone()
        } else {
            enableRead(of: source)
        }
    }

    private func armWrite(_ side: Side) {
        // Created on first need: most tunnels never fill a socket's send buffer.
        if side.writeEvent == nil {
            side.writeEvent = event_new(context.base, side.fd, Int16(EV_WRITE), relayWriteTrampoline, Unmanaged.passUnretained(side).toOpaque())
        }
        var timeout = timeval(seconds: idleTimeout)
        event_add(side.writeEvent, &timeout)
    }

    private func shutWrite(_ side: Side) {
        guard !side.writeShut else { return }
        side.writeShut = true
        shutdown(side.fd, Int32(SHUT_WR))
    }

    private func finishIfDone() {
        if client.readClosed && upstream.readClosed && client.pendingCount == 0 && upstream.pendingCount == 0 {
            finish(nil)
        }
    }

    /// Frees the events and closes both sockets; safe to call more than once.
    func finish(_ reason: String?) {
        guard !finished else { return }
        finished = true
        for side in [client!, upstream!] {
            if let event = side.readEvent { event_free(event) }
            if let event = side.writeEvent { event_free(event) }
            if let pending = side.pending { evbuffer_free(pending) }
            side.readEvent = nil
            side.writeEvent = nil
            side.pending = nil
            evutil_closesocket(side.fd)
        }
        let callback = onFinish
        onFinish = nil
        callback?(reason)
    }

    deinit { finish(nil) }
}

private func relayReadTrampoline(_ fd: Int32, _ what: Int16, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    let side = Unmanaged<SocketRelay.Side>.fromOpaque(context).takeUnretainedValue()
    let relay = side.relay
    relay.readable(side, timedOut: what & Int16(EV_TIMEOUT) != 0)
}

private func relayWriteTrampoline(_ fd: Int32, _ what: Int16, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    let side = Unmanaged<SocketRelay.Side>.fromOpaque(context).takeUnretainedValue()
    let relay = side.relay
    relay.writable(side, timedOut: what & Int16(EV_TIMEOUT) != 0)
}
