import CountersignSupport
import Synchronization

/// A monotonically increasing count, safe to bump from any worker.
public final class Counter: Sendable {
    public let name: String
    public let help: String
    public let labels: String
    private let value = Atomic<Int>(0)

    public init(_ name: String, help: String, labels: String = "") {
        self.name = name
        self.help = help
        self.labels = labels
    }

    public func add(_ amount: Int = 1) { value.add(amount, ordering: .relaxed) }
    public var current: Int { value.load(ordering: .relaxed) }
}

/// A value that goes up and down (open connections).
public final class Gauge: Sendable {
    public let name: String
    public let help: String
    private let value = Atomic<Int>(0)

    public init(_ name: String, help: String) {
        self.name = name
        self.help = help
    }

    public func add(_ amount: Int) { value.add(amount, ordering: .relaxed) }
    public func set(_ amount: Int) { value.store(amount, ordering: .relaxed) }
    public var current: Int { value.load(ordering: .relaxed) }
}

/// Every metric Countersign exports, with fixed label sets so the hot path is one atomic add.
public final class Metrics: Sendable {
    public static let shared = Metrics()

    public let connectionsOpen = Gauge("countersign_client_connections", help: "Client connections currently open.")
    public let connectionsAccepted = Counter("countersign_client_connections_total", help: "Client connections accepted.")
    public let connectionsRefused = Counter("countersign_client_connections_refused_total", help: "Client connections refused (allow list or max_connections).")
    public let tunnelsOpen = Gauge("countersign_tunnels", help: "CONNECT tunnels currently open.")
    public let h2ConnectionsOpen = Gauge("countersign_client_h2_connections", help: "Intercepted client connections speaking HTTP/2 now.")
    public let h2StreamsOpen = Gauge("countersign_client_h2_streams", help: "HTTP/2 streams from clients in progress now.")
    /// Exchanges finished (access records), by the client's protocol version.
    public let exchangesHTTP11 = Counter("countersign_exchanges_total", help: "Exchanges finished, by the client's HTTP version.", labels: "protocol=\"HTTP/1.1\"")
    public let exchangesHTTP2 = Counter("countersign_exchanges_total", help: "Exchanges finished, by the client's HTTP version.", labels: "protocol=\"HTTP/2.0\"")
    public let heldBodyBytes = Gauge("countersign_held_body_bytes", help: "Bytes of request bodies held whole for signing now (bounded by held_bodies_bytes).")
    public let upstreamConnects = Counter("countersign_upstream_connects_total", help: "New upstream connections attempted.")
    public let upstreamReuses = Counter("countersign_upstream_reuses_total", help: "Requests sent on a pooled upstream connection.")
    public let upstreamHandshakes = Counter("countersign_upstream_tls_handshakes_total", help: "Upstream TLS handshakes completed (full and resumed).")
    public let upstreamResumptions = Counter("countersign_upstream_tls_resumptions_total", help: "Upstream TLS handshakes that resumed a cached session.")
    public let bytesFromClients = Counter("countersign_client_bytes_received_total", help: "Body bytes (forwarded and intercepted exchanges) and tunnel bytes received from clients.")
    public let bytesToClients = Counter("countersign_client_bytes_sent_total", help: "Body bytes (forwarded and intercepted exchanges) and tunnel bytes sent to clients.")
    private let responsesByClass: [Counter] = (1...5).map {
        Counter("countersign_responses_total", help: "Responses sent to clients, by status class.", labels: "class=\"\($0)xx\"")
    }
    private let errorsByType = Mutex<[String: Int]>([:])
    /// Configuration reloads by what asked for them and how they went.
    private let reloads: [Counter] = ["signal", "watch"].flatMap { trigger in
        ["ok", "failed"].map {
            Counter("countersign_reloads_total", help: "Configuration reloads, by trigger (signal: SIGHUP, watch: a watched file changed) and result.",
                    labels: "trigger=\"\(trigger)\",result=\"\($0)\"")
        }
    }

