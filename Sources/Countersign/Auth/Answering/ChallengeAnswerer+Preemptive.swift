import FoundationEssentials

/// Before the request is sent: answers from learned state (`persistence` session or permanent,
/// `preemptive` on), decided once per store generation (`PreemptivePlans`), and the OAuth2
/// token to fetch before a first request.
extension ChallengeAnswerer {
    /// An answer from learned state (persistence session/permanent, `preemptive` on), or nil.
    public func preemptiveAnswer(request: AuthRequest, target: AuthTarget, exchange: inout AuthExchange) -> AuthAnswer? {
        preemptiveAnswer(from: preemptivePlan(for: target), facts: { RequestFacts(request) }, request: { request }, target: target, exchange: &exchange)
    }

    /// What `target` can be answered with ahead of a challenge as the store stands now. An
    /// exchange keeps it while `isCurrent` (it asks before connecting and again once connected).
    public func preemptivePlan(for target: AuthTarget) -> PreemptivePlan {
        let generation = store.learnedGeneration
        return PreemptivePlan(generation: generation,
                              candidates: plans.candidates(for: target, generation: generation) { older in
                                  preemptiveCandidates(for: target, older: older)
                              })
    }

    /// The same, taken from `memo` when it kept this answerer's plan for `target` and nothing
    /// changed since (a worker's requests to one host), else made and kept there.
    public func preemptivePlan(for target: AuthTarget, memo: PreemptivePlanMemo) -> PreemptivePlan {
        if let kept = memo.plan(of: plans, for: target, at: store.learnedGeneration) { return kept }
        let made = preemptivePlan(for: target)
        memo.keep(made, of: plans, for: target)
        return made
    }

    /// Whether nothing was learned, forgotten or locked out since `plan` was made.
    public func isCurrent(_ plan: PreemptivePlan) -> Bool { plan.generation == store.learnedGeneration }

    /// `preemptiveAnswer` from a plan already made; `facts` are only made when a candidate is
    /// there, and `request` for a candidate whose scheme computes its answer (a fixed one needs
    /// only the `facts`). Closures, not autoclosures: the exchange's own are passed on as they
    /// are, where an autoclosure wrapped each in one more.
    public func preemptiveAnswer(from plan: PreemptivePlan, facts makeFacts: () -> RequestFacts,
                                 request makeRequest: () -> AuthRequest, target: AuthTarget, exchange: inout AuthExchange) -> AuthAnswer? {
        guard !plan.candidates.isEmpty else { return nil }
        let facts = makeFacts()
        for index in plan.candidates.indices {
            let candidate = plan.candidates[index]
            guard candidate.permitsConnection(overTLS: facts.connectionIsTLS) else { continue }
            // Basic and a static token: the answer is the prepared value, no scheme asked.
            guard let answer = candidate.fixedAnswer else {
                return computedAnswer(from: plan.candidates[index...], facts: facts, request: makeRequest, target: target, exchange: &exchange)
            }
            return sendFixed(answer, of: candidate, facts: facts, exchange: &exchange)
        }
        return nil
    }

    private func sendFixed(_ answer: AuthAnswer, of candidate: PreemptiveCandidate, facts: RequestFacts, exchange: inout AuthExchange) -> AuthAnswer {
        exchange.record(candidate.sent(method: facts.method, target: facts.target))
        exchange.budget.spend()
        return answer
    }

    /// The rest of the candidates from the first whose scheme computes its answer (Digest,
    /// NTLM, Negotiate, OAuth2). The whole request is made only for a scheme that is asked
    /// through its context: a shelved Digest session answers from the `facts` (and asks for
    /// the request only for the body's hash, when the server offers auth-int), where making
    /// and destroying the request cost ~700 instructions an answer.
    private func computedAnswer(from candidates: ArraySlice<PreemptiveCandidate>, facts: RequestFacts, request makeRequest: () -> AuthRequest,
                                target: AuthTarget, exchange: inout AuthExchange) -> AuthAnswer? {
        var made: AuthRequest?
        func request() -> AuthRequest {
            if let made { return made }
            let request = makeRequest()
            made = request
            return request
        }
        for candidate in candidates where candidate.permitsConnection(overTLS: facts.connectionIsTLS) {
            if let answer = candidate.fixedAnswer { return sendFixed(answer, of: candidate, facts: facts, exchange: &exchange) }
            if candidate.digestShelf != nil {
                // Digest with a session lent to the candidate: no scheme context, no store.
                guard let answer = candidate.shelvedDigestAnswer(facts: facts, body: { request().body }, responder: digestResponder,
                                                                 field: target.authorizationField, exchange: &exchange) else { continue }
                return answer
            }
            let request = request()
            let outcome = preemptiveOutcome(candidate, request: request, exchange: &exchange)
            if case .needsKerberos(let kerberos)? = outcome {
                exchange.preemptiveKerberos = kerberos   // the driver makes the token, then asks again
                return nil
            }
            guard case .answer(let value, let leg, let session, let proof)? = outcome else { continue }
            return sendPreemptive(value, of: candidate, facts: facts, target: target, exchange: &exchange,
                                  isHandshakeLeg: leg, digestSession: session, digestProof: proof)
        }
        return nil
    }

