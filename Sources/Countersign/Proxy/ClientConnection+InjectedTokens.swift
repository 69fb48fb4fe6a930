import CountersignAuth
import CountersignHTTP
import CountersignSigning

/// A request whose `inject` or placeholder names an OAuth2 credential waits in `.awaitingCredentials`
/// for that credential's access token: the cached one when it is good for a while yet, else the
/// one fetch in flight for the whole process (`TokenFlights`, shared with Bearer answers). The
/// request is then forwarded again from the top with the token in hand, so placeholders, inject,
/// holding and signing all see it exactly as they would a configured secret.
extension ClientConnection {
    /// What a request waited for before it was forwarded (each wait happens at most once).
    struct FetchedCredentials {
        /// OAuth2 access tokens, by credential name.
        var tokens: [String: [UInt8]] = [:]
        /// Web identity keys were fetched (or found failing while old keys still serve).
        var awsKeys = false

        func with(tokens: [String: [UInt8]]) -> FetchedCredentials {
            var next = self
            next.tokens = tokens
            return next
        }

        func withAWSKeys() -> FetchedCredentials {
            var next = self
            next.awsKeys = true
            return next
        }
    }

    /// The tokens fetched so far for one request, and what to do once they are complete.
    struct TokenWait {
        let credential: String
        var tokens: [String: [UInt8]]
        let snapshot: ConfigSnapshot
        var record: AccessRecord
        let framing: BodyFraming
        let resume: ([String: [UInt8]]) -> Void
    }

    func awaitToken(_ wait: TokenWait) {
        let auth = wait.snapshot.auth
        guard let client = auth.oauth2Client(for: wait.credential) else {
            // The decoder lets only OAuth2 credentials stand for a token.
            return fail(with: ProxyError(.proxyInternalError, details: "credential \(wait.credential) has no OAuth2 client"), record: wait.record, close: true)
        }
        // Generation 0: any stored token that is still good (none stored yet is at 0).
        if let cached = auth.usableToken(for: wait.credential, newerThan: 0) {
            return tokenArrived(.success(cached), for: wait)
        }
        state = .awaitingCredentials
        auth.tokenFlights.token(for: wait.credential, client: client, seen: 0, context: context, snapshot: wait.snapshot) { [weak self] result in
            // A client that went while the token was fetched has nothing to resume.
            guard let self, self.state == .awaitingCredentials else { return }
            self.state = .readingHead
            self.tokenArrived(result, for: wait)
        }
    }

    private func tokenArrived(_ result: Result<OAuth2Token, ProxyError>, for wait: TokenWait) {
        var wait = wait
        switch result {
        case .success(let token):
            do {
                wait.tokens[wait.credential] = try token.injectableValue()
            } catch {
                let endpoint = wait.snapshot.auth.oauth2Client(for: wait.credential)?.tokenURL ?? "?"
                return fail(with: ProxyError(.destinationUnavailable,
                                             details: "OAuth2 token endpoint \(endpoint) gave credential \(wait.credential) an access token that cannot be injected: \(error)"),
                            record: wait.record, close: wait.framing != .none)
            }
            wait.resume(wait.tokens)
        case .failure(let error):
            fail(with: error, record: wait.record, close: wait.framing != .none)
        }
    }
}
