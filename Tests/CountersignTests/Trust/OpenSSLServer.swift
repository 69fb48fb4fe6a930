import Foundation
import COpenSSL

/// `openssl s_server` on a loopback ephemeral port, stopped by its PID when the test ends.
final class OpenSSLServer {
    let port: UInt16
    private let process = Process()

    init(arguments: [String]) throws {
        port = try OpenSSLServer.freePort()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["s_server", "-accept", "127.0.0.1:\(port)", "-naccept", "100"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = Pipe()
        try process.run()
        try waitUntilListening()
    }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
    }

    deinit { stop() }

    private func waitUntilListening() throws {
        for _ in 0..<100 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = OpenSSLServer.loopback(port)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            close(fd)
            if connected == 0 { return }
            usleep(50_000)
        }
        throw NSError(domain: "OpenSSLServer", code: 1, userInfo: [NSLocalizedDescriptionKey: "s_server did not start"])
    }

    private static func loopback(_ port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// Binds port 0 to learn a free port, then releases it for s_server.
    private static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw NSError(domain: "OpenSSLServer", code: 2) }
        return UInt16(bigEndian: address.sin_port)
    }
}
