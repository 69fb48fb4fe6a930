import CLibevent
import CountersignConfig
import Synchronization

/// Every address this process listens on (proxy listeners of every worker, the admin
/// listener), so that no upstream connection is allowed to reach one of them: a request
/// through the proxy for its own admin address would bypass `admin.allow`, and one for its
/// own proxy port would loop. Checked on the connected socket, not on the request's
/// spelling of the host, so `localhost`, `127.1`, `[::1]`, `0.0.0.0` or a DNS name that
/// resolves to this host are all caught.
enum OwnListeners {
    private static let bound = Mutex<[ObjectIdentifier: PeerAddress]>([:])

    static func add(_ listener: AnyObject, address: PeerAddress) {
        bound.withLock { $0[ObjectIdentifier(listener)] = address }
    }

    static func remove(_ listener: AnyObject) {
        _ = bound.withLock { $0.removeValue(forKey: ObjectIdentifier(listener)) }
    }

    /// The own listening address that the connected socket `fd` reaches, if any.
    static func reached(by fd: Int32) -> PeerAddress? {
        guard let peer = address(of: fd, peer: true), let peerIP = peer.ip.flatMap(normalized) else { return nil }
        let local = address(of: fd, peer: false)?.ip.flatMap(normalized)
        return bound.withLock { listeners in
            listeners.values.first { listening in
                guard listening.port == peer.port, let listeningIP = listening.ip.flatMap(normalized) else { return false }
                if listeningIP == peerIP { return true }
                // A wildcard listener answers on every address of this host: the loopback
                // ones, and whichever address our end of this connection has (a connection
                // to one of this host's addresses is made from that same address).
                return isUnspecified(listeningIP) && (isLoopback(peerIP) || peerIP == local)
            }
        }
    }

    private static func address(of fd: Int32, peer: Bool) -> PeerAddress? {
        guard fd >= 0 else { return nil }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address -> PeerAddress? in
                let result = peer ? getpeername(fd, address, &length) : getsockname(fd, address, &length)
                return result == 0 ? PeerAddress(UnsafePointer(address)) : nil
            }
        }
    }

    /// IPv4-mapped IPv6 (a dual-stack socket's view of an IPv4 peer) compares as IPv4.
    private static func normalized(_ ip: IPAddress) -> IPAddress { ip.unmappedV4 ?? ip }

    private static func isUnspecified(_ ip: IPAddress) -> Bool { ip.bytes.allSatisfy { $0 == 0 } }

    private static func isLoopback(_ ip: IPAddress) -> Bool {
        CIDR.loopback.contains { $0.contains(ip) }
    }
}
