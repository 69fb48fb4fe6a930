import CLibevent
import CountersignAdmin
import CountersignHTTP

/// Relays bytes between two bufferevents, for tunnels where a side speaks TLS through
/// Countersign (a WebSocket inside an intercepted tunnel or over upstream TLS), so the
/// sockets cannot be handed to a `SocketRelay`. Each side stops being read while the other
/// side's unsent bytes (TLS layers included) are at the budget.
final class StreamRelay: StreamDelegate {
    private let client: Stream
    private let upstream: Stream
    private let budget: Int
    private let idleTimeout: Double
    private let halfCloseTimeout: Double
    private var lastActivity = MonotonicClock.now()
    private enum Phase {
        case relaying
        /// One side ended: what it sent goes on to the other, which then closes.
        case deliveringLast
        case finished
    }
    private var phase = Phase.relaying
    private(set) var bytesFromClient: UInt64 = 0
    private(set) var bytesFromUpstream: UInt64 = 0
    var onFinish: ((_ reason: String?) -> Void)?

    init(client: Stream, upstream: Stream, budget: Int, idleTimeout: Double, halfCloseTimeout: Double) {
        self.client = client
        self.upstream = upstream
        self.budget = budget
        self.idleTimeout = idleTimeout
        self.halfCloseTimeout = halfCloseTimeout
    }

    func start() {
        for stream in [client, upstream] {
            stream.delegate = self
            stream.setWatermarks(readHigh: budget, writeBudget: budget)
            stream.setTimeouts(read: idleTimeout, write: idleTimeout)
            stream.enableReadWrite()
        }
        relay(from: client, to: upstream)
        relay(from: upstream, to: client)
    }

    private func peer(of stream: Stream) -> Stream { stream === client ? upstream : client }

    private func relay(from source: Stream, to destination: Stream) {
        guard let input = source.input, destination.isOpen else { return }
        let count = min(input.count, destination.writeRoom)
        guard count > 0, let output = destination.output else { return }
        input.move(count, to: output)
        lastActivity = MonotonicClock.now()
        if source === client {
            bytesFromClient += UInt64(count)
            Metrics.shared.bytesFromClients.add(count)
        } else {
            bytesFromUpstream += UInt64(count)
            Metrics.shared.bytesToClients.add(count)
        }
    }

    func streamReadable(_ stream: Stream) {
        relay(from: stream, to: peer(of: stream))
    }

    func streamWritable(_ stream: Stream) {
        guard phase == .relaying else { return }
        relay(from: peer(of: stream), to: stream)
    }

    func stream(_ stream: Stream, event: StreamEvent) {
        if event.connected { return }
        if event.timeout {
            // Silence on one side is not idleness while the other side still moves bytes.
            if MonotonicClock.now() - lastActivity < idleTimeout {
                stream.enableRead()
            } else {
                finish("tunnel_idle_timeout")
            }
            return
        }
        // One side broke: nothing more can be delivered, close both now.
        if event.error {
            finish(ProxyErrorType.connectionTerminated.name)
            return
        }
        // One side ended: deliver what it sent (within the half-close timeout), then close both.
        let other = peer(of: stream)
        if let input = stream.input, !input.isEmpty, let output = other.output { input.moveAll(to: output) }
        if phase == .relaying { phase = .deliveringLast }
        stream.close()
        other.closeWhenFlushed(limit: halfCloseTimeout) { [weak self] in self?.finish(nil) }
    }

    func finish(_ reason: String?) {
        guard phase != .finished else { return }
        phase = .finished
        client.close()
        upstream.close()
        let callback = onFinish
        onFinish = nil
        callback?(reason)
    }
}
