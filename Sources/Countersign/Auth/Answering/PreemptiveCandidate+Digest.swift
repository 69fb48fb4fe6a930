import CountersignHTTP

extension PreemptiveCandidate {
    /// Digest's answer with a session off this candidate's shelf (lent to it by the store, its
    /// count reserved), recorded in `exchange`: made and recorded here from the candidate's own
    /// fields, read in place (handed on through a scheme and a closure, the credential, the
    /// shelf, the prepared values and the answer were copied and released again, ~300
    /// instructions). Nil while every session of the space is out; the session goes back when
    /// it cannot answer. `body` is asked only when the server offers auth-int.
    func shelvedDigestAnswer(facts: RequestFacts, body: () -> RequestBodyHash, responder: DigestResponder, field: FieldName,
                             exchange: inout AuthExchange) -> AuthAnswer? {
        guard let shelf = digestShelf, let login = digestLogin, var session = shelf.take() else { return nil }
        let authorization: DigestAuthorization
        do {
            authorization = try DigestScheme.authorization(&session, user: login.user, password: login.password, method: facts.method,
                                                           uri: facts.target, body: body, prepared: prepared, responder: responder)
        } catch {
            shelf.giveBack(session)
            return nil
        }
        exchange.record(sent(method: facts.method, target: facts.target),
                        digest: AuthExchange.DigestSent(session: session, proof: authorization.proof, shelf: shelf))
        exchange.budget.spend()
        return AuthAnswer(field: field, value: authorization.value, scheme: schemeName, isHandshakeLeg: false,
                          bindsConnection: scheme.bindsConnection, credentialName: credentialName)
    }
}
