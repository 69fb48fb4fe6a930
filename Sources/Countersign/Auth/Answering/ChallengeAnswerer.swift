import FoundationEssentials

/// The per-exchange decision state machine, sans-I/O: given the host's auth rules, the
/// credentials and a 401/407 head, decide to answer, pass the response through, or fail.
///
/// Use per exchange: `preemptiveAnswer` before sending, `respond` on each 401/407, `complete`
/// with the response that goes to the client. State that outlives the exchange lives in `store`,
/// which the answerer only reads (and leases Digest sessions and counts from, which its answer
/// is built on): the changes it decides on come back as `AuthStoreEffect`s for the driver to apply.
public struct ChallengeAnswerer: Sendable {
    public var rules: [AuthRule] {
        get { parts.rules }
        set { uniqueParts().rules = newValue }
    }
    public var credentials: [String: CredentialMaterial] {
        get { parts.credentials }
        set { uniqueParts().credentials = newValue }
    }
    /// Answers computed once for this configuration snapshot (shared by its answerers).
    public var prepared: PreparedCredentials { parts.prepared }
    public var store: ProtectionSpaceStore { parts.store }
    public var digestResponder: DigestResponder {
        get { parts.digestResponder }
        set { uniqueParts().digestResponder = newValue }
    }
    public var ntlmEntropy: NTLMEntropy {
        get { parts.ntlmEntropy }
        set { uniqueParts().ntlmEntropy = newValue }
    }
    public var clock: @Sendable () -> Date {
        get { parts.clock }
        set { uniqueParts().clock = newValue }
    }

    /// Scheme order when a rule lists none: the strongest the credential can answer first.
    static let defaultSchemeOrder: [AuthSchemeName] = [.negotiate, .digest, .ntlm, .bearer, .basic]

    /// Whether a rule names an OAuth2 credential; without one no token is ever fetched.
    var fetchesTokens: Bool { parts.fetchesTokens }
    /// What each target's preemptive answer is chosen from, shared by this answerer's copies.
    var plans: PreemptivePlans { parts.plans }

    /// See `AnswererParts`: copies share it until one changes.
    private var parts: AnswererParts

    private mutating func uniqueParts() -> AnswererParts {
        if !isKnownUniquelyReferenced(&parts) { parts = parts.copy() }
        return parts
    }

    public init(rules: [AuthRule], credentials: [String: CredentialMaterial], store: ProtectionSpaceStore,
                prepared: PreparedCredentials? = nil) {
        parts = AnswererParts(rules: rules, credentials: credentials, prepared: prepared ?? PreparedCredentials(credentials), store: store,
                                plans: PreemptivePlans())
    }

    // MARK: On a 401 / 407

    /// The decision on a 401/407, with what it changes in the store: a rejected preemptive
    /// answer forgotten, a space locked out at `max_failures`.
    public func respond(to response: AuthResponseHead, request: AuthRequest, target: AuthTarget, exchange: inout AuthExchange) -> AuthStep<ChallengeDecision> {
        guard response.status == target.challengeStatus else {
            return AuthStep(.passThrough(reason: "status \(response.status) is not a challenge from \(target)"))
        }
        let challenges = ChallengeParser.parse(fieldValues: response.values(target.challengeField))
        guard !challenges.isEmpty else {
            return AuthStep(.passThrough(reason: "the \(response.status) from \(target) carries no readable \(target.challengeField) challenge"))
        }
        guard request.bodyReplayable else {
            return AuthStep(.passThrough(reason: "the request body already went upstream and was not kept, so the request cannot be replayed with an answer"))
        }

        var continuing: AuthSchemeName?
        if exchange.awaitingToken {
            exchange.awaitingToken = false  // back after a token fetch: nothing new was sent
        } else if let sent = exchange.sent {
            switch assess(sent, challenges: challenges, exchange: &exchange) {
            case .continueHandshake(let scheme):
                continuing = scheme
            case .retry:
                break
            case .refetchToken(let name, let client):
                return AuthStep(.fetchToken(credentialName: name, client: client))
            case .notAuthorized(let reason):
                return AuthStep(.passThrough(reason: reason))
            case .exhausted(let reason, let refusal):
                return AuthStep(.passThrough(reason: reason), effects: [.refused(refusal)])
            }
        }
        return AuthStep(choose(challenges, request: request, target: target, continuing: continuing, exchange: &exchange))
    }

    private enum Assessment {
        /// The server's token continues the connection-bound handshake (NTLM, Negotiate) just started.
        case continueHandshake(AuthSchemeName)
        case retry
        case refetchToken(String, OAuth2Client)
        /// Refused for a resource the credential may not see where it was accepted for others:
        /// pass the challenge on, counting nothing.
        case notAuthorized(String)
        /// `max_failures` reached for this request: pass the challenge on, and let the space's
        /// standing decide whether the refusal locks it out.
        case exhausted(String, refusal: Refusal)
    }

