import CLibevent

/// One libevent loop and what is made on it besides streams, listeners and timers: its
/// resolver, and watches on descriptors and signals. The rest of the shell asks these types,
/// not libevent.
enum EventLoop {
    /// A loop whose epoll changes are applied once per iteration (`changelist`): a write event
    /// a TLS stream turns on and off again within one callback (`Stream.flush`) costs no syscall.
    /// Buffer chains freed on a loop's thread are kept for its next ones (chain_memory.c).
    static func make(changelist: Bool = false) -> OpaquePointer? {
        cs_chain_memory_install()
        guard changelist else { return event_base_new() }
        guard let config = event_config_new() else { return nil }
        defer { event_config_free(config) }
        _ = event_config_set_flag(config, Int32(EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST.rawValue))
        return event_base_new_with_config(config)
    }

    /// Runs `base` until `stop`, even while nothing is registered on it.
    static func run(_ base: OpaquePointer) {
        event_base_loop(base, EVLOOP_NO_EXIT_ON_EMPTY)
    }

    /// Makes `run` return after the current callback (from the loop's own thread).
    static func stop(_ base: OpaquePointer) {
        event_base_loopbreak(base)
    }

    /// A resolver on `base`: the system's nameservers when it can read them, and /etc/hosts
    /// (localhost, test hosts) either way; idle, it holds no socket.
    static func makeResolver(on base: OpaquePointer) -> OpaquePointer? {
        let resolver = evdns_base_new(base, EVDNS_BASE_INITIALIZE_NAMESERVERS | EVDNS_BASE_DISABLE_WHEN_INACTIVE)
            ?? evdns_base_new(base, EVDNS_BASE_DISABLE_WHEN_INACTIVE)
        if let resolver { evdns_base_load_hosts(resolver, nil) }
        return resolver
    }
}

/// A watch on a descriptor (readable or writable) or a signal, on one loop: `action` hears
/// each time it fires, and whether its timeout did. Freed with its owner.
final class DescriptorWatch {
    enum Condition {
        case readable
        case writable
        /// The descriptor is the signal's number.
        case signal
    }

    enum Repeat {
        /// Stays armed after it fires (its timeout restarted).
        case persistent
        /// Fires once per `arm`.
        case once
    }

    private var event: OpaquePointer?
    private let action: (_ timedOut: Bool) -> Void

    init?(base: OpaquePointer, descriptor: Int32, condition: Condition, repeat: Repeat, action: @escaping (_ timedOut: Bool) -> Void) {
        self.action = action
        var flags: Int32
        switch condition {
        case .readable: flags = Int32(EV_READ)
        case .writable: flags = Int32(EV_WRITE)
        case .signal: flags = Int32(EV_SIGNAL)
        }
        if case .persistent = `repeat` { flags |= Int32(EV_PERSIST) }
        guard let event = event_new(base, descriptor, Int16(flags), descriptorWatchTrampoline, Unmanaged.passUnretained(self).toOpaque()) else {
            return nil
        }
        self.event = event
    }

    deinit {
        if let event { event_free(event) }
    }

    /// Watches from now on; with `timeout`, fires as timed out after that many seconds
    /// without the condition.
    func arm(timeout: Double? = nil) {
        guard let event else { return }
        if var time = timeout.map(timeval.init(seconds:)) {
            event_add(event, &time)
        } else {
            event_add(event, nil)
        }
    }

    func disarm() {
        if let event { event_del(event) }
    }

    var isArmed: Bool {
        guard let event else { return false }
        return event_pending(event, Int16(EV_READ | EV_WRITE | EV_SIGNAL | EV_TIMEOUT), nil) != 0
    }

    fileprivate func fire(timedOut: Bool) { action(timedOut) }
}

private func descriptorWatchTrampoline(_ fd: Int32, _ what: Int16, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<DescriptorWatch>.fromOpaque(context).takeUnretainedValue().fire(timedOut: what & Int16(EV_TIMEOUT) != 0)
    FlushQueue.current?.flushAll()
}
