import CLibevent
import CountersignConfig
import CountersignLog

/// Something that takes accepted sockets.
protocol AcceptHandler: AnyObject {
    func accepted(fd: Int32, address: UnsafePointer<sockaddr>?, from listener: Listener)
}

enum ListenerError: Error, CustomStringConvertible {
    case resolve(String, String)
    case bind(String, String)

    var description: String {
        switch self {
        case .resolve(let address, let reason): return "cannot resolve listen address \(address): \(reason)"
        case .bind(let address, let reason): return "cannot listen on \(address): \(reason)"
        }
    }
}

/// One event loop's listener on a shared `ListeningSocket`: the workers' listeners on one
/// address wait on the same socket, and whichever loop is free takes the next connection.
///
/// When accept(2) fails for want of descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM)
/// the listener stops accepting for `retryDelay` and says so once in a while, as nginx does:
/// retrying at once would fail again in a loop at full CPU, and the connections waiting
/// in the kernel's backlog are served once descriptors are free again.
final class Listener {
    private var listener: OpaquePointer?
    weak var handler: AcceptHandler?
    let port: UInt16
    static let retryDelay = 0.25
    private var paused = (byOwner: false, byError: false)
    private let base: OpaquePointer
    /// Made on the first accept failure, never in `deinit`: a timer made there would capture an
    /// unowned reference to an object already being destroyed (a failed start crashed on it).
    private var retryTimer: Timer?
    private let failures = RateLimitedLog()

    /// Accepts on its own duplicate of `socket` (see `ListeningSocket`): every worker's
    /// listener on one address shares that one socket, which no other process can join.
    init(base: OpaquePointer, socket: ListeningSocket, handler: AcceptHandler) throws {
        self.handler = handler
        self.base = base
        let fd = socket.duplicate()
        guard fd >= 0 else { throw ListenerError.bind(socket.name, String(cString: strerror(cs_errno()))) }
        // Backlog 0: the socket listens already. On failure libevent leaves the descriptor open.
        let flags = UInt32(LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC)
        guard let listener = evconnlistener_new(base, listenerTrampoline, nil, flags, 0, fd) else {
            evutil_closesocket(fd)
            throw ListenerError.bind(socket.name, "cannot watch the listening socket")
        }
        self.listener = listener
        port = socket.port
        evconnlistener_set_cb(listener, listenerTrampoline, Unmanaged.passUnretained(self).toOpaque())
        if let bound = socket.bound { OwnListeners.add(self, address: bound) }
        evconnlistener_set_error_cb(listener, listenerErrorTrampoline)
    }

    /// Stops taking connections until `resume`; new ones wait in the kernel's backlog.
    func pause() {
        paused.byOwner = true
        applyPause()
    }

    func resume() {
        paused.byOwner = false
        applyPause()
    }

    private func applyPause() {
        guard let listener else { return }
        if paused.byOwner || paused.byError { evconnlistener_disable(listener) } else { evconnlistener_enable(listener) }
    }

    fileprivate func acceptFailed(errno error: Int32) {
        paused.byError = true
        applyPause()
        if retryTimer == nil { retryTimer = Timer(base: base) { [unowned self] in self.retryAfterError() } }
        retryTimer?.arm(seconds: Self.retryDelay)
        failures.warn("accept failed; not accepting for \(Int(Self.retryDelay * 1000)) ms", [
            ("port", .int(Int(port))), ("error", .string(String(cString: strerror(error)))),
            ("descriptors_in_use", .int(DescriptorBudget.shared.used)), ("descriptor_budget", .int(DescriptorBudget.shared.limit)),
        ])
    }

    private func retryAfterError() {
        paused.byError = false
        applyPause()
    }

    func close() {
        guard let listener else { return }
        OwnListeners.remove(self)
        retryTimer?.cancel()
        self.listener = nil
        evconnlistener_free(listener)
    }

    deinit { close() }

    /// Closes an accepted socket that will not be served.
    static func discard(_ fd: Int32) { evutil_closesocket(fd) }

    fileprivate func accept(fd: Int32, address: UnsafePointer<sockaddr>?) {
        guard let handler else {
            evutil_closesocket(fd)
            return
        }
        handler.accepted(fd: fd, address: address, from: self)
    }
}

private func listenerTrampoline(_ listener: OpaquePointer?, _ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: Int32, _ context: UnsafeMutableRawPointer?) {
    guard let context else {
        evutil_closesocket(fd)
        return
    }
    let owner = Unmanaged<Listener>.fromOpaque(context).takeUnretainedValue()
    owner.accept(fd: fd, address: UnsafePointer(address))
    FlushQueue.current?.flushAll()
}

private func listenerErrorTrampoline(_ listener: OpaquePointer?, _ context: UnsafeMutableRawPointer?) {
    let error = cs_errno()
    guard let context else { return }
    Unmanaged<Listener>.fromOpaque(context).takeUnretainedValue().acceptFailed(errno: error)
}

enum SocketOptions {
    /// Small request and response heads must not wait for Nagle's algorithm. Set on upstream
    /// sockets and on listening ones, whose accepted sockets inherit it.
    static func setNoDelay(_ fd: Int32) {
        guard fd >= 0 else { return }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }
}
