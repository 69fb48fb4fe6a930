import CountersignHTTP

/// What a server's `Authentication-Info` says after a Digest answer (RFC 7616 §3.5), read for
/// every answered response from the field's bytes: `nextnonce` as text (it is kept), and the
/// check of `rspauth` against the answer's proof made on the values where they lie.
struct DigestReply {
    var nextNonce: String?
    /// `rspauth` was given and does not prove the answer: the server does not know the
    /// password, or the response was altered on the way.
    var proofMismatch = false

    /// Nil when no field carries any parameter.
    static func read(_ headers: HeaderFields, field: FieldName, proof: DigestProof?) -> DigestReply? {
        var reply = DigestReply()
        var rspauth: ArraySlice<UInt8>?, cnonce: ArraySlice<UInt8>?, nc: ArraySlice<UInt8>?
        let any = AuthenticationInfo.forEachParameter(headers, field: field) { parameter, scanner, value in
            switch parameter {
            case .nextnonce: reply.nextNonce = scanner.text(of: value)
            case .rspauth: rspauth = scanner.valueBytes(of: value)
            case .cnonce: cnonce = scanner.valueBytes(of: value)
            case .nc: nc = scanner.valueBytes(of: value)
            default: break
            }
        }
        guard any else { return nil }
        if rspauth != nil, let proof {
            reply.proofMismatch = !proof.verifies(rspauth: rspauth, cnonce: cnonce, nc: nc)
        }
        return reply
    }
}
