import CLibevent
import CountersignAuth
import Synchronization

extension KDCQueue {
    /// The proxy's KDC threads: two for the whole process, up to eight while jobs wait behind
    /// threads stuck on a KDC that does not answer; at most 64 first tokens queued or being
    /// made across all workers (beyond that, an exchange answers without Kerberos).
    static let proxy = KDCQueue(threads: 2, capacity: 64, maxThreads: 8, prepareThread: { _ = cs_block_signals_in_thread() })
}

/// Makes first Negotiate tokens on the KDC threads and hands each result back to the event
/// loop of the worker that asked, through its inbox: a KDC that does not answer holds one KDC
/// thread, never a worker.
enum KerberosOffLoop {
    /// The longest an exchange waits for its first token. MIT's own timeouts on a KDC that
    /// does not answer add up to about a minute (UDP retries, then TCP, for the initial ticket
    /// and again inside the library); past this the request goes on without Kerberos.
    static let maximumWait: Double = 30

    /// The job to cancel when the result is no longer wanted (the exchange ended or went on
    /// without Kerberos), so it does not hold a place or a KDC thread; nil when refused.
    @discardableResult
    static func prepare(_ request: KerberosRequest, context: WorkerContext, then: @escaping (PreparedNegotiate) -> Void) -> KDCJob? {
        let inbox = context.inbox
        let job = KDCQueue.proxy.submit({ PreparedNegotiate.make(request) }, deliver: { prepared in inbox.post { then(prepared) } })
        if let job, job.foundEveryThreadBusy {
            askForSpareThread(job, after: KDCQueue.spareThreadDelay, on: context.base)
        } else if job == nil {
            // Said on the next loop iteration, like any other result: no re-entry into the caller.
            inbox.post { then(.refused(request, reason: "\(KDCQueue.proxy.capacity) Kerberos requests are already waiting for the KDC; not waiting for another")) }
        }
        return job
    }

    /// Timed on the worker's own loop (no timer thread): a job still queued then gets a spare
    /// KDC thread; one cancelled meanwhile (its client left) needs none.
    private static func askForSpareThread(_ job: KDCJob, after seconds: Double, on base: OpaquePointer) {
        var holder: Timer?
        holder = Timer(base: base) { [weak job] in
            if let job { KDCQueue.proxy.startSpareThread(ifStillWaiting: job) }
            holder = nil   // the timer kept itself alive until it fired
        }
        holder?.arm(seconds: seconds)
    }
}

/// Work other threads hand to one worker's event loop (reloads, results made off the loop).
final class WorkerInbox {
    private var wakeup: Wakeup?
    private let pending = Mutex<[() -> Void]>([])

    /// Before the loop runs, or on its own thread: the wake-up event belongs to that loop.
    init(base: OpaquePointer) {
        wakeup = Wakeup(base: base) { [unowned self] in self.run() }
    }

    /// Safe from any thread.
    func post(_ work: @escaping () -> Void) {
        pending.withLock { $0.append(work) }
        wakeup?.signal()
    }

    private func run() {
        let work = pending.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
        for item in work { item() }
    }
}
