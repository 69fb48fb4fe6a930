import COpenSSL
import CountersignSupport

/// OpenSSL builds one path and does not backtrack: when the issuer it picked among the served
/// intermediates leads nowhere (no anchor, or a name constraint that refuses), it fails even
/// though another served intermediate for the same issuer name would verify (x509-limbo's
/// nc-forbids-alternate-chain-ica and nc-forbids-same-chain-ica; cross-signed CAs in the wild).
/// These are the other paths to try: every chain from the leaf through the served
/// certificates, each one issued by the next, as far as it goes. Each is then verified by
/// OpenSSL on its own, so nothing is accepted that OpenSSL did not verify.
enum AlternatePaths {
    /// At most this many alternatives, each at most `maximumLength` certificates long: a
    /// server that sends a maze of cross-signatures gets a bounded amount of work.
    static let maximumPaths = 16
    static let maximumLength = 8

    /// Candidate served chains (leaf first), not including the served order itself.
    static func candidates(_ served: [Certificate]) -> [[Certificate]] {
        guard let leaf = served.first else { return [] }
        var found: [[Certificate]] = []
        var stack: [[Int]] = [[0]]
        while let path = stack.popLast(), found.count < maximumPaths {
            let last = served[path[path.count - 1]]
            let issuers = path.count >= maximumLength ? [] : served.indices.filter { index in
                !path.contains(index) && X509_check_issued(served[index].x509, last.x509) == X509_V_OK
            }
            if issuers.isEmpty {
                if path.count > 1 || served.count == 1 { found.append(path.map { served[$0] }) }
                continue
            }
            // Reversed so that the first issuer is explored first.
            stack += issuers.reversed().map { path + [$0] }
        }
        OpenSSLErrorQueue.clear()
        return found.filter { $0.map(\.der) != served.map(\.der) && $0.first === leaf }
    }
}