    /// A challenge after an answer: the next NTLM or Negotiate leg, a stale nonce, a rejection,
    /// or (when the space answered is not challenged again) a challenge for something else,
    /// which rejects nothing.
    private func assess(_ sent: AuthExchange.Sent, challenges: [Challenge], exchange: inout AuthExchange) -> Assessment {
        let space = sent.space
        if space.scheme == .ntlm, exchange.ntlm?.state == .negotiateSent,
           challenges.contains(where: { $0.hasScheme("NTLM") && $0.token68 != nil }) {
            return .continueHandshake(.ntlm)
        }
        if space.scheme == .negotiate, exchange.negotiate?.state == .tokenSent,
           challenges.contains(where: { $0.hasScheme("Negotiate") && $0.token68 != nil }) {
            return .continueHandshake(.negotiate)
        }
        exchange.ntlm = nil
        exchange.negotiate = nil
        let sameSpace = challenges.filter { AuthSchemeName(challengeScheme: $0.scheme) == space.scheme && $0.realm == space.realm }
        guard !sameSpace.isEmpty else { return .retry }
        // stale=true: the password was right, the nonce expired; answer the new one uncounted.
        if space.scheme == .digest, sameSpace.contains(where: { (try? DigestChallenge($0))?.stale == true }),
           exchange.budget.grantStaleRetry() {
            return .retry
        }
        // A rejected OAuth2 token is fetched anew once, whether it went preemptively or not:
        // sending the same token again would only be rejected again.
        if space.scheme == .bearer, !exchange.tokenRefetched,
           let client = credentials[sent.rule.credentialName]?.oauth2Client {
            exchange.tokenRefetched = true
            exchange.awaitingToken = true
            return .refetchToken(sent.rule.credentialName, client)
        }
        if sent.preemptive {
            // Learned state may be out of date (new password, server restart) or the resource
            // not one the credential may see: answer the fresh challenge, which tells. What was
            // learned stays for the other requests until that answer's fate is known. A Digest
            // session stays, so a fresh answer to the same nonce continues its count (a
            // rejection for a count that arrived out of order must not restart it at 1).
            return .retry
        }
        // Accepted in this space for other requests: this one is an authorization failure (a
        // path the account may not see), which must not lock the credential out for everyone.
        if case .accepted(let resources)? = store.standing(of: space), !resources.contains(sent.resource) {
            exchange.refusedAsNotAuthorized = true
            return .notAuthorized("\(space) refused credential \(sent.rule.credentialName) for \(sent.resource.label), "
                + "which it accepted for other requests: not authorized for this one; passing the challenge to the client, counting nothing")
        }
        let count = (exchange.failures[space] ?? 0) + 1
        exchange.failures[space] = count
        guard count >= sent.rule.maxFailures else { return .retry }
        return .exhausted("\(space) rejected credential \(sent.rule.credentialName) \(count) time(s) (max_failures \(sent.rule.maxFailures)); passing the challenge to the client",
                          refusal: Refusal(space: space, resource: sent.resource, credentialName: sent.rule.credentialName, at: clock()))
    }

