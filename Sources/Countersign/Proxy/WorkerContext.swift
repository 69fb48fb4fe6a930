import CEventSSL
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
    let staging: OpaquePointer? = evbuffer_new()

    /// Bytes allowed to queue in one direction before the reading side is paused.
    let bufferBudget = 256 * 1024

    init(id: Int, base: OpaquePointer, dnsBase: OpaquePointer, configStore: ConfigStore) {
        self.id = id
        self.base = base
        self.dnsBase = dnsBase
        self.configStore = configStore
        idleReadBuffers = IdleReadBufferTrimmer(base: base)
        pool.idleReadBuffers = idleReadBuffers
    }

    var config: Configuration { configStore.current.configuration }

    func register(_ client: ClientConnection) {
        clients[ObjectIdentifier(client)] = client
        metrics.connectionsOpen.add(1)
        metrics.connectionsAccepted.add()
    }

    func unregister(_ client: ClientConnection) {
        if clients.removeValue(forKey: ObjectIdentifier(client)) != nil {
            metrics.connectionsOpen.add(-1)
        }
    }
}
