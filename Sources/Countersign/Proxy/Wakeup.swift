import CLibevent

/// Wakes an event loop from another thread through a non-blocking socket pair, so libevent needs no
/// locks at all (each loop is touched by its own thread only). Writes coalesce: one wake-up
/// may carry many signals.
final class Wakeup {
    private var fds: [Int32] = [-1, -1]
    private var event: OpaquePointer?
    private let action: () -> Void

    init?(base: OpaquePointer, action: @escaping () -> Void) {
        self.action = action
        guard evutil_socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { return nil }
        for fd in fds {
            evutil_make_socket_nonblocking(fd)
            evutil_make_socket_closeonexec(fd)
        }
        event = event_new(base, fds[0], Int16(EV_READ | EV_PERSIST), wakeupTrampoline, Unmanaged.passUnretained(self).toOpaque())
        event_add(event, nil)
    }

    /// Safe from any thread.
    func signal() {
        var byte: UInt8 = 1
        _ = send(fds[1], &byte, 1, Int32(MSG_NOSIGNAL))
    }

    fileprivate func fire() {
        var sink = [UInt8](repeating: 0, count: 64)
        while sink.withUnsafeMutableBytes({ recv(fds[0], $0.baseAddress, $0.count, 0) }) > 0 {}
        action()
    }

    deinit {
        if let event { event_free(event) }
        for fd in fds where fd >= 0 { evutil_closesocket(fd) }
    }
}

private func wakeupTrampoline(_ fd: Int32, _ what: Int16, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<Wakeup>.fromOpaque(context).takeUnretainedValue().fire()
    FlushQueue.current?.flushAll()
}
