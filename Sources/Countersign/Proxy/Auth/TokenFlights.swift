import CountersignAuth
import Synchronization

/// One OAuth2 token fetch per credential at a time for the whole process: every exchange on
/// every worker that needs a token while one is being fetched waits for that fetch (single
/// flight), and one that asks after a newer token than the one it saw has arrived takes that
/// token instead of fetching again. So a token is fetched once, refreshed ahead of expiry once,
/// and fetched anew once after a rejection, however many requests (or workers) saw it rejected.
final class TokenFlights: @unchecked Sendable {
    typealias Completion = (Result<OAuth2Token, ProxyError>) -> Void

    /// An exchange waiting for the fetch, and the loop it must be called back on.
    private struct Waiter {
        let inbox: WorkerInbox
        let completion: Completion
    }

    /// The waiters of each credential's fetch in flight; no entry: none in flight.
    private let inFlight = Mutex<[String: [Waiter]]>([:])

    /// A token for `credential` to the caller, on its own loop (never re-entering it): a newer
    /// one than the caller saw at token generation `seen`, else the result of the fetch in
    /// flight, else of a fetch started now on the caller's worker.
    func token(for credential: String, client: OAuth2Client, seen: Int, context: WorkerContext, snapshot: ConfigSnapshot,
               completion: @escaping Completion) {
        let runtime = snapshot.auth
        let waiter = Waiter(inbox: context.inbox, completion: completion)
        enum Step { case deliver(OAuth2Token), join, start }
        // Decided under the flight lock: a fetch ends by storing its token before it leaves the
        // table, so a caller either joins it or finds its token.
        let step: Step = inFlight.withLock { flights in
            if flights[credential] != nil {
                flights[credential]!.append(waiter)
                return .join
            }
            if let newer = runtime.usableToken(for: credential, newerThan: seen) { return .deliver(newer) }
            flights[credential] = [waiter]
            return .start
        }
        switch step {
        case .deliver(let token):
            context.inbox.post { completion(.success(token)) }
        case .join:
            break
        case .start:
            TokenFetcher.fetch(client: client, credential: credential, context: context, snapshot: snapshot) { [self] result in
                if case .success(let token) = result { runtime.storeToken(token, for: credential) }
                let waiters = inFlight.withLock { $0.removeValue(forKey: credential) } ?? []
                for waiter in waiters { waiter.inbox.post { waiter.completion(result) } }
            }
        }
    }
}
