import CountersignAuth
import CountersignConfig
import CountersignInterception
import CountersignLog
import Foundation
import Synchronization

/// Everything challenge answering needs for one configuration snapshot: the credential
/// material, one answerer per host entry, the learned protection spaces (shared by all
/// workers), and cached OAuth2 tokens; what `permanent` rules learn is mirrored to `state_dir`.
final class AuthRuntime: @unchecked Sendable {
    let store: ProtectionSpaceStore
    private let answerers: [String: ChallengeAnswerer]
    let parentAnswerer: ChallengeAnswerer?
    private let materials: [String: CredentialMaterial]
    /// Whether any credential is OAuth2: without one there are never tokens to fill in.
    private let hasOAuth2Credentials: Bool
    /// The credentials with each OAuth2 token fetched so far filled in, rebuilt when a token
    /// arrives (its Bearer value prepared then): an exchange takes the whole dictionary, shared,
    /// instead of merging the tokens in per request. The generation says whether it changed.
    private let current: Mutex<(generation: Int, credentials: [String: CredentialMaterial], storedAt: [String: Int])>
    /// One token fetch per credential at a time, for every worker.
    let tokenFlights = TokenFlights()
    private let stateFile: String
    private let writeLock = Mutex(())
    /// Whether any rule is `permanent`: without one, nothing is ever written.
    private let keepsState: Bool
    /// OAuth2 credentials named by a `permanent` rule: their tokens outlive a restart.
    private let permanentTokenCredentials: Set<String>

    init(_ configuration: Configuration) {
        KerberosEnvironment.apply(configuration)
        let store = ProtectionSpaceStore()
        self.store = store
        stateFile = (configuration.stateDir as NSString).appendingPathComponent("auth-state.json")
        var materials: [String: CredentialMaterial] = [:]
        for (name, credential) in configuration.credentials {
            if let material = Self.material(credential, name: name) { materials[name] = material }
        }
        self.materials = materials
        current = Mutex((0, materials, [:]))
        hasOAuth2Credentials = materials.values.contains { $0.oauth2Client != nil }
        // Basic / Bearer values and Digest secrets, computed once for this snapshot.
        let prepared = PreparedCredentials(materials)
        var answerers: [String: ChallengeAnswerer] = [:]
        for host in configuration.hosts.entries where !host.auth.isEmpty {
            answerers[host.pattern] = ChallengeAnswerer(rules: host.auth.map(Self.rule), credentials: materials, store: store, prepared: prepared)
        }
        self.answerers = answerers
        if let parent = configuration.parentProxy, let auth = parent.auth {
            let rule = CountersignAuth.AuthRule(credentialName: auth.credential, schemes: auth.schemes.compactMap(Self.scheme),
                                                persistence: .session, maxFailures: auth.maxFailures, allowPlaintext: auth.allowPlaintext)
            parentAnswerer = ChallengeAnswerer(rules: [rule], credentials: materials, store: store, prepared: prepared)
        } else {
            parentAnswerer = nil
        }
        let permanentRules = configuration.hosts.entries.flatMap(\.auth).filter { $0.persistence == .permanent }
        keepsState = !permanentRules.isEmpty
        permanentTokenCredentials = Set(permanentRules.map(\.credential).filter { materials[$0]?.oauth2Client != nil })
        if keepsState { restoreSavedState() }
    }

    /// Takes back what `persist` wrote before a restart or reload: the spaces, and each
    /// token still usable and issued to the same registration as now configured.
    private func restoreSavedState() {
        guard let data = FileManager.default.contents(atPath: stateFile) else { return }
        do {
            let saved = try AuthStateFile.decode(data)
            store.restore(saved.spaces)
            let now = Date()
            let usable = saved.tokens.filter { token in
                guard permanentTokenCredentials.contains(token.credentialName),
                      let client = materials[token.credentialName]?.oauth2Client else { return false }
                return token.wasIssued(to: client) && token.token.isUsable(now: now)
            }
            for token in usable { storeToken(token.token, for: token.credentialName, persisting: false) }
        } catch {
            Logger.shared.warn("cannot read learned auth state; starting without it", [("file", .string(stateFile)), ("error", .string("\(error)"))])
        }
    }

    /// The client registration of an OAuth2 credential (nil for any other kind).
    func oauth2Client(for credential: String) -> OAuth2Client? { materials[credential]?.oauth2Client }

    /// The answerer for a host entry (resolved once into its `HostPlan`; its tokens filled in by `withCurrentTokens`).
    func answerer(for host: HostConfig?) -> ChallengeAnswerer? {
        guard let host else { return nil }
        return answerers[host.pattern]
    }

    /// Gives `answerer` the tokens fetched since `generation` (the one it has; updated): the
    /// shared credentials dictionary, not a copy.
    func withCurrentTokens(_ answerer: inout ChallengeAnswerer, generation: inout Int) {
        guard hasOAuth2Credentials else { return }
        let latest = current.withLock { ($0.generation, $0.credentials) }
        guard latest.0 != generation else { return }
        answerer.credentials = latest.1
        generation = latest.0
    }

    /// The credential's token when it arrived after token generation `seen` (the caller's view
    /// is out of date) and is good to send for a while yet; nil: the caller's view stands.
    func usableToken(for credential: String, newerThan seen: Int) -> OAuth2Token? {
        let now = Date()
        return current.withLock { current in
            guard let storedAt = current.storedAt[credential], storedAt > seen,
                  case .oauth2(_, let token?)? = current.credentials[credential],
                  token.isUsable(now: now), !token.needsRefresh(now: now) else { return nil }
            return token
        }
    }

