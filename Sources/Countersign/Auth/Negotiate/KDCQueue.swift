import Foundation
import Synchronization

/// Runs blocking Kerberos work (anything that may wait on a KDC) on a few dedicated threads,
/// so an event loop never waits on a KDC that does not answer. The queue is bounded: beyond
/// `capacity` jobs waiting or running, `submit` refuses at once and the caller answers
/// without Kerberos. Results go to `deliver` on the KDC thread; the caller hands them to its
/// own loop.
public final class KDCQueue: @unchecked Sendable {
    public let capacity: Int
    private let threadCount: Int
    private struct State {
        var jobs: [() -> Void] = []
        /// Jobs queued or running.
        var inFlight = 0
        var started = false
    }
    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    /// Runs first on each thread (the proxy blocks signals there, as on its workers).
    private let prepareThread: () -> Void

    public init(threads: Int, capacity: Int, prepareThread: @escaping () -> Void = {}) {
        threadCount = max(1, threads)
        self.capacity = max(1, capacity)
        self.prepareThread = prepareThread
    }

    /// Jobs queued or running now.
    public var inFlight: Int { state.withLock { $0.inFlight } }

    /// Queues `work`; its result goes to `deliver` (on a KDC thread). False, with nothing
    /// queued, when `capacity` jobs are already in flight.
    @discardableResult
    public func submit<R>(_ work: @escaping () -> R, deliver: @escaping (R) -> Void) -> Bool {
        let job = { [self] in
            let result = work()
            state.withLock { $0.inFlight -= 1 }
            deliver(result)
        }
        let (accepted, startThreads) = state.withLock { state -> (Bool, Bool) in
            guard state.inFlight < capacity else { return (false, false) }
            state.inFlight += 1
            state.jobs.append(job)
            defer { state.started = true }
            return (true, !state.started)
        }
        guard accepted else { return false }
        if startThreads { for index in 0..<threadCount { startThread(index) } }
        available.signal()
        return true
    }

    private func startThread(_ index: Int) {
        let thread = Thread { [self] in
            prepareThread()
            while true {
                available.wait()
                let job = state.withLock { $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }
                job?()
            }
        }
        thread.name = "countersign-kdc-\(index)"
        thread.stackSize = 1 << 20
        thread.start()
    }
}
