import CLibevent
import CountersignAdmin
import CountersignConfig
import CountersignLog

/// What every connection of one worker shares: its event loop, resolver, upstream pool and
/// the live configuration snapshot. Nothing here is touched by another thread except the
/// snapshot store, which is behind its own lock.
final class WorkerContext {
    let id: Int
    let base: OpaquePointer
    let dnsBase: OpaquePointer
    let pool = UpstreamPool()
    let idleReadBuffers: IdleReadBufferTrimmer
    let configStore: ConfigStore
    let metrics = Metrics.shared
    let log = Logger.shared
    /// Open client connections, so a drain can find and close idle ones.
    private(set) var clients: [ObjectIdentifier: ClientConnection] = [:]
    var draining = false

    /// Where relayed tunnel bytes pass between two sockets; one per worker, never shared.
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    /// A scratch evbuffer for the event loop's own use (request bodies on their way to a
    /// replay copy, discarded challenge bodies); always left empty.
    private let stagingStorage = OwnedEventBuffer()
    var staging: EventBuffer? { stagingStorage?.buffer }

    /// Bytes allowed to queue in one direction before the reading side is paused: unsent
    /// output (TLS layers included) and unread input each stay within it, so a stalled
    /// peer costs tens of KiB beyond the kernel's socket buffers (SPEC "Proxy behaviour").
    /// Measured with 20 stalled clients (`test_stalled_reader.py`), after the TLS layers'
    /// own buffers were trimmed (`tlsFilterReadSize`, 4 KiB records sent): at 16 KiB a
    /// plain forward cost 53 KiB each and an intercepted one 118 KiB; at 8 KiB, 30 and 92.
    /// 8 KiB is also what nginx moves per proxy buffer.
    let bufferBudget = 8 * 1024

    init(id: Int, base: OpaquePointer, dnsBase: OpaquePointer, configStore: ConfigStore) {
        self.id = id
        self.base = base
        self.dnsBase = dnsBase
        self.configStore = configStore
        idleReadBuffers = IdleReadBufferTrimmer(base: base)
        inbox = WorkerInbox(base: base)
        pool.idleReadBuffers = idleReadBuffers
        acceptGate = AcceptGate(base: base) { [unowned configStore] in configStore.current.configuration.limits.maxConnections }
    }

    /// Pauses this worker's listeners while there is no room for another connection.
    let acceptGate: AcceptGate

    var config: Configuration { configStore.current.configuration }

    /// Where other threads hand work to this loop (reloads, first Kerberos tokens).
    let inbox: WorkerInbox

    /// A client connection and its socket, counted until `unregister`.
    func register(_ client: ClientConnection) {
        clients[ObjectIdentifier(client)] = client
        metrics.connectionsOpen.add(1)
        metrics.connectionsAccepted.add()
        DescriptorBudget.shared.add(1)
    }

    func unregister(_ client: ClientConnection) {
        if clients.removeValue(forKey: ObjectIdentifier(client)) != nil {
            metrics.connectionsOpen.add(-1)
            releaseDescriptorsLater(1)
        }
    }

    private var releasing = 0
    private lazy var releaseTimer = Timer(base: base) { [unowned self] in
        DescriptorBudget.shared.release(releasing)
        releasing = 0
        acceptGate.recheck()
    }

    /// Gives descriptors back to the budget on the next loop iteration. libevent closes a
    /// freed bufferevent's socket only when its finalizers run, after the callbacks of this
    /// iteration: counted free at once, they would let the listener accept past the limit
    /// in the same batch of events.
    func releaseDescriptorsLater(_ count: Int) {
        if releasing == 0 { releaseTimer.arm(seconds: 0) }
        releasing += count
    }
}