    /// Drops the credential's token if it is one obtained by `moment` (the one a refused request
    /// carried, or older), so the next request fetches anew; a token fetched since is kept, so
    /// many refusals of one token cause one fetch, not one each.
    func retireToken(for credential: String, obtainedBy moment: Date) {
        guard let client = materials[credential]?.oauth2Client else { return }
        current.withLock { current in
            guard case .oauth2(_, let token?)? = current.credentials[credential], token.obtainedAt <= moment else { return }
            current.generation += 1
            current.credentials[credential] = .oauth2(client, token: nil)
            current.storedAt[credential] = current.generation
        }
    }

    func storeToken(_ token: OAuth2Token, for credential: String, persisting: Bool = true) {
        guard let client = materials[credential]?.oauth2Client else { return }
        current.withLock { current in
            current.generation += 1
            current.credentials[credential] = .oauth2(client, token: token)
            current.storedAt[credential] = current.generation
        }
        if persisting, permanentTokenCredentials.contains(credential) { persist() }
    }

    /// The one place an answerer's store effects are carried out: the store changed, a new
    /// lock-out reported, `state_dir` written.
    @discardableResult
    func apply(_ effects: [AuthStoreEffect]) -> AppliedAuthEffects {
        guard !effects.isEmpty else { return AppliedAuthEffects() }
        // Every answered request but the first: the credential accepted again, nothing else.
        // It locks nothing out and writes nothing, so the store is touched directly.
        if effects.count == 1, case .accepted(let space, let resource) = effects[0] {
            store.accept(space, on: resource)
            return AppliedAuthEffects()
        }
        let applied = store.apply(effects)
        for lockOut in applied.newlyLockedOut { reportLockOut(lockOut) }
        if applied.persist { persist() }
        return applied
    }

    /// Said once per space, when the store locks it out (the store is this snapshot's, so a
    /// reload starts afresh).
    private func reportLockOut(_ lockOut: LockOut) {
        let space = lockOut.space
        Logger.shared.warn("credential locked out of a protection space: not answered there again until the configuration is reloaded (SIGHUP) or the credential changes",
                           [("upstream", .string(space.target.description)), ("scheme", .string(space.scheme.rawValue)),
                            ("realm", .string(space.realm ?? "-")), ("credential", .string(lockOut.credentialName)),
                            ("reason", .string(lockOut.reason))])
    }

    /// Writes the `permanent` learned state (no password or client secret) with mode 0600: when a rule
    /// learns something, a permanent token arrives, and before a reload or stop (Digest
    /// counts move on with every preemptive answer).
    func persist() {
        guard keepsState else { return }
        writeLock.withLock { _ in writeState() }
    }

    private func writeState() {
        do {
            let savedTokens = current.withLock { $0.credentials }.compactMap { name, material -> SavedToken? in
                guard permanentTokenCredentials.contains(name), case .oauth2(let client, let token?) = material else { return nil }
                return SavedToken(credentialName: name, client: client, token: token)
            }
            let data = try AuthStateFile(spaces: store.permanentEntries(), tokens: savedTokens).encoded()
            // 0600 from the first byte, in a 0700 directory: a fresh O_EXCL name renamed over the old file.
            try SecureFile.write([UInt8](data), to: stateFile, mode: 0o600, replacing: true,
                                 directoryMode: 0o700, privateDirectory: true)
        } catch {
            Logger.shared.warn("cannot write learned auth state", [("file", .string(stateFile)), ("error", .string("\(error)"))])
        }
    }

    // MARK: - Mapping the configuration

    static func rule(_ rule: CountersignConfig.AuthRule) -> CountersignAuth.AuthRule {
        CountersignAuth.AuthRule(credentialName: rule.credential, schemes: rule.schemes.compactMap(scheme), realm: rule.realm,
                                 persistence: CountersignAuth.Persistence(rawValue: rule.persistence.rawValue) ?? .session,
                                 preemptive: rule.preemptive, maxFailures: rule.maxFailures, allowPlaintext: rule.allowPlaintext,
                                 spn: rule.spn)
    }

    /// An OAuth2 credential answers a Bearer challenge with its fetched token.
    static func scheme(_ scheme: AuthScheme) -> AuthSchemeName? {
        switch scheme {
        case .basic: return .basic
        case .digest: return .digest
        case .ntlm: return .ntlm
        case .negotiate: return .negotiate
        case .bearer: return .bearer
        }
    }

    /// `name` names a Kerberos credential's in-memory ticket cache, fresh for each snapshot.
    static func material(_ credential: CredentialConfig, name: String = "") -> CredentialMaterial? {
        switch credential {
        case .password(let user, let password, let workstation):
            return .password(user: user, password: password.string, workstation: workstation)
        case .ntHash(let user, let hash, let workstation):
            return .ntHash(user: user, hash: hash.bytes, workstation: workstation)
        case .token(let token):
            return .token(token.string)
        case .oauth2(let settings):
            let client = OAuth2Client(tokenURL: settings.tokenURL.description, clientID: settings.clientID,
                                      clientSecret: settings.clientSecret.string, scope: settings.scope,
                                      secretPlacement: settings.auth == .body ? .body : .basic)
            return .oauth2(client, token: nil)
        case .kerberos(let settings, let alongside):
            return .kerberos(kerberosCredential(settings, name: name), alongside: alongside.flatMap { material($0, name: name) })
        case .value, .signing, .verifying, .aws, .pemIdentity, .pkcs12Identity:
            return nil
        }
    }

    static func kerberosCredential(_ settings: KerberosConfig, name: String) -> KerberosCredential {
        let source: KerberosSource
        switch settings.source {
        case .keytab(let path): source = .keytab(path: path)
        case .password(let secret): source = .password(secret.string)
        case .ccache(let cache): source = .ccache(cache)
        }
        return KerberosCredential(principal: settings.principal, source: source, cacheName: "\(name)-\(UUID().uuidString)")
    }
}
