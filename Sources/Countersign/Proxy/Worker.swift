import CLibevent
import CountersignConfig
import CountersignLog
import Foundation
import Synchronization

/// One event loop on its own thread, with its own listeners, connections, upstream pool and
/// resolver. Other threads talk to it only through `post`, which wakes the loop.
final class Worker: AcceptHandler {
    let context: WorkerContext
    private var listeners: [(Listener, ListenerRuntime)] = []
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    private let stoppedFlag = Mutex(false)
    var isStopped: Bool { stoppedFlag.withLock { $0 } }
    private lazy var drainCheck = Timer(base: context.base) { [unowned self] in self.checkDrained() }
    private let drainProgress: DrainProgress

    init(id: Int, configStore: ConfigStore, drainProgress: DrainProgress) throws {
        self.drainProgress = drainProgress
        guard let base = EventLoop.make(changelist: true) else { throw ListenerError.bind("worker \(id)", "cannot create an event loop") }
        guard let dnsBase = EventLoop.makeResolver(on: base) else { throw ListenerError.bind("worker \(id)", "cannot create a resolver") }
        context = WorkerContext(id: id, base: base, dnsBase: dnsBase, configStore: configStore)
        context.pool.idleTimeout = configStore.current.configuration.limits.idleTimeout
        context.acceptGate.listeners = { [unowned self] in self.listeners.map(\.0) }
    }

    /// Accepts on `socket` too (shared with the other workers).
    func listen(on socket: ListeningSocket, runtime: ListenerRuntime) throws {
        let listener = try Listener(base: context.base, socket: socket, handler: self)
        listeners.append((listener, runtime))
    }

    /// Applies a reload's listener changes on this worker's thread: stops accepting on the
    /// addresses that went away (their open connections carry on) and accepts on the new
    /// ones, which the main thread bound already.
    func updateListeners(removing removed: [ListenAddress], adding added: [ListenerChanges.Added]) {
        for (listener, runtime) in listeners where removed.contains(runtime.address) { listener.close() }
        listeners.removeAll { removed.contains($0.1.address) }
        for socket in added {
            do {
                try listen(on: socket.socket, runtime: ListenerRuntime(address: socket.address, index: socket.index))
            } catch {
                context.log.error("cannot listen on a reloaded address", [("address", .string("\(socket.address)")), ("error", .string("\(error)"))])
            }
        }
    }

    func start() {
        let thread = Thread { [self] in
            cs_block_signals_in_thread()
            FlushQueue.installForCurrentThread()
            EventLoop.run(context.base)
            stoppedFlag.withLock { $0 = true }
            finished.signal()
        }
        thread.name = "countersign-worker-\(context.id)"
        thread.stackSize = 1 << 20
        self.thread = thread
        thread.start()
    }

    /// Runs `work` on this worker's thread.
    func post(_ work: @escaping (Worker) -> Void) {
        context.inbox.post { [unowned self] in work(self) }
    }

    func waitUntilStopped() { finished.wait() }

    // MARK: - Accepting

    func accepted(fd: Int32, address: UnsafePointer<sockaddr>?, from listener: Listener) {
        let peer = PeerAddress(address)
        guard let runtime = listeners.first(where: { $0.0 === listener })?.1 else {
            Listener.discard(fd)
            return
        }
        accept(fd: fd, peer: peer, runtime: runtime)
    }

    private func accept(fd: Int32, peer: PeerAddress, runtime: ListenerRuntime) {
        let configuration = context.config
        if context.draining { drainProgress.noteBusy() }
        // Another worker may have taken the last room since this one last looked.
        if context.acceptGate.refusal != nil {
            context.metrics.connectionsRefused.add()
            Listener.discard(fd)
            context.acceptGate.pauseIfFull()
            return
        }
        guard let stream = Stream.socket(base: context.base, fd: fd) else { return }
        let client = ClientConnection(context: context, stream: stream, peer: peer, listener: runtime)
        context.register(client)
        context.acceptGate.pauseIfFull()
        if !peer.isAllowed(by: runtime.config(in: configuration).allow) {
            context.metrics.connectionsRefused.add()
            client.refuse(.denied("client \(peer.ip.map { "\($0)" } ?? "unknown") is not in this listener's allow list"))
            return
        }
        client.start()
    }

    // MARK: - Stopping

    /// Closes idle connections; from now on every connection, new ones included, closes
    /// after its exchange (`Connection: close`). Accepting goes on until `finishDrain`.
    func beginDrain() {
        context.draining = true
        context.pool.closeAll()
        for client in Array(context.clients.values) { client.drainIfIdle() }
    }

    /// The drain was quiet: stops accepting, and ends the loop once the connections that
    /// arrived meanwhile have finished.
    func finishDrain() {
        for (listener, _) in listeners { listener.close() }
        listeners.removeAll()
        checkDrained()
    }

    private func checkDrained() {
        if context.clients.isEmpty {
            stopLoop()
        } else {
            drainCheck.arm(seconds: 0.05)
        }
    }

    func stopLoop() {
        drainCheck.cancel()
        context.pool.closeAll()
        context.h2Upstreams.closeAll()
        for client in Array(context.clients.values) { client.shutdown(.now) }
        EventLoop.stop(context.base)
    }
}

/// Which configured listener an accepted connection came through; looked up in the current
/// snapshot by address, so a reload that changes its `allow` or `proxy_auth` applies at once.
final class ListenerRuntime {
    let address: ListenAddress
    let index: Int

    init(address: ListenAddress, index: Int) {
        self.address = address
        self.index = index
    }

    func config(in configuration: Configuration) -> ListenerConfig {
        if let match = configuration.listeners.first(where: { $0.address == address }) { return match }
        return configuration.listeners[min(index, configuration.listeners.count - 1)]
    }
}

