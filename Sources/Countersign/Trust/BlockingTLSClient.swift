import COpenSSL
import CountersignSupport
#if canImport(Glibc)
import Glibc
#endif

/// A plain blocking TCP + TLS client for the `pin` command and tests; the proxy itself uses
/// libevent. Owns the socket and the `SSL*` until `close()`.
public final class BlockingTLSClient {
    public let ssl: OpaquePointer
    private let socket: Int32

    /// Connects to `host:port`, runs the handshake with `context` and returns; trust is not
    /// evaluated here (call `context.evaluate(ssl:)`). Throws on connect or handshake failure.
    public init(host: String, port: UInt16, context: UpstreamTLSContext, serverName: String? = nil,
                timeoutSeconds: Int = 10) throws {
        socket = try BlockingSocket.connect(host: host, port: port, timeoutSeconds: timeoutSeconds)
        let name = serverName ?? host
        ssl = context.makeSSL(serverName: name, cacheKey: "\(name):\(port)")
        SSL_set_fd(ssl, socket)
        OpenSSLErrorQueue.clear()
        let result = SSL_connect(ssl)
        if result != 1 {
            let sentence = context.handshakeFailure(ssl: ssl, result: result)
            close() // deinit runs for a throwing class init too; close() makes it a no-op
            throw TrustError("TLS handshake with \(host):\(port) failed: \(sentence)")
        }
    }

    /// Whether this handshake resumed a cached session.
    public var resumedSession: Bool { SSL_session_reused(ssl) == 1 }

    /// The negotiated protocol, e.g. "TLSv1.3".
    public var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    public func write(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) } == Int32(bytes.count)
    }

    /// Reads what arrives until the peer closes or `limit` bytes (TLS 1.3 tickets arrive on read).
    public func read(limit: Int = 65536) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while received.count < limit {
            let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<Int(count)])
        }
        OpenSSLErrorQueue.clear()
        return received
    }

    private var closed = false

    public func close() {
        guard !closed else { return }
        closed = true
        if SSL_is_init_finished(ssl) == 1 { _ = SSL_shutdown(ssl) }
        SSL_free(ssl)
        Glibc.close(socket)
        OpenSSLErrorQueue.clear()
    }

    deinit { close() }
}

/// getaddrinfo + connect with send/receive timeouts.
enum BlockingSocket {
    static func connect(host: String, port: UInt16, timeoutSeconds: Int) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let literal = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let status = getaddrinfo(literal, String(port), &hints, &list)
        guard status == 0, let list else {
            throw TrustError("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = ECONNREFUSED
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            entry = current.pointee.ai_next
            let fd = socket(current.pointee.ai_family, current.pointee.ai_socktype, current.pointee.ai_protocol)
            if fd < 0 { lastError = errno; continue }
            var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            if Glibc.connect(fd, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 { return fd }
            lastError = errno
            Glibc.close(fd)
        }
        throw TrustError("cannot connect to \(host):\(port): \(String(cString: strerror(lastError)))")
    }
}
