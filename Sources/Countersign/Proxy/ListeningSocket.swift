import CLibevent

/// One bound, listening socket for one address, made once and shared: every worker accepts
/// on its own duplicate of it (`duplicate`), and the admin listener on one of its own. Bound
/// with SO_REUSEADDR only, never SO_REUSEPORT: Linux lets a later socket join a REUSEPORT
/// group when it sets the option too and has the same user, so a second `countersign run`
/// (or any program of the same user) would silently take a share of the connections. Without
/// it, binding an address someone else listens on fails with EADDRINUSE, and we say so.
final class ListeningSocket {
    private(set) var fd: Int32
    /// The address actually bound (the port the kernel chose, when asked for port 0).
    let bound: PeerAddress?
    /// How the configuration wrote it, for messages.
    let name: String

    static let backlog: Int32 = 1024

    init(host: String, port: UInt16) throws {
        name = "\(host.contains(":") ? "[\(host)]" : host):\(port)"
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_ADDRCONFIG
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let info = result else {
            throw ListenerError.resolve(name, String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(info) }
        let address = info.pointee
        fd = socket(address.ai_family, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ListenerError.bind(name, String(cString: strerror(cs_errno()))) }
        // Restarting while old connections sit in TIME_WAIT is fine; sharing a listener is not.
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, address.ai_addr, address.ai_addrlen) == 0, listen(fd, Self.backlog) == 0 else {
            let reason = String(cString: strerror(cs_errno()))
            close(fd)
            fd = -1
            throw ListenerError.bind(name, reason)
        }
        // Accepted sockets inherit it (Linux copies the listener's TCP options): no setsockopt
        // per connection.
        SocketOptions.setNoDelay(fd)
        bound = Self.localAddress(of: fd)
    }

    /// A descriptor of its own on the same socket (close-on-exec), for one listener to
    /// accept on and close; -1 when the process has none left.
    func duplicate() -> Int32 {
        cs_dup_cloexec(fd)
    }

    var port: UInt16 { bound?.port ?? 0 }

    private static func localAddress(of fd: Int32) -> PeerAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                getsockname(fd, address, &length) == 0 ? PeerAddress(UnsafePointer(address)) : nil
            }
        }
    }

    /// The listeners' duplicates keep the socket open until they close too.
    deinit {
        if fd >= 0 { close(fd) }
    }
}
