import CountersignAdmin
import CountersignConfig
import CountersignSigning
import CountersignSupport
import Foundation
import Synchronization

/// A web identity as one configuration has it: the role, the STS endpoint and the token read
/// from its file when the configuration was loaded (the file is watched, so a rotated token
/// makes a new configuration, a new `key`, and new keys fetched with it).
struct WebIdentityRole: Sendable {
    let credential: String
    let identity: AWSWebIdentityConfig
    let token: Secret
    /// Names these keys in the process-wide store: the token's hash, never the token.
    let key: String

    init(credential: String, _ identity: AWSWebIdentityConfig) throws {
        guard var bytes = FileManager.default.contents(atPath: identity.tokenFile).map(Array.init) else {
            throw AWSSigningError.invalidRequest("cannot read the web identity token file \(identity.tokenFile)")
        }
        while let last = bytes.last, last == 0x0A || last == 0x0D || last == 0x20 { bytes.removeLast() }
        guard !bytes.isEmpty else { throw AWSSigningError.invalidRequest("the web identity token file \(identity.tokenFile) is empty") }
        self.credential = credential
        self.identity = identity
        self.token = Secret(bytes: bytes, source: "file \(identity.tokenFile)")
        key = [credential, identity.roleARN, identity.stsEndpoint.description, identity.sessionName,
               Hex.encode(SHA256.hash(bytes))].joined(separator: "\n")
    }

    var endpointName: String { "STS endpoint \(identity.stsEndpoint) (AssumeRoleWithWebIdentity for \(identity.roleARN))" }
}

/// The temporary keys of every web identity, for the whole process: fetched once however many
/// requests on however many workers need them (one flight per role; the others wait for it),
/// fetched again ahead of expiry (the last fifth of their life, at most five minutes) and when
/// the token changes. Keys still valid are used if a refresh fails.
final class AWSTemporaryKeys: @unchecked Sendable {
    static let shared = AWSTemporaryKeys()

    private struct Stored {
        let keys: AWSWebIdentityExchange.Keys
        let refreshAt: Int64
    }

    private struct Waiter {
        let inbox: WorkerInbox
        let completion: (ProxyError?) -> Void
    }

    private struct State {
        var stored: [String: Stored] = [:]
        var inFlight: [String: [Waiter]] = [:]
    }

    private let state = Mutex(State())

    private static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    /// The keys to sign with: fetched and not expired.
    func current(for role: WebIdentityRole) -> Result<AWSCredentials, ProxyError> {
        let now = Self.now()
        guard let stored = state.withLock({ $0.stored[role.key] }), stored.keys.expiration > now else {
            return .failure(ProxyError(.destinationUnavailable, details: "\(role.endpointName): no temporary keys"))
        }
        return .success(stored.keys.credentials)
    }

    /// Whether a request must wait for a fetch first: no keys yet, or due for refresh.
    func needsFetch(_ role: WebIdentityRole) -> Bool {
        let now = Self.now()
        return state.withLock { $0.stored[role.key].map { $0.refreshAt <= now } ?? true }
    }

    /// Calls `completion` on the caller's loop once keys are there (nil) or cannot be had.
    func fetch(_ role: WebIdentityRole, context: WorkerContext, snapshot: ConfigSnapshot, completion: @escaping (ProxyError?) -> Void) {
        let waiter = Waiter(inbox: context.inbox, completion: completion)
        enum Step { case join, fresh, start }
        let step: Step = state.withLock { state in
            if state.inFlight[role.key] != nil {
                state.inFlight[role.key]!.append(waiter)
                return .join
            }
            // Another flight may have just stored fresh keys.
            if let stored = state.stored[role.key], stored.refreshAt > Self.now() { return .fresh }
            state.inFlight[role.key] = [waiter]
            return .start
        }
        switch step {
        case .join: return
        case .fresh: return context.inbox.post { completion(nil) }
        case .start: break
        }
        let body = AWSWebIdentityExchange.requestBody(roleARN: role.identity.roleARN, sessionName: role.identity.sessionName,
                                                      token: role.token.bytes, durationSeconds: role.identity.durationSeconds)
        let post = EndpointPost(name: role.endpointName, url: role.identity.stsEndpoint.description,
                                headerFields: AWSWebIdentityExchange.headerFields(bodyLength: body.count), body: body)
        TokenFetcher<AWSWebIdentityExchange.Keys>.fetch(post, key: "aws:" + role.key, context: context, snapshot: snapshot,
                                                       parse: AWSWebIdentityExchange.parse) { [self] result in
            let now = Self.now()
            Metrics.shared.countCredentialFetch(endpoint: "sts", ok: (try? result.get()) != nil)
            let outcome: ProxyError?
            switch result {
            case .success(let keys):
                let lifetime = max(0, keys.expiration - now)
                let stored = Stored(keys: keys, refreshAt: keys.expiration - min(300, lifetime / 5))
                state.withLock { state in
                    // Keys of an earlier token of this credential go: one entry per credential.
                    state.stored = state.stored.filter { !$0.key.hasPrefix(role.credential + "\n") }
                    state.stored[role.key] = stored
                }
                outcome = nil
            case .failure(let error):
                // Keys still valid carry on until they expire; the next request tries again.
                let stillValid = state.withLock { $0.stored[role.key].map { $0.keys.expiration > now } ?? false }
                outcome = stillValid ? nil : error
            }
            let waiters = state.withLock { $0.inFlight.removeValue(forKey: role.key) } ?? []
            for waiter in waiters { waiter.inbox.post { waiter.completion(outcome) } }
        }
    }
}