    private func sendPreemptive(_ value: SecretValue, of candidate: PreemptiveCandidate, facts: RequestFacts, target: AuthTarget,
                                exchange: inout AuthExchange, isHandshakeLeg: Bool = false, digestSession: DigestSession? = nil,
                                digestProof: DigestProof? = nil) -> AuthAnswer {
        let digest = digestSession.map { AuthExchange.DigestSent(session: $0, proof: digestProof, shelf: candidate.digestShelf) }
        exchange.record(candidate.sent(method: facts.method, target: facts.target), digest: digest)
        exchange.budget.spend()
        return AuthAnswer(field: target.authorizationField, value: value, scheme: candidate.schemeName,
                          isHandshakeLeg: isHandshakeLeg, bindsConnection: candidate.scheme.bindsConnection, credentialName: candidate.credentialName)
    }

    /// The learned spaces of `target` a rule answers preemptively, most recently learned first,
    /// with what does not change from one request to the next already looked up.
    /// A Digest space's shelf carries over from the `older` plan's candidate: the sessions lent
    /// to it stay lent while the space is still answered (a plan is remade whenever anything
    /// is learned, which a busy host does at every fresh challenge).
    private func preemptiveCandidates(for target: AuthTarget, older: [PreemptiveCandidate]) -> [PreemptiveCandidate] {
        store.entries(for: target).compactMap { learned in
            guard !store.isLockedOut(learned.space),
                  let rule = rules.first(where: { $0.matches(realm: learned.space.realm) }),
                  rule.credentialName == learned.credentialName, rule.preemptive, rule.persistence != .none,
                  rule.schemes.isEmpty || rule.schemes.contains(learned.space.scheme),
                  let credential = credentials[rule.credentialName]?.material(for: learned.space.scheme) else { return nil }
            let scheme = AuthenticationSchemes.scheme(learned.space.scheme)
            guard scheme.canAnswer(with: credential) else { return nil }
            if credential.oauth2Client != nil {
                return PreemptiveCandidate(learned: learned, rule: rule, scheme: scheme, credential: nil, prepared: nil, fixedAnswer: nil)
            }
            let prepared = self.prepared.prepared(rule.credentialName, for: credential)
            var fixedValue: SecretValue?
            switch (learned.space.scheme, credential) {
            case (.basic, .password): fixedValue = try? prepared?.basic?.get()
            case (.bearer, .token): fixedValue = try? prepared?.bearer?.get()
            default: fixedValue = nil
            }
            let fixedAnswer = fixedValue.map {
                AuthAnswer(field: target.authorizationField, value: $0, scheme: learned.space.scheme, isHandshakeLeg: false,
                           bindsConnection: scheme.bindsConnection, credentialName: rule.credentialName)
            }
            // Digest sessions are lent to the candidate between answers, but a `permanent` rule's
            // count goes to the store with each answer (`state_dir` keeps the latest).
            let shelf = learned.space.scheme != .digest || rule.persistence == .permanent ? nil
                : older.first { $0.learned.space == learned.space }?.digestShelf ?? DigestSessionShelf(space: learned.space, store: store)
            return PreemptiveCandidate(learned: learned, rule: rule, scheme: scheme, credential: credential, prepared: prepared, fixedAnswer: fixedAnswer,
                                       digestShelf: shelf)
        }
    }

    /// The scheme's preemptive answer for one candidate; nil when it has none now.
    private func preemptiveOutcome(_ candidate: PreemptiveCandidate, request: AuthRequest, exchange: inout AuthExchange) -> SchemeOutcome? {
        let rule = candidate.rule
        guard let credential = candidate.credential ?? credentials[rule.credentialName]?.material(for: candidate.learned.space.scheme) else { return nil }
        var context = makeContext(credential: credential, rule: rule, request: request, exchange: exchange,
                                  prepared: candidate.credential != nil ? candidate.prepared : prepared.prepared(rule.credentialName, for: credential))
        context.space = candidate.learned.space
        let outcome = try? candidate.scheme.preemptiveAnswer(candidate.learned, store: store, context: &context)
        exchange.preparedNegotiate = context.exchange.preparedNegotiate
        if case .answer? = outcome { exchange.negotiate = context.exchange.negotiate }
        return outcome
    }

    /// An OAuth2 token to fetch before the request goes: a learned Bearer space whose token is
    /// missing, expired or close to expiry (refreshed ahead, never sent expired).
    public func tokenToFetchFirst(target: AuthTarget) -> (credentialName: String, client: OAuth2Client)? {
        guard fetchesTokens else { return nil }
        let now = clock()
        for learned in store.entries(for: target) where learned.space.scheme == .bearer && !store.isLockedOut(learned.space) {
            guard let rule = rules.first(where: { $0.matches(realm: learned.space.realm) }),
                  rule.credentialName == learned.credentialName, rule.preemptive, rule.persistence != .none,
                  case .oauth2(let client, let token)? = credentials[rule.credentialName] else { continue }
            if let token, token.isUsable(now: now), !token.needsRefresh(now: now) { return nil }
            return (rule.credentialName, client)
        }
        return nil
    }
}
