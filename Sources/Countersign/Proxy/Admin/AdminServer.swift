import CLibevent
import CountersignAdmin
import CountersignConfig
import CountersignHTTP

/// The admin listener: `/healthz`, `/readyz`, `/metrics`, `/status`. It runs on the main
/// thread's loop, away from the workers, so it answers even when they are busy. Only
/// clients in `admin.allow` are served, at most `maxConnections` at once; at the cap the
/// oldest connection waiting for a request gives way to the newcomer, and every request head
/// must arrive within `limits.header_timeout`, so clients trickling bytes (or holding idle
/// connections) cannot keep a health check out.
final class AdminServer: AcceptHandler {
    let base: OpaquePointer
    private var listener: Listener?
    private var connections: [ObjectIdentifier: AdminConnection] = [:]
    let pages: AdminPages
    /// `admin.allow` of the current configuration (a reload may change it).
    private let allow: () -> [CIDR]
    /// `limits.header_timeout` of the current configuration.
    let headTimeout: () -> Double
    /// Counts accepted connections: the lowest number waiting is the oldest.
    private var accepts = 0
    /// Monitoring needs a handful; more would let one client hold the main loop's memory.
    static let maxConnections = 64

    /// `socket`: the admin address, bound by the caller (see `ListeningSocket`).
    init(base: OpaquePointer, socket: ListeningSocket, pages: AdminPages,
         allow: @escaping () -> [CIDR] = { CIDR.loopback }, headTimeout: @escaping () -> Double = { 15 }) throws {
        self.base = base
        self.pages = pages
        self.allow = allow
        self.headTimeout = headTimeout
        listener = try Listener(base: base, socket: socket, handler: self)
    }

    var port: UInt16 { listener?.port ?? 0 }

    func accepted(fd: Int32, address: UnsafePointer<sockaddr>?, from listener: Listener) {
        if connections.count >= Self.maxConnections {
            // The oldest connection with no request to answer (a head still coming, or idle
            // between requests) gives way; when every one is being answered the newcomer is
            // closed unread: answering would cost what the cap saves.
            guard let oldest = connections.values.filter(\.isWaitingForRequest).min(by: { $0.number < $1.number }) else {
                Listener.discard(fd)
                return
            }
            oldest.close()
        }
        guard let stream = Stream.socket(base: base, fd: fd) else { return }
        let peer = PeerAddress(address)
        accepts += 1
        let connection = AdminConnection(stream: stream, server: self, number: accepts)
        connections[ObjectIdentifier(connection)] = connection
        if peer.isAllowed(by: allow()) {
            connection.start()
        } else {
            connection.refuse("client \(peer.ip.map { "\($0)" } ?? "unknown") is not in admin.allow")
        }
    }

    func closed(_ connection: AdminConnection) {
        connections.removeValue(forKey: ObjectIdentifier(connection))
    }

    func close() {
        listener?.close()
        listener = nil
        for connection in Array(connections.values) { connection.close() }
    }
}

/// What the admin endpoints show; the server owns the state behind it.
protocol AdminPages: AnyObject {
    var isDraining: Bool { get }
    func metricsText() -> String
    /// The facts behind `/status` and `/status.json`.
    func statusReport() -> StatusReport
}

final class AdminConnection: StreamDelegate {
    private let stream: Stream
    private unowned let server: AdminServer
    /// Its place in the order of accepts.
    let number: Int
    /// Reading requests; not reading while too much output waits for the client; or closing
    /// once the last answer is written.
    private enum Phase { case reading, pausedForOutput, closing }
    private var phase = Phase.reading
    /// From the start of each request head (a new connection: from its start).
    private lazy var headDeadline = Deadline(base: server.base) { [unowned self] in self.headTimedOut() }
    /// Pipelined requests are answered only while this much output waits for the client;
    /// reading resumes once it drained below `resumeOutput` (so a client that sends without
    /// reading holds at most about this plus one page and the input watermark).
    private static let maxPendingOutput = 65536
    private static let resumeOutput = 16384
    private static let maxHeadBytes = 16384

    init(stream: Stream, server: AdminServer, number: Int) {
        self.stream = stream
        self.server = server
        self.number = number
    }

    /// No request of its own being answered: a head still coming, or idle between requests.
    var isWaitingForRequest: Bool { phase != .closing && stream.unsentLength == 0 }

