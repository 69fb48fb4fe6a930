import COpenSSL
import Foundation
@testable import CountersignInterception
import CountersignSupport

/// A tiny blocking TLS server on a loopback ephemeral port: it accepts connections one at a
/// time, handshakes with `makeServerSSL(for: host)`, answers one HTTP request with "ok",
/// and records how each handshake went.
final class LoopbackTLSServer: @unchecked Sendable {
    enum Handshake: Equatable {
        case succeeded(alpn: String?)
        case failed(ClientHandshakeFailure)
    }

    let port: UInt16
    private let listener: Int32
    private let results = Mutex<[Handshake]>([])
    private let finished = DispatchSemaphore(value: 0)

    init(context: InterceptionTLSContext, host: String, connections: Int) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && listen(descriptor, 8) == 0
                    && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw InterceptionError("cannot listen on loopback: errno \(errno)")
        }
        listener = descriptor
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in
            for _ in 0..<connections { serveOne(context: context, host: host) }
            finished.signal()
        }
        thread.start()
    }

    deinit { close(listener) }

    /// The handshakes, once all expected connections were served (nil on timeout).
    func handshakes(timeout: TimeInterval = 20) -> [Handshake]? {
        guard finished.wait(timeout: .now() + timeout) == .success else { return nil }
        return results.withLock { $0 }
    }

    private func serveOne(context: InterceptionTLSContext, host: String) {
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return }
        defer { close(connection) }
        guard let ssl = try? context.makeServerSSL(for: host) else { return }
        defer { SSL_free(ssl) }
        SSL_set_fd(ssl, connection)
        ERR_clear_error()
        guard SSL_accept(ssl) == 1 else {
            let failure = ClientHandshakeFailure.fromErrorQueue(host: host)
            results.withLock { $0.append(.failed(failure)) }
            return
        }
        var protocolName: UnsafePointer<UInt8>?
        var protocolLength: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &protocolName, &protocolLength)
        let alpn = protocolName.map { String(decoding: UnsafeBufferPointer(start: $0, count: Int(protocolLength)), as: UTF8.self) }
        results.withLock { $0.append(.succeeded(alpn: alpn)) }
        var request = [UInt8](repeating: 0, count: 4096)
        if SSL_read(ssl, &request, Int32(request.count)) > 0 {
            let response = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
            _ = SSL_write(ssl, response, Int32(response.utf8.count))
        }
        SSL_shutdown(ssl)
    }
}
