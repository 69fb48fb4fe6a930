import CLibevent
import CountersignAdmin
import CountersignConfig
import CountersignHTTP
import CountersignLog

/// What every connection of one worker shares: its event loop, resolver, upstream pool and
/// the live configuration snapshot. Nothing here is touched by another thread except the
/// snapshot store, which is behind its own lock.
final class WorkerContext {
    let id: Int
    let base: OpaquePointer
    let dnsBase: OpaquePointer
    let pool = UpstreamPool()
    /// HTTP/2 upstream connections with room for more exchanges.
    let h2Upstreams = H2UpstreamSessions()
    let idleReadBuffers: IdleReadBufferTrimmer
    /// Response-head deadlines of closed client connections, for new ones.
    let spareDeadlines: SpareDeadlines
    let configStore: ConfigStore
    let metrics = Metrics.shared
    let log = Logger.shared
    /// Open client connections, so a drain can find and close idle ones.
    private(set) var clients: [ObjectIdentifier: ClientConnection] = [:]
    var draining = false

    /// Where relayed tunnel bytes pass between two sockets; one per worker, never shared.
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    /// Where the fields of the request and of the response heads this worker parses are kept,
    /// for the next head of each kind (`HeadArrays`): kept by the worker, not by each
    /// connection, so an idle connection keeps none.
    var requestHeadArrays = HeadArrays()
    var responseHeadArrays = HeadArrays()

    /// The upstream key of the last forwarded request, for the next one to the same upstream.
    let upstreamKeys = RecentUpstreamKey()
    /// The last origin an exchange with auth rules went to, as the auth store names it.
    let authTargets = AuthTargetCache()

    /// The buffers of HTTP/2 streams that ended, for new ones: a stream's exchange reads and
    /// writes two evbuffers, made and freed per stream some 2k instructions a request. Kept by
    /// the worker, not by each connection, so an idle connection holds none.
    private let spareEnds = SparePool<InMemoryEnds>(limit: 64)

    /// Empty buffers for a new HTTP/2 stream; nil when libevent cannot allocate.
    func takeEnds() -> InMemoryEnds? { spareEnds.take() ?? InMemoryEnds(base: base) }

    /// A stream's buffers, unused now (emptied here, and kept while there is room).
    func keepSpare(_ ends: InMemoryEnds) {
        ends.reset()
        spareEnds.giveBack(ends)
    }

    /// A scratch evbuffer for the event loop's own use (request bodies on their way to a
    /// replay copy, discarded challenge bodies); always left empty.
    private let stagingStorage = OwnedEventBuffer()
    var staging: EventBuffer? { stagingStorage?.buffer }

    /// Bytes allowed to queue unsent in one direction before the reading side is paused (TLS
    /// layers included; a response's upstream reads ahead half as much, `responseReadAhead`),
    /// so a stalled peer costs tens of KiB beyond the kernel's socket buffers (SPEC "Proxy
    /// behaviour"). Measured with 20 stalled clients (`test_stalled_reader.py`) and bench's
    /// `intercept_bulk`: at 16 KiB an intercepted connection costs 108 KiB in all and 3.2-3.8 ms of
    /// CPU per MiB moved; at 8 KiB, 92 KiB but 5.4-6.5 ms, since the socket below a TLS
    /// filter is written in steps of half the budget.
    let bufferBudget = 16 * 1024
    /// How far a response's upstream is read ahead of the client: the budget counts what is
    /// unsent to the client, this what waits to be moved there.
    var responseReadAhead: Int { bufferBudget / 2 }

    init(id: Int, base: OpaquePointer, dnsBase: OpaquePointer, configStore: ConfigStore) {
        self.id = id
        self.base = base
        self.dnsBase = dnsBase
        self.configStore = configStore
        idleReadBuffers = IdleReadBufferTrimmer(base: base)
        spareDeadlines = SpareDeadlines(base: base)
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