    func start() {
        stream.delegate = self
        stream.setTimeouts(read: 30, write: 30)
        stream.setWatermarks(readHigh: 2 * Self.maxHeadBytes, writeBudget: 4 * Self.resumeOutput)
        headDeadline.begin(seconds: server.headTimeout())
        stream.enableReadWrite()
    }

    private func headTimedOut() {
        guard phase != .closing else { return }
        respond(status: 408, type: "text/plain; charset=utf-8", body: "request head not received within \(Seconds.text(server.headTimeout()))\n", close: true)
    }

    /// A client outside `admin.allow`: one 403, then the connection closes.
    func refuse(_ details: String) {
        stream.delegate = self
        stream.setTimeouts(read: 5, write: 5)
        let error = ProxyError.denied(details)
        stream.write(error.response(close: true))
        phase = .closing
        stream.disableRead()
        stream.flush()
        if stream.outputLength == 0 { close() }
    }

    func streamReadable(_ stream: Stream) {
        var pages = PagesOfOneRead(server.pages)
        while phase != .closing {
            if stream.unsentLength >= Self.maxPendingOutput {
                phase = .pausedForOutput
                stream.disableRead()
                return
            }
            let available = stream.inputLength
            guard available > 0, let input = stream.input, let bytes = input.pullUp(min(available, Self.maxHeadBytes)) else { return }
            switch HeadParser.parseRequest(bytes, maxHeadBytes: Self.maxHeadBytes) {
            case .incomplete:
                headDeadline.begin(seconds: server.headTimeout())
                return
            case .invalid(let error):
                respond(status: error.status, type: "text/plain; charset=utf-8", body: error.detail + "\n", close: true)
            case .complete(let head, let consumed):
                input.drain(consumed)
                headDeadline.end()
                handle(head, pages: &pages)
            }
        }
    }

    /// `pages`: what the read this request came in has rendered so far.
    private func handle(_ head: RequestHead, pages: inout PagesOfOneRead) {
        let close = !head.wantsKeepAlive
        guard head.method == "GET" || head.method == "HEAD" else {
            respond(status: 405, type: "text/plain; charset=utf-8", body: "only GET and HEAD\n", close: close, head: head)
            return
        }
        let path = head.target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.target
        switch path {
        case "/healthz":
            respond(status: 200, type: "text/plain; charset=utf-8", body: "ok\n", close: close, head: head)
        case "/readyz":
            let draining = server.pages.isDraining
            respond(status: draining ? 503 : 200, type: "text/plain; charset=utf-8", body: draining ? "draining\n" : "ready\n", close: close, head: head)
        case "/metrics":
            respond(status: 200, type: "text/plain; version=0.0.4; charset=utf-8", body: pages.metrics(), close: close, head: head)
        case "/status", "/":
            let query = head.target.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init)
            respond(status: 200, type: "text/html; charset=utf-8", body: pages.statusHTML(refresh: StatusPage.refreshSeconds(query: query)),
                    close: close, head: head)
        case "/status.json":
            respond(status: 200, type: "application/json", body: pages.statusJSON(), close: close, head: head)
        default:
            respond(status: 404, type: "text/plain; charset=utf-8", body: "not found; try /healthz /readyz /metrics /status /status.json\n", close: close, head: head)
        }
    }

    private func respond(status: Int, type: String, body: String, close: Bool, head: RequestHead? = nil) {
        var headers = HeaderFields()
        headers.append("Content-Type", type)
        headers.append("Content-Length", String(body.utf8.count))
        headers.append("Cache-Control", "no-store")
        if close { headers.append("Connection", "close") }
        stream.write(HeadSerializer.response(ResponseHead(status: status, reason: ReasonPhrase.for(status), headers: headers)))
        if head?.method != "HEAD" { stream.write(body) }
        if close {
            phase = .closing
            stream.disableRead()
            if stream.outputLength == 0 { self.close() }
        }
    }

    func streamWritable(_ stream: Stream) {
        if phase == .closing && stream.outputLength == 0 {
            close()
        } else if phase == .pausedForOutput && stream.unsentLength <= Self.resumeOutput {
            phase = .reading
            stream.enableRead()
            streamReadable(stream)
        }
    }

    func stream(_ stream: Stream, event: StreamEvent) { close() }

    func close() {
        headDeadline.end()
        stream.close()
        server.closed(self)
    }
}
