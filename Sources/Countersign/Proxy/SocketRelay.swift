import CLibevent
import CountersignHTTP

/// An established tunnel relayed with two plain read events and no buffers while idle:
/// bytes go socket → worker scratch buffer → socket, and only what the receiving socket
/// cannot take at once waits in an evbuffer, with the sending side paused until it drains.
/// That keeps an idle tunnel to a few hundred bytes. A direction that has carried
/// `spliceAfterBytes` switches to a pipe and splice(2), so bulk transfers never enter user
/// space. EOF on one side is passed on as a half-close (`shutdown(SHUT_WR)`), so protocols
/// that rely on it keep working; from then on the relay's idle timeout is the shorter
/// `halfCloseTimeout` (HAProxy's `client-fin`/`server-fin`), so a peer that never closes its
/// half does not hold two descriptors for the whole tunnel idle timeout.
///
/// The relay owns both sockets; it counts the upstream one and its pipes against the
/// descriptor budget (the client's is counted by its connection).
final class SocketRelay {
    /// One socket of the relay.
    final class Side {
        let fd: Int32
        unowned let relay: SocketRelay
        var readWatch: DescriptorWatch?
        var writeWatch: DescriptorWatch?
        /// Bytes waiting to be written to this socket.
        var pending: OwnedEventBuffer?
        var readClosed = false
        var writeShut = false
        var bytesRead: UInt64 = 0
        /// The last read filled the whole scratch buffer: the peer is sending in bulk.
        var lastReadFilledScratch = false
        /// Once bulk flows toward this socket: the pipe the bytes are spliced through, and
        /// how many of them are in it. From then on nothing waits in `pending`.
        var pipe: (read: Int32, write: Int32)?
        var piped = 0

        init(fd: Int32, relay: SocketRelay) {
            self.fd = fd
            self.relay = relay
        }

        var pendingCount: Int { pending?.buffer.count ?? 0 }
        /// Bytes read from the peer and not yet written to this socket.
        var waitingCount: Int { pendingCount + piped }
    }

    /// A direction switches to splice(2) once it has carried this many bytes and a read
    /// filled the whole scratch buffer: short exchanges and idle tunnels never pay for a
    /// pipe's two descriptors, and request/response traffic, where splice costs more
    /// syscalls than it saves copies, stays on recv/send however long the tunnel lives.
    static let spliceAfterBytes: UInt64 = 256 * 1024
    static let pipeCapacity: Int32 = 256 * 1024

    private(set) var client: Side!
    private(set) var upstream: Side!
    private let context: WorkerContext
    private let tunnelIdleTimeout: Double
    private let halfCloseTimeout: Double
    /// The idle timeout in force: shorter once either side has ended.
    private var idleTimeout: Double {
        client.readClosed || upstream.readClosed ? min(tunnelIdleTimeout, halfCloseTimeout) : tunnelIdleTimeout
    }
    private var idleReason: String {
        client.readClosed || upstream.readClosed ? "half_close_timeout" : "tunnel_idle_timeout"
    }
    private var lastActivity = MonotonicClock.now()
    private var finished = false
    /// Called once when both directions have ended, or on error or idle timeout.
    var onFinish: ((_ reason: String?) -> Void)?

