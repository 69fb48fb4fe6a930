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

/// One listening socket (`SO_REUSEPORT`, so every worker binds the same address and the
/// kernel spreads connections between them).
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
    private lazy var retryTimer = Timer(base: base) { [unowned self] in self.retryAfterError() }
    private let failures = RateLimitedLog()

    init(base: OpaquePointer, host: String, port: UInt16, handler: AcceptHandler) throws {
        self.handler = handler
        self.base = base
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = EVUTIL_AI_PASSIVE | EVUTIL_AI_ADDRCONFIG
        var result: UnsafeMutablePointer<addrinfo>?
        let status = evutil_getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let info = result else {
            throw ListenerError.resolve("\(host):\(port)", String(cString: evutil_gai_strerror(status)))
        }
        defer { evutil_freeaddrinfo(info) }
        let flags = UInt32(LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_REUSEABLE_PORT | LEV_OPT_CLOSE_ON_EXEC)
        listener = evconnlistener_new_bind(base, listenerTrampoline, nil, flags, 1024, info.pointee.ai_addr, Int32(info.pointee.ai_addrlen))
        guard let listener else {
            throw ListenerError.bind("\(host):\(port)", String(cString: strerror(cs_errno())))
        }
        // The real port, when the configuration asked for port 0.
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = evconnlistener_get_fd(listener)
        let bound: PeerAddress? = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                guard getsockname(fd, address, &length) == 0 else { return nil }
                return PeerAddress(UnsafePointer(address))
            }
        }
        self.port = bound?.port ?? port
        evconnlistener_set_cb(listener, listenerTrampoline, Unmanaged.passUnretained(self).toOpaque())
        if let bound { OwnListeners.add(self, address: bound) }
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
        retryTimer.arm(seconds: Self.retryDelay)
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
        retryTimer.cancel()
        self.listener = nil
        evconnlistener_free(listener)
    }

    deinit { close() }

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
    /// Small request and response heads must not wait for Nagle's algorithm.
    static func setNoDelay(_ fd: Int32) {
        guard fd >= 0 else { return }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }
}
