import CLibevent
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Blocking loopback sockets for tests: a client that writes bytes and reads replies, and a
/// tiny upstream that records every byte it receives.
final class TestSocket {
    let fd: Int32

    init(fd: Int32) { self.fd = fd }

    static func connect(port: UInt16) throws -> TestSocket {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { close(fd); throw POSIXError(.ECONNREFUSED) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return TestSocket(fd: fd)
    }

    func send(_ text: String) { send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return }
            offset += written
        }
    }

    /// Reads until `predicate` holds for what was read, the peer closes, or 5 s pass.
    func read(until predicate: (String) -> Bool) -> String {
        var collected: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !predicate(String(decoding: collected, as: UTF8.self)) {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            collected.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: collected, as: UTF8.self)
    }

    func readToClose() -> String { read { _ in false } }

    deinit { close(fd) }
}

/// An upstream that answers every request head with a fixed response and remembers the
/// raw bytes it was sent. Runs on its own thread; `port` is an ephemeral loopback port.
final class RecordingUpstream: @unchecked Sendable {
    let port: UInt16
    private let listenFD: Int32
    private let lock = NSLock()
    private var received: [UInt8] = []
    private var connections = 0
    let body: String

    init(body: String = "hello from upstream") throws {
        self.body = body
        let listenFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listenFD = listenFD
        var one: Int32 = 1
        setsockopt(listenFD, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listenFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        listen(listenFD, 64)
        var bound = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listenFD, $0, &length) }
        }
        self.port = UInt16(bigEndian: bound.sin_port)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    var receivedText: String { lock.withLock { String(decoding: received, as: UTF8.self) } }
    var connectionCount: Int { lock.withLock { connections } }

    private func acceptLoop() {
        while true {
            let fd = accept(listenFD, nil, nil)
            if fd < 0 { return }
            lock.withLock { connections += 1 }
            Thread.detachNewThread { [self] in serve(fd) }
        }
    }

    private func serve(_ fd: Int32) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            lock.withLock { received.append(contentsOf: buffer[0..<count]) }
            pending.append(contentsOf: buffer[0..<count])
            // Answer each complete head (these tests send no request bodies upstream).
            while let end = Self.headEnd(pending) {
                pending.removeFirst(end)
                let response = "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nX-Upstream: yes\r\n\r\n\(body)"
                _ = response.utf8CString.withUnsafeBufferPointer { Glibc.send(fd, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL)) }
            }
        }
        close(fd)
    }

    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index + 4
        }
        return nil
    }

    deinit {
        shutdown(listenFD, Int32(SHUT_RDWR))
        close(listenFD)
    }
}
