import CLibevent
import CountersignConfig
import Synchronization

/// Every descriptor a connection costs — the client socket, its upstream (connecting, in
/// use or pooled), a relay's splice pipes — counted against one budget for the process:
/// `RLIMIT_NOFILE` minus a reserve for what is not per connection (listeners, event loops,
/// resolvers, log and configuration files). Accepting pauses while the budget cannot pay for
/// a client and its upstream, so the process never reaches the kernel's limit itself.
final class DescriptorBudget: Sendable {
    static let shared = DescriptorBudget()

    /// A client connection needs its own socket and one upstream socket.
    static let perConnection = 2
    /// A relayed tunnel that switched to splice(2) holds two pipes more.
    static let perSplicedTunnel = 4

    private let inUse = Atomic<Int>(0)
    private let limitValue = Atomic<Int>(.max)

    /// What is kept back from `RLIMIT_NOFILE` for descriptors that are not per connection.
    static func reserve(workers: Int) -> Int { 64 + 8 * max(workers, 1) }

    /// The soft `RLIMIT_NOFILE` of this process.
    static var processLimit: Int {
        var limit = rlimit()
        guard getrlimit(RaiseFileLimit.RLIMIT_NOFILE_VALUE, &limit) == 0 else { return .max }
        return limit.rlim_cur >= rlim_t(Int.max) ? .max : Int(limit.rlim_cur)
    }

    /// What `countersign check` says when `max_connections` cannot be met within
    /// `hardLimit` (the descriptor limit `run` raises itself to); nil when it can.
    static func shortfall(_ configuration: Configuration, hardLimit: Int?) -> String? {
        guard let hardLimit else { return nil }
        let maxConnections = configuration.limits.maxConnections
        let needed = maxConnections * perConnection + reserve(workers: configuration.workers)
        guard needed > hardLimit else { return nil }
        let fits = max((hardLimit - reserve(workers: configuration.workers)) / perConnection, 0)
        return "limits.max_connections is \(maxConnections), but the descriptor limit (RLIMIT_NOFILE \(hardLimit)) serves about \(fits) "
            + "connections (each needs \(perConnection) descriptors, client and upstream, a spliced tunnel \(perSplicedTunnel); "
            + "\(reserve(workers: configuration.workers)) are kept for listeners and files): raise the limit to at least \(needed) "
            + "(`ulimit -n`, systemd LimitNOFILE=) or lower limits.max_connections to \(fits)"
    }

    /// Sets the budget from the process's descriptor limit (after it was raised).
    func configure(workers: Int) {
        let limit = Self.processLimit
        limitValue.store(limit == .max ? .max : max(limit - Self.reserve(workers: workers), Self.perConnection),
                         ordering: .relaxed)
    }

    var limit: Int { limitValue.load(ordering: .relaxed) }
    var used: Int { inUse.load(ordering: .relaxed) }
    var available: Int { max(limit - used, 0) }

    /// Takes `count` descriptors if the budget has them; false (nothing taken) if not.
    func take(_ count: Int) -> Bool {
        let limit = self.limit
        var current = inUse.load(ordering: .relaxed)
        while true {
            guard current + count <= limit else { return false }
            let (exchanged, original) = inUse.compareExchange(expected: current, desired: current + count, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    /// Counts descriptors that already exist (an accepted socket, one handed to a relay).
    func add(_ count: Int) { inUse.add(count, ordering: .relaxed) }

    func release(_ count: Int) { inUse.subtract(count, ordering: .relaxed) }
}
