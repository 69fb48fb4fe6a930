import CEventSSL
import CountersignHTTP

/// Identifies upstream connections that may serve each other's requests. Later parts of the
/// key (TLS policy, identity, credential binding) keep connections apart that must not mix.
struct UpstreamKey: Hashable, CustomStringConvertible {
    var host: String
    var port: UInt16
    var tls: Bool

    var description: String { "\(tls ? "https" : "http")://\(Authority(host: host, port: port))" }
}

/// One TCP connection to an upstream, owned by the exchange using it or by the pool.
final class UpstreamConnection {
    let key: UpstreamKey
    let stream: Stream
    /// Whether this connection has already carried an exchange (a reused connection may
    /// have been closed by the server in the meantime, which makes a retry safe).
    var reused = false

    init(key: UpstreamKey, stream: Stream) {
        self.key = key
        self.stream = stream
    }

    /// A connection not yet connected; call `connect(using:)` once it is stored, because
    /// libevent may report a failure (e.g. refused at once) before `connect` returns.
    static func make(key: UpstreamKey, context: WorkerContext, delegate: StreamDelegate, timeout: Double) -> UpstreamConnection? {
        guard let bev = bufferevent_socket_new(context.base, -1, Int32(BEV_OPT_CLOSE_ON_FREE.rawValue)) else { return nil }
        let stream = Stream(bev: bev)
        stream.delegate = delegate
        stream.setTimeouts(read: timeout, write: timeout)
        return UpstreamConnection(key: key, stream: stream)
    }

    /// Starts resolving and connecting; the delegate hears `connected` or an error event.
    func connect(using dnsBase: OpaquePointer) {
        guard let bev = stream.bev else { return }
        stream.enableReadWrite()
        _ = bufferevent_socket_connect_hostname(bev, dnsBase, AF_UNSPEC, key.host, Int32(key.port))
    }

    /// Turns a failed connect into the error a client sees.
    func connectFailure(event: StreamEvent, savedErrno: Int32) -> ProxyError {
        if let bev = stream.bev {
            let dnsError = bufferevent_socket_get_dns_error(bev)
            if dnsError != 0 {
                let reason = String(cString: evutil_gai_strerror(dnsError))
                return ProxyError(status: 502, type: "dns_error", details: "cannot resolve \(key.host): \(reason)")
            }
        }
        if event.timeout {
            return ProxyError(status: 504, type: "connection_timeout", details: "connecting to \(key.host) port \(key.port) timed out")
        }
        switch savedErrno {
        case ECONNREFUSED:
            return ProxyError(status: 502, type: "connection_refused", details: "\(key.host) port \(key.port) refused the connection")
        case ENETUNREACH, EHOSTUNREACH:
            return ProxyError(status: 502, type: "destination_ip_unroutable", details: "no route to \(key.host) port \(key.port)")
        default:
            let reason = savedErrno == 0 ? "connection failed" : String(cString: strerror(savedErrno))
            return ProxyError(status: 502, type: "destination_unavailable", details: "cannot connect to \(key.host) port \(key.port): \(reason)")
        }
    }

    func close() { stream.close() }
}

/// Idle keep-alive upstream connections of one worker. An idle connection is watched for
/// the server closing it, and dropped after `idle_timeout`.
final class UpstreamPool: StreamDelegate {
    private var idle: [UpstreamKey: [UpstreamConnection]] = [:]
    private let maxIdlePerKey = 64
    var idleTimeout: Double = 60

    var idleCount: Int { idle.values.reduce(0) { $0 + $1.count } }

    func take(_ key: UpstreamKey) -> UpstreamConnection? {
        while var list = idle[key], let connection = list.popLast() {
            idle[key] = list.isEmpty ? nil : list
            if connection.stream.isOpen && connection.stream.inputLength == 0 {
                connection.stream.delegate = nil
                connection.reused = true
                return connection
            }
            connection.close()
        }
        return nil
    }

    func put(_ connection: UpstreamConnection) {
        guard connection.stream.isOpen, connection.stream.inputLength == 0 else {
            connection.close()
            return
        }
        var list = idle[connection.key] ?? []
        guard list.count < maxIdlePerKey else {
            connection.close()
            return
        }
        connection.stream.delegate = self
        connection.stream.setTimeouts(read: idleTimeout, write: nil)
        connection.stream.enableRead()
        list.append(connection)
        idle[connection.key] = list
    }

    func closeAll() {
        for list in idle.values { list.forEach { $0.close() } }
        idle.removeAll()
    }

    private func drop(_ stream: Stream) {
        for (key, list) in idle {
            if let index = list.firstIndex(where: { $0.stream === stream }) {
                var remaining = list
                let connection = remaining.remove(at: index)
                idle[key] = remaining.isEmpty ? nil : remaining
                connection.close()
                return
            }
        }
        stream.close()
    }

    // An idle connection that becomes readable was closed by the server or sent something
    // unsolicited; either way it can no longer carry a request.
    func streamReadable(_ stream: Stream) { drop(stream) }
    func streamWritable(_ stream: Stream) {}
    func stream(_ stream: Stream, event: StreamEvent) { drop(stream) }
}
