import CLibevent
import COpenSSL
import CountersignHTTP
import CountersignTrust

/// How a failed step of connecting upstream is worded for the client: from the resolver's
/// error, errno, OpenSSL's queue and the trust policy's refusal, which only the stream has.
extension UpstreamConnection {
    /// What a client is told when `open` returned nil.
    static func cannotOpen(_ target: String) -> ProxyError {
        if DescriptorBudget.shared.available == 0 {
            return ProxyError(.connectionLimitReached,
                              details: "no descriptor left for a connection to \(target) (RLIMIT_NOFILE budget spent)")
        }
        return ProxyError(.proxyInternalError, details: "could not start a connection to \(target)")
    }

    /// This upstream's row in the bounded per-host table behind /status and /metrics.
    var observationRow: String {
        workerContext.map { Observations.row(host: key.host, port: Int(key.port), in: $0.config.hosts) } ?? Observations.otherRow
    }

    var upstreamLabel: String { "\(Authority(host: key.host, port: key.port))" }

    func trustRefused(_ refusal: TrustRefusal, peer: UpstreamDial.TLSPeer) -> ProxyError {
        let (name, upstream): (String, String)
        switch peer {
        case .origin: (name, upstream) = (key.host, upstreamLabel)
        case .parent: (name, upstream) = (parentHop?.name ?? "parent proxy", parentHop?.name ?? "parent proxy")
        }
        Observations.shared.trustRefused(row: observationRow, upstream: upstream, details: refusal.details)
        return ProxyError(.tlsCertificateError, details: "\(name): \(refusal.details)")
    }

    func handshakeFailure(_ event: StreamEvent, peer: UpstreamDial.TLSPeer) -> ProxyError {
        let codes = stream.takeOpenSSLErrors()
        let context = peer == .parent ? parentHop?.tls : tls
        // The policy refused the server inside the handshake (it got an alert): say why.
        if let context, let ssl = stream.ssl, let refusal = context.refusal(ssl: ssl) {
            return trustRefused(refusal, peer: peer)
        }
        let sentence = context?.handshakeFailure(errorCodes: codes) ?? "the TLS handshake failed"
        switch peer {
        case .parent:
            let name = parentHop?.name ?? "parent proxy"
            if event.timeout { return ProxyError(.connectionTimeout, details: "TLS handshake with the \(name) timed out") }
            return ProxyError(.tlsProtocolError, details: "\(name): \(sentence)")
        case .origin:
            if event.timeout { return ProxyError(.connectionTimeout, details: "TLS handshake with \(key.host) port \(key.port) timed out") }
            return ProxyError(.tlsProtocolError, details: "\(key.host): \(sentence)")
        }
    }

    /// Turns a failed connect into the error a client sees.
    func connectFailure(event: StreamEvent, savedErrno: Int32) -> ProxyError {
        if let reason = stream.resolverFailure {
            return ProxyError(.dnsError, details: "cannot resolve \(key.host): \(reason)")
        }
        if event.timeout {
            return ProxyError(.connectionTimeout, details: "connecting to \(key.host) port \(key.port) timed out")
        }
        switch savedErrno {
        case ECONNREFUSED:
            return ProxyError(.connectionRefused, details: "\(key.host) port \(key.port) refused the connection")
        case ENETUNREACH, EHOSTUNREACH:
            return ProxyError(.destinationIPUnroutable, details: "no route to \(key.host) port \(key.port)")
        default:
            let reason = savedErrno == 0 ? "connection failed" : String(cString: strerror(savedErrno))
            return ProxyError(.destinationUnavailable, details: "cannot connect to \(key.host) port \(key.port): \(reason)")
        }
    }
}