    private func choose(_ challenges: [Challenge], request: AuthRequest, target: AuthTarget, continuing: AuthSchemeName?,
                        exchange: inout AuthExchange) -> ChallengeDecision {
        guard let rule = rules.first(where: { rule in challenges.contains { rule.matches(realm: $0.realm) } }) else {
            let realms = Set(challenges.compactMap(\.realm)).sorted().map { "\"\($0)\"" }.joined(separator: ", ")
            return .passThrough(reason: "no auth rule for \(target) matches the challenge realm(s) \(realms.isEmpty ? "(none)" : realms)")
        }
        guard let whole = credentials[rule.credentialName] else {
            return .fail(reason: "credential \(rule.credentialName), named by an auth rule for \(target), is not loaded")
        }
        // A handshake's later legs belong to the attempt its first leg started.
        guard continuing != nil || exchange.budget.allowsAnswer(maxFailures: rule.maxFailures) else {
            return .passThrough(reason: "\(target) was answered \(exchange.budget.answered) time(s) for this request, "
                + "the most one request may draw (1 + max_failures \(rule.maxFailures)); passing the challenge to the client")
        }
        let candidates = continuing.map { [$0] } ?? (rule.schemes.isEmpty ? ChallengeAnswerer.defaultSchemeOrder : rule.schemes)
        var refusals: [String] = []
        for name in candidates {
            let offered = challenges.filter { AuthSchemeName(challengeScheme: $0.scheme) == name && rule.matches(realm: $0.realm) }
            guard !offered.isEmpty else { continue }
            let scheme = AuthenticationSchemes.scheme(name)
            guard let credential = whole.material(for: name), scheme.canAnswer(with: credential) else {
                refusals.append("credential \(rule.credentialName) cannot answer \(name)")
                continue
            }
            guard permitsConnection(scheme, rule: rule, request: request) else {
                refusals.append("\(name) would expose credential \(rule.credentialName) on an unencrypted connection (allow_plaintext is off)")
                continue
            }
            let picked = continuing != nil ? offered.first { $0.token68 != nil } : scheme.preferred(offered)
            guard let challenge = picked else { continue }
            // The realm names a protection space that is learned and kept: bounded like a nonce.
            if let realm = challenge.realm, realm.utf8.count > ProtectionSpace.maxRealmBytes {
                refusals.append("\(name): the realm is \(realm.utf8.count) bytes, over the \(ProtectionSpace.maxRealmBytes) Countersign accepts; not answered")
                continue
            }
            let space = ProtectionSpace(target: target, scheme: name, realm: challenge.realm)
            guard !store.isLockedOut(space) else {
                exchange.skippedLockedOut = space
                refusals.append("\(space) rejected credential \(rule.credentialName) max_failures times; not answered until the configuration reloads")
                continue
            }
            var context = makeContext(credential: credential, rule: rule, request: request, exchange: exchange,
                                      prepared: prepared.prepared(rule.credentialName, for: credential))
            context.store = store
            context.space = space
            do {
                let outcome = try scheme.answer(challenge, context: &context)
                exchange.ntlm = context.exchange.ntlm
                exchange.negotiate = context.exchange.negotiate
                exchange.preparedNegotiate = context.exchange.preparedNegotiate
                switch outcome {
                case .needsToken(let client):
                    exchange.awaitingToken = true
                    return .fetchToken(credentialName: rule.credentialName, client: client)
                case .needsKerberos(let kerberos):
                    exchange.awaitingToken = true   // nothing is sent meanwhile
                    return .prepareKerberos(kerberos)
                case .answer(let value, let leg, let session, let proof):
                    if scheme.bindsConnection, continuing == nil, request.connection?.authenticatedAs == rule.credentialName {
                        exchange.rechallengedAuthenticatedConnection = true
                    }
                    let digest = session.map { AuthExchange.DigestSent(session: $0, proof: proof, shelf: nil) }
                    exchange.record(AuthExchange.Sent(space: space, rule: rule, preemptive: false, resource: ResourceKey(request)), digest: digest)
                    if continuing == nil { exchange.budget.spend() }
                    return .answer(AuthAnswer(field: target.authorizationField, value: value, scheme: name,
                                              isHandshakeLeg: leg, bindsConnection: scheme.bindsConnection, continuesHandshake: continuing != nil,
                                              credentialName: rule.credentialName,
                                              fallbackReason: refusals.isEmpty ? nil : refusals.joined(separator: "; ")))
                }
            } catch let error as AuthError {
                exchange.preparedNegotiate = context.exchange.preparedNegotiate
                refusals.append("\(name): \(error.message)")
            } catch {
                refusals.append("\(name): \(error)")
            }
        }
        if refusals.isEmpty {
            let offered = challenges.map(\.scheme).joined(separator: ", ")
            return .passThrough(reason: "\(target) offered \(offered); the rule for credential \(rule.credentialName) allows none of them")
        }
        return .passThrough(reason: refusals.joined(separator: "; "))
    }

    // MARK: After the final response

