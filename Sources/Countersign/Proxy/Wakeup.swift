import CLibevent

/// Wakes an event loop from another thread through a non-blocking socket pair, so libevent needs no
/// locks at all (each loop is touched by its own thread only). Writes coalesce: one wake-up
/// may carry many signals.
final class Wakeup {
    private var fds: [Int32] = [-1, -1]
    private var watch: DescriptorWatch?
    private let action: () -> Void

    init?(base: OpaquePointer, action: @escaping () -> Void) {
        self.action = action
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else { return nil }
        watch = DescriptorWatch(base: base, descriptor: fds[0], condition: .readable, repeat: .persistent) { [unowned self] _ in self.fire() }
        watch?.arm()
    }

    /// Safe from any thread.
    func signal() {
        var byte: UInt8 = 1
        _ = send(fds[1], &byte, 1, Int32(MSG_NOSIGNAL))
    }

    private func fire() {
        var sink = [UInt8](repeating: 0, count: 64)
        while sink.withUnsafeMutableBytes({ recv(fds[0], $0.baseAddress, $0.count, 0) }) > 0 {}
        action()
    }

    deinit {
        watch = nil
        for fd in fds where fd >= 0 { close(fd) }
    }
}
