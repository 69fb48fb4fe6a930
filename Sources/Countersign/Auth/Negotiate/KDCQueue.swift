import Foundation
import Synchronization

/// Runs blocking Kerberos work (anything that may wait on a KDC) on a few dedicated threads,
/// so an event loop never waits on a KDC that does not answer. The queue is bounded: beyond
/// `capacity` jobs waiting or running, `submit` refuses at once and the caller answers
/// without Kerberos. Results go to `deliver` on the KDC thread; the caller hands them to its
/// own loop.
///
/// A KDC that does not answer holds a thread for as long as the Kerberos library waits (about a
/// minute per attempt, and no call can interrupt it). So that this never outlasts the outage:
/// a job whose caller is gone is cancelled and dropped before it runs, and a job that found
/// every thread busy (`KDCJob.foundEveryThreadBusy`) and still waits a moment later gets a
/// thread of its own (`startSpareThread(ifStillWaiting:)`, up to `maxThreads`; the caller's
/// event loop times the moment), so a request made once the KDC answers again is not queued
/// behind threads still stuck in the outage. Threads beyond `threads` leave when idle.
public final class KDCQueue: @unchecked Sendable {
    public let capacity: Int
    private let baseThreads: Int
    public let maxThreads: Int

    private struct State {
        var queue: [KDCJob] = []
        /// Jobs queued or running (cancelled queued ones no longer count).
        var inFlight = 0
        var threads = 0
        var idleThreads = 0
    }
    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    /// Runs first on each thread (the proxy blocks signals there, as on its workers).
    private let prepareThread: () -> Void

    /// How long a job that found every thread busy waits before it asks for a spare thread.
    public static let spareThreadDelay = 0.5

    public init(threads: Int, capacity: Int, maxThreads: Int? = nil, prepareThread: @escaping () -> Void = {}) {
        baseThreads = max(1, threads)
        self.maxThreads = max(baseThreads, maxThreads ?? baseThreads * 4)
        self.capacity = max(1, capacity)
        self.prepareThread = prepareThread
    }

    /// Jobs queued or running now.
    public var inFlight: Int { state.withLock { $0.inFlight } }

    /// KDC threads running now (busy or idle).
    public var threadCount: Int { state.withLock { $0.threads } }

    /// Queues `work`; its result goes to `deliver` (on a KDC thread) unless the job was
    /// cancelled before it ran. Nil, with nothing queued, when `capacity` jobs are already in
    /// flight.
    @discardableResult
    public func submit<R>(_ work: @escaping () -> R, deliver: @escaping (R) -> Void) -> KDCJob? {
        let job = KDCJob { [self] job in
            let result = work()
            state.withLock { $0.inFlight -= 1 }
            if job.finishRunning() { deliver(result) }   // not to a caller that cancelled meanwhile
        }
        let (accepted, startThreads, mayNeedSpare) = state.withLock { state -> (Bool, Int, Bool) in
            guard state.inFlight < capacity else { return (false, 0, false) }
            state.inFlight += 1
            state.queue.append(job)
            let start = state.threads < baseThreads ? baseThreads - state.threads : 0
            state.threads += start
            return (true, start, start == 0 && state.idleThreads == 0)
        }
        guard accepted else { return nil }
        job.queue = self
        job.foundEveryThreadBusy = mayNeedSpare
        for _ in 0..<startThreads { startThread() }
        available.signal()
        return job
    }

    /// A job still queued with every thread busy (stuck on a KDC that does not answer) gets a
    /// thread of its own, up to `maxThreads`; a job taken or cancelled meanwhile needs none.
    public func startSpareThread(ifStillWaiting job: KDCJob) {
        let start = state.withLock { state -> Bool in
            guard job.isQueued, state.idleThreads == 0, state.threads < maxThreads,
                  state.queue.contains(where: { $0 === job }) else { return false }
            state.threads += 1
            return true
        }
        if start { startThread() }
    }

    /// Takes a cancelled job out of the queue; false when it had already started.
    fileprivate func remove(_ job: KDCJob) -> Bool {
        state.withLock { state in
            guard let index = state.queue.firstIndex(where: { $0 === job }) else { return false }
            state.queue.remove(at: index)
            state.inFlight -= 1
            return true
        }
    }

    private enum Next { case run(KDCJob), wait, leave }

    private func startThread() {
        let thread = Thread { [self] in
            prepareThread()
            while true {
                let next: Next = state.withLock { state in
                    if !state.queue.isEmpty { return .run(state.queue.removeFirst()) }
                    // Nothing to do: a spare thread leaves, a base thread waits for work.
                    if state.threads > baseThreads { state.threads -= 1; return .leave }
                    state.idleThreads += 1
                    return .wait
                }
                switch next {
                case .run(let job):
                    // A job cancelled between the queue and here did not run: its place is freed here.
                    if !job.run() { state.withLock { $0.inFlight -= 1 } }
                case .wait:
                    available.wait()
                    state.withLock { $0.idleThreads -= 1 }
                case .leave:
                    return
                }
            }
        }
        thread.name = "countersign-kdc"
        thread.stackSize = 1 << 20
        thread.start()
    }
}

/// A job handed to a `KDCQueue`: cancel it when its result is no longer wanted (the exchange
/// ended, or went on without Kerberos). A queued job is dropped; a running one cannot be
/// interrupted, but its result is not delivered.
public final class KDCJob: @unchecked Sendable {
    private enum Stage { case queued, running, cancelled, done }
    private let stage = Mutex(Stage.queued)
    private let body: (KDCJob) -> Void
    fileprivate weak var queue: KDCQueue?
    /// Every thread was busy when it was queued: if it still waits a moment later, the threads
    /// are likely stuck on a KDC, and it should ask for a spare one.
    public fileprivate(set) var foundEveryThreadBusy = false

    fileprivate init(_ body: @escaping (KDCJob) -> Void) {
        self.body = body
    }

    fileprivate var isQueued: Bool { stage.withLock { $0 == .queued } }

    public func cancel() {
        let wasQueued = stage.withLock { stage -> Bool in
            defer { if stage == .queued || stage == .running { stage = .cancelled } }
            return stage == .queued
        }
        if wasQueued { _ = queue?.remove(self) }
    }

    /// Runs the work unless cancelled first; whether it ran.
    fileprivate func run() -> Bool {
        let go = stage.withLock { stage -> Bool in
            guard stage == .queued else { return false }
            stage = .running
            return true
        }
        if go { body(self) }
        return go
    }

    /// The work is done: whether its result is still wanted.
    fileprivate func finishRunning() -> Bool {
        stage.withLock { stage in
            guard stage == .running else { return false }
            stage = .done
            return true
        }
    }
}
