import CountersignAdmin

/// Whether a worker takes new connections. Its listeners pause while `max_connections` is
/// reached or the descriptor budget cannot pay for a client and its upstream, and resume as
/// soon as there is room: checked when one of this worker's connections closes, and every
/// `recheckInterval` for room freed by other workers. Waiting clients stay in the kernel's
/// backlog instead of being accepted, refused and logged one by one.
final class AcceptGate {
    static let recheckInterval = 0.1
    private let base: OpaquePointer
    private let maxConnections: () -> Int
    /// The worker's current listeners (set by the worker).
    var listeners: () -> [Listener] = { [] }
    private var paused = false
    private lazy var timer = Timer(base: base) { [unowned self] in self.recheck() }
    private let log = RateLimitedLog()

    init(base: OpaquePointer, maxConnections: @escaping () -> Int) {
        self.base = base
        self.maxConnections = maxConnections
    }

    /// Why no connection may be taken now, or nil when one may.
    var refusal: String? {
        let open = Metrics.shared.connectionsOpen.current
        if open >= maxConnections() { return "max_connections reached" }
        // Clients may take only their share, so each still finds a descriptor for its upstream.
        let budget = DescriptorBudget.shared
        if open >= budget.limit / DescriptorBudget.perConnection || budget.available < DescriptorBudget.perConnection {
            return "descriptor budget spent"
        }
        return nil
    }

    /// Pauses accepting when there is no room for another connection.
    func pauseIfFull() {
        guard let reason = refusal else { return }
        // Every listener, including one a reload added while paused.
        for listener in listeners() { listener.pause() }
        guard !paused else { return }
        paused = true
        timer.arm(seconds: Self.recheckInterval)
        log.warn("not accepting connections: \(reason)", [
            ("connections", .int(Metrics.shared.connectionsOpen.current)), ("max_connections", .int(maxConnections())),
            ("descriptors_in_use", .int(DescriptorBudget.shared.used)), ("descriptor_budget", .int(DescriptorBudget.shared.limit)),
        ])
    }

    /// A connection closed, or the timer fired: resume when there is room again.
    func recheck() {
        guard paused else { return }
        guard refusal == nil else {
            timer.arm(seconds: Self.recheckInterval)
            return
        }
        paused = false
        timer.cancel()
        for listener in listeners() { listener.resume() }
    }
}