    /// What worked, to be learned, and `Authentication-Info` applied; call with the response the
    /// client gets.
    public func complete(response: AuthResponseHead, target: AuthTarget, exchange: inout AuthExchange) -> AuthStep<AuthOutcome> {
        let status = response.status
        guard let sent = exchange.sent else { return AuthStep(.notAttempted) }
        let scheme = sent.space.scheme
        guard status != target.challengeStatus else {
            return AuthStep(exchange.refusedAsNotAuthorized ? .notAuthorized(scheme) : .rejected(scheme))
        }
        // The usual request after the first: a fixed answer sent ahead (Basic, a token) has no
        // server proof to check, no session to give back and nothing to learn; only where it
        // was accepted can change (what follows decides the same, with more to look at).
        if sent.preemptive, scheme == .basic || scheme == .bearer {
            guard status < 500, status != 407, sent.acceptance?.acceptedBefore(on: sent.resource) != true else {
                return AuthStep(.preemptive(scheme))
            }
            return AuthStep(.preemptive(scheme), effects: [.accepted(sent.space, on: sent.resource)])
        }

        let digestSent = exchange.digestSent
        var digestSession = digestSent?.session
        var outcome: AuthOutcome = sent.preemptive ? .preemptive(scheme) : .answered(scheme)
        // What the credential was accepted for is evidence, whatever the persistence; only from
        // an answer that this server made (not a parent's 407, nor a 5xx some hop may have made).
        var effects: [AuthStoreEffect] = []
        // A preemptive answer accepted on the same resource as the last one changes no
        // standing: the store is not asked (the usual request after the first).
        if status < 500, status != 407, sent.acceptance?.acceptedBefore(on: sent.resource) != true {
            effects.append(.accepted(sent.space, on: sent.resource))
        }
        if scheme == .negotiate, let handshake = exchange.negotiate {
            // Mutual authentication: a final token that does not complete the context means the
            // server is not the service the ticket was for (or someone between us altered it).
            do {
                try handshake.verify(finalChallenges: ChallengeParser.parse(fieldValues: response.values(target.challengeField)))
            } catch {
                exchange.mutualAuthFailure = "\(target) failed Kerberos mutual authentication: \(error)"
                return AuthStep(.mutualAuthFailed(scheme))
            }
        }
        if scheme == .digest, let reply = DigestReply.read(response.headers, field: target.infoField, proof: digestSent?.proof,
                                                                clientNonce: digestSession?.clientNonce) {
            if let nextNonce = reply.nextNonce, let previous = digestSession?.nonce, digestSession?.adopt(nextNonce: nextNonce) == true {
                effects.append(.retireNonce(previous, in: sent.space))   // its count is of no more use
            }
            if reply.proofMismatch { outcome = .serverProofMismatch(scheme) }
        }
        // Persistence none keeps nothing else beyond the exchange.
        guard sent.rule.persistence != .none else { return AuthStep(outcome, effects: effects) }
        // NTLM's answer proves nothing to a later connection; Negotiate's first token can go first.
        if !sent.preemptive, scheme != .ntlm {
            let eachRequest = exchange.rechallengedAuthenticatedConnection ? true : store.entry(for: sent.space)?.authenticatesEachRequest
            effects.append(.learn(LearnedSpace(space: sent.space, credentialName: sent.rule.credentialName, persistence: sent.rule.persistence,
                                               digest: digestSession, authenticatesEachRequest: eachRequest, learnedAt: clock())))
        }
        if let digestSession {
            if let shelf = digestSent?.shelf {
                shelf.giveBack(digestSession)   // lent to the candidate: no store effect
            } else {
                effects.append(.returnDigestSession(digestSession, to: sent.space))
            }
        }
        // What a `permanent` rule learns outlives a restart (the Digest counts of preemptive
        // answers are written at reload and stop).
        let learnsState = effects.contains { effect in
            switch effect {
            case .learn, .returnDigestSession: return true
            default: return false
            }
        }
        if outcome == .answered(scheme), sent.rule.persistence == .permanent, learnsState { effects.append(.persist) }
        return AuthStep(outcome, effects: effects)
    }

    // MARK: Helpers

    /// The credential an NTLM or Negotiate handshake with this target would authenticate a
    /// connection as: their challenges carry no realm, so only the first realm-less rule can answer one.
    public var connectionBindingCredential: String? {
        guard let rule = rules.first(where: { $0.realm == nil }), let credential = credentials[rule.credentialName] else { return nil }
        let binding = AuthSchemeName.allCases.filter { AuthenticationSchemes.scheme($0).bindsConnection }
        let answers = binding.contains { name in
            (rule.schemes.isEmpty || rule.schemes.contains(name))
                && credential.material(for: name).map(AuthenticationSchemes.scheme(name).canAnswer) == true
        }
        return answers ? rule.credentialName : nil
    }

    /// Password-equivalent answers cross only TLS unless the rule says otherwise.
    func permitsConnection(_ scheme: AuthenticationScheme.Type, rule: AuthRule, request: AuthRequest) -> Bool {
        permitsConnection(scheme, rule: rule, overTLS: request.connectionIsTLS)
    }

    func permitsConnection(_ scheme: AuthenticationScheme.Type, rule: AuthRule, overTLS: Bool) -> Bool {
        !scheme.isPasswordEquivalent || overTLS || rule.allowPlaintext
    }

    func makeContext(credential: CredentialMaterial, rule: AuthRule, request: AuthRequest, exchange: AuthExchange,
                             prepared: PreparedCredential?) -> SchemeContext {
        SchemeContext(credential: credential, credentialName: rule.credentialName, request: request,
                      digestResponder: digestResponder, ntlmEntropy: ntlmEntropy, exchange: exchange, now: clock(),
                      prepared: prepared, spn: rule.spn)
    }
}
