import CountersignAdmin
import Synchronization

/// The bytes of every body held whole at once, process-wide (`limits.held_bodies_bytes`): a
/// signed request's body is read before its head can be signed, so without a shared bound many
/// clients sending large signed requests at once could hold the process's memory hostage.
final class HeldBodyBudget: Sendable {
    static let shared = HeldBodyBudget()

    private let held = Atomic<Int>(0)

    /// Takes `count` bytes of the budget; false (and nothing taken) when `limit` would be passed.
    func reserve(_ count: Int, limit: Int) -> Bool {
        var current = held.load(ordering: .relaxed)
        while true {
            guard current + count <= limit else { return false }
            let (exchanged, original) = held.compareExchange(expected: current, desired: current + count, ordering: .relaxed)
            if exchanged {
                Metrics.shared.heldBodyBytes.add(count)
                return true
            }
            current = original
        }
    }

    func release(_ count: Int) {
        guard count > 0 else { return }
        held.subtract(count, ordering: .relaxed)
        Metrics.shared.heldBodyBytes.add(-count)
    }

    var current: Int { held.load(ordering: .relaxed) }
}
