/// Whose an upstream socket's descriptor is in the budget: the connection's until it gives it
/// back (on close), hands it over (to a socket its caller opens instead), or holds none (a lane
/// of an HTTP/2 session, which counts the socket itself).
struct DescriptorShare {
    private(set) var isCounted = true

    /// Someone else counts it from now on: nothing is given back.
    mutating func handOver() { isCounted = false }

    /// Gives the descriptor back, once: on a worker at the end of the loop iteration (the socket
    /// closes then), else at once.
    mutating func giveBack(via context: WorkerContext?) {
        guard isCounted else { return }
        isCounted = false
        if let context { context.releaseDescriptorsLater(1) } else { DescriptorBudget.shared.release(1) }
    }
}