    init(context: WorkerContext, clientFD: Int32, upstreamFD: Int32, toClient: OwnedEventBuffer?, toUpstream: OwnedEventBuffer?,
         idleTimeout: Double, halfCloseTimeout: Double) {
        self.context = context
        self.tunnelIdleTimeout = idleTimeout
        self.halfCloseTimeout = halfCloseTimeout
        DescriptorBudget.shared.add(1)
        client = Side(fd: clientFD, relay: self)
        upstream = Side(fd: upstreamFD, relay: self)
        for side in [client!, upstream!] {
            side.readWatch = DescriptorWatch(base: context.base, descriptor: side.fd, condition: .readable, repeat: .persistent) { [unowned self, unowned side] timedOut in
                self.readable(side, timedOut: timedOut)
            }
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
                side.pending = nil
                enableRead(of: peer(of: side))
            }
        }
    }

    private func peer(of side: Side) -> Side { side === client ? upstream : client }

    private func enableRead(of side: Side) {
        guard !side.readClosed else { return }
        side.readWatch?.arm(timeout: idleTimeout)
    }

    fileprivate func readable(_ side: Side, timedOut: Bool) {
        if timedOut {
            if MonotonicClock.now() - lastActivity >= idleTimeout { finish(idleReason) }
            return
        }
        let destination = peer(of: side)
        if destination.pipe != nil || startsSplicing(from: side, to: destination) {
            spliceReadable(side, to: destination)
            return
        }
        let scratch = context.scratch
        // A few rounds per wake-up while the socket has more and the peer takes it all:
        // bulk transfers then cost one epoll round trip per several buffers.
        var count = 0
        for _ in 0..<8 {
            count = recv(side.fd, scratch.baseAddress, scratch.count, 0)
            guard count > 0 else { break }
            received(count, on: side)
            side.lastReadFilledScratch = count == scratch.count
            var sent = 0
            if destination.pendingCount == 0 {
                sent = send(destination.fd, scratch.baseAddress, count, Int32(MSG_NOSIGNAL))
                if sent < 0 {
                    guard Self.lastErrorIsTransient else {
                        finish(ProxyErrorType.connectionTerminated.name)
                        return
                    }
                    sent = 0
                }
            }
            if sent < count {
                if destination.pending == nil { destination.pending = OwnedEventBuffer() }
                guard let pending = destination.pending?.buffer else {
                    finish(ProxyErrorType.proxyInternalError.name)
                    return
                }
                pending.add(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(scratch)[sent..<count]))
                // Pause this side until the destination has taken what is waiting.
                side.readWatch?.disarm()
                armWrite(destination)
                return
            }
            if count < scratch.count { return }
        }
        if count > 0 { return }
        if count < 0 {
            if !Self.lastErrorIsTransient { finish(ProxyErrorType.connectionTerminated.name) }
            return
        }
        sourceEnded(side, destination: destination)
    }

    /// Counts bytes read from `side`: activity for the idle timeout, the splice threshold, metrics.
    private func received(_ count: Int, on side: Side) {
        lastActivity = MonotonicClock.now()
        side.bytesRead += UInt64(count)
        if side === client { context.metrics.bytesFromClients.add(count) } else { context.metrics.bytesToClients.add(count) }
    }

    /// Whether the last call failed only for now (nothing to read, no room to write,
    /// interrupted): the event loop will call again.
    private static var lastErrorIsTransient: Bool {
        let error = cs_errno()
        return error == EAGAIN || error == EWOULDBLOCK || error == EINTR
    }

    /// EOF: pass the half-close on once everything read so far is written.
    private func sourceEnded(_ side: Side, destination: Side) {
        side.readClosed = true
        side.readWatch?.disarm()
        if destination.waitingCount == 0 { shutWrite(destination) }
        finishIfDone()
        guard !finished else { return }
        // The half-close timeout applies from now: re-arm what is waiting with it.
        let other = peer(of: side)
        if other.readWatch?.isArmed == true { enableRead(of: other) }
        for waiting in [client!, upstream!] where waiting.waitingCount > 0 { armWrite(waiting) }
    }

    // MARK: - splice(2)

    /// Opens the pipe for a direction that has carried enough, unless bytes still wait in an
    /// evbuffer (they must go first) or no descriptors are left (then it stays on recv/send).
    private func startsSplicing(from side: Side, to destination: Side) -> Bool {
        guard side.bytesRead >= Self.spliceAfterBytes, side.lastReadFilledScratch,
              destination.pendingCount == 0, DescriptorBudget.shared.take(2) else { return false }
        var fds: [Int32] = [-1, -1]
        guard cs_pipe_nonblocking(&fds, Self.pipeCapacity) == 0 else {
            DescriptorBudget.shared.release(2)
            return false
        }
        destination.pipe = (read: fds[0], write: fds[1])
        return true
    }

    /// Socket → pipe → socket. Reading happens only with the pipe empty, so EAGAIN from the
    /// first splice means the socket has nothing, never that the pipe is full.
    private func spliceReadable(_ side: Side, to destination: Side) {
        guard let pipe = destination.pipe else { return }
        for _ in 0..<8 {
            let count = cs_splice_move(side.fd, pipe.write, UInt(Self.pipeCapacity))
            if count == 0 {
                sourceEnded(side, destination: destination)
                return
            }
            if count < 0 {
                if !Self.lastErrorIsTransient { finish(ProxyErrorType.connectionTerminated.name) }
                return
            }
            received(count, on: side)
            destination.piped += count
            guard drainPipe(into: destination) else { return }
            if destination.piped > 0 {
                // Pause this side until the destination has taken what is in the pipe.
                side.readWatch?.disarm()
                armWrite(destination)
                return
            }
            // Less than asked for: the socket is drained, so skip the splice that would say EAGAIN.
            if count < Int(Self.pipeCapacity) { return }
        }
    }

    /// Moves what the pipe holds into its socket; false when the relay had to finish.
    private func drainPipe(into side: Side) -> Bool {
        guard let pipe = side.pipe else { return true }
        while side.piped > 0 {
            let sent = cs_splice_move(pipe.read, side.fd, UInt(side.piped))
            if sent > 0 {
                side.piped -= sent
                continue
            }
            if sent < 0 && Self.lastErrorIsTransient { return true }
            finish(ProxyErrorType.connectionTerminated.name)
            return false
        }
        return true
    }

    fileprivate func writable(_ side: Side, timedOut: Bool) {
        guard side.waitingCount > 0 else { return }
        if timedOut {
            // The receiver has not taken a byte for the whole idle timeout.
            finish(idleReason)
            return
        }
        let before = side.waitingCount
        if side.pipe != nil {
            guard drainPipe(into: side) else { return }
        } else if let pending = side.pending?.buffer {
            if pending.write(to: side.fd) < 0, !Self.lastErrorIsTransient {
                finish(ProxyErrorType.connectionTerminated.name)
                return
            }
        }
        if side.waitingCount < before { lastActivity = MonotonicClock.now() }
        if side.waitingCount > 0 {
            armWrite(side)
            return
        }
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
        if side.writeWatch == nil {
            side.writeWatch = DescriptorWatch(base: context.base, descriptor: side.fd, condition: .writable, repeat: .once) { [unowned self, unowned side] timedOut in
                self.writable(side, timedOut: timedOut)
            }
        }
        side.writeWatch?.arm(timeout: idleTimeout)
    }

    private func shutWrite(_ side: Side) {
        guard !side.writeShut else { return }
        side.writeShut = true
        shutdown(side.fd, Int32(SHUT_WR))
    }

    private func finishIfDone() {
        if client.readClosed && upstream.readClosed && client.waitingCount == 0 && upstream.waitingCount == 0 {
            finish(nil)
        }
    }

    /// Frees the events and closes both sockets; safe to call more than once.
    func finish(_ reason: String?) {
        guard !finished else { return }
        finished = true
        for side in [client!, upstream!] {
            side.pending = nil
            if let pipe = side.pipe {
                close(pipe.read)
                close(pipe.write)
                DescriptorBudget.shared.release(2)
            }
            side.pipe = nil
            side.piped = 0
            side.readWatch = nil
            side.writeWatch = nil
            side.pending = nil
            close(side.fd)
        }
        DescriptorBudget.shared.release(1)
        let callback = onFinish
        onFinish = nil
        callback?(reason)
    }

    deinit { finish(nil) }
}