    /// Requests signed on their way upstream (`hosts.*.sign`), by signature format.
    private static let signatureFormats = ["rfc9421", "aws-sigv4"]
    private let signatures: [Counter] = Metrics.signatureFormats.map {
        Counter("countersign_signatures_total", help: "Requests signed on their way upstream, by format (one per attempt: a replay is signed anew).",
                labels: "format=\"\($0)\"")
    }
    /// Credential fetches from token endpoints, by endpoint kind and result.
    private let credentialFetches: [Counter] = ["oauth2", "sts"].flatMap { endpoint in
        ["ok", "failed"].map {
            Counter("countersign_credential_fetches_total", help: "Calls to token endpoints (oauth2: OAuth2 token endpoints, sts: AWS STS web identity), by result.",
                    labels: "endpoint=\"\(endpoint)\",result=\"\($0)\"")
        }
    }

    public init() {}

    /// `format` is a `sign.format`: "rfc9421" or "aws-sigv4".
    /// Counted per signed request: the format is found by comparing the short names, no label
    /// string is built.
    public func countSignature(format: String) {
        guard let index = Self.signatureFormats.firstIndex(of: format) else { return }
        signatures[index].add()
    }

    /// `endpoint` is "oauth2" or "sts".
    public func countCredentialFetch(endpoint: String, ok: Bool) {
        let labels = "endpoint=\"\(endpoint)\",result=\"\(ok ? "ok" : "failed")\""
        credentialFetches.first { $0.labels == labels }?.add()
    }

    public func countResponse(status: Int) {
        let index = status / 100 - 1
        // The counters are this object's for its (the process's) life: none is retained around its add.
        if index >= 0 && index < responsesByClass.count { withHeld(responsesByClass[index]) { $0.add() } }
    }

    /// `trigger` is "signal" or "watch".
    public func countReload(trigger: String, ok: Bool) {
        let labels = "trigger=\"\(trigger)\",result=\"\(ok ? "ok" : "failed")\""
        reloads.first { $0.labels == labels }?.add()
    }

    public func countError(type: String) {
        errorsByType.withLock { $0[type, default: 0] += 1 }
    }

    /// Extra gauges computed at scrape time (certificate expiry and the like).
    public typealias Sample = (name: String, help: String, labels: String, value: Double)

    /// The Prometheus text exposition format (version 0.0.4).
    public func prometheusText(extra: [Sample] = []) -> String {
        var out = ""
        var described = Set<String>()
        func header(_ name: String, _ help: String, _ type: String) {
            guard described.insert(name).inserted else { return }
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        for gauge in [connectionsOpen, tunnelsOpen, h2ConnectionsOpen, h2StreamsOpen, heldBodyBytes] {
            header(gauge.name, gauge.help, "gauge")
            out += "\(gauge.name) \(gauge.current)\n"
        }
        for counter in [connectionsAccepted, connectionsRefused, upstreamConnects, upstreamReuses, upstreamHandshakes, upstreamResumptions,
                        bytesFromClients, bytesToClients, exchangesHTTP11, exchangesHTTP2] + responsesByClass + reloads + signatures + credentialFetches {
            header(counter.name, counter.help, "counter")
            out += counter.labels.isEmpty ? "\(counter.name) \(counter.current)\n" : "\(counter.name){\(counter.labels)} \(counter.current)\n"
        }
        header("countersign_proxy_errors_total", "Responses the proxy made itself, by RFC 9209 error type.", "counter")
        for (type, count) in errorsByType.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
            out += "countersign_proxy_errors_total{type=\"\(type)\"} \(count)\n"
        }
        for sample in extra {
            // Prometheus: a `_total` is a counter (host_requests_total…), the rest gauges.
            header(sample.name, sample.help, sample.name.hasSuffix("_total") ? "counter" : "gauge")
            out += sample.labels.isEmpty ? "\(sample.name) \(sample.value)\n" : "\(sample.name){\(sample.labels)} \(sample.value)\n"
        }
        return out
    }
}
