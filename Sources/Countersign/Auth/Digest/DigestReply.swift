import CountersignHTTP

/// What a server's `Authentication-Info` says after a Digest answer (RFC 7616 §3.5), read for
/// every answered response from the field's bytes: `nextnonce` as text (it is kept), and the
/// server's proof checked against the answer's parameter by parameter, where each lies.
struct DigestReply {
    var nextNonce: String?
    /// `rspauth` was given and does not prove the answer: the server does not know the
    /// password, or the response was altered on the way.
    var proofMismatch = false

    /// Nil when no field carries any parameter. `clientNonce` is the cnonce the answer went
    /// with (its session's, `DigestSession.clientNonce`).
    static func read(_ headers: HeaderFields, field: FieldName, proof: DigestProof?, clientNonce: String?) -> DigestReply? {
        var reply = DigestReply()
        guard let proof else {
            // No answer to check: only a `nextnonce` is taken, and there is no verdict.
            let any = AuthenticationInfo.forEachParameter(headers, field: field) { parameter, value in
                if parameter == .nextnonce { reply.nextNonce = value.text(isLatin1: true) }
            }
            return any ? reply : nil
        }
        var check = DigestProof.Check(proof)
        let any = AuthenticationInfo.forEachParameter(headers, field: field) { parameter, value in
            switch parameter {
            case .nextnonce: reply.nextNonce = value.text(isLatin1: true)
            case .rspauth: value.withBytes { check.rspauth($0) }
            case .cnonce: value.withBytes { check.cnonce($0, sent: clientNonce) }
            case .nc: value.withBytes { check.nc($0) }
            default: break
            }
        }
        guard any else { return nil }
        reply.proofMismatch = check.verdict == false
        return reply
    }
}
