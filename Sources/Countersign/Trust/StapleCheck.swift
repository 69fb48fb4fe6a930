/// `revocation.ocsp_stapling` over what the stapled OCSP response said about the leaf (see
/// `OCSPStaple` for what makes one valid). Any staple that fails verification is refused,
/// whatever the mode: a server sending a forged or stale staple is not to be believed about
/// anything. "prefer" accepts a handshake without a staple (or one whose responder does not
/// know the certificate); "require" does not.
public struct StapleCheck: Sendable {
    public let mode: TrustSettings.OCSPStapling

    public init(mode: TrustSettings.OCSPStapling) {
        self.mode = mode
    }

    /// The staple (DER, nil when none came) judged against the verified path `chain` (leaf
    /// first) at `time`: what the handshake's status callback and `check --chain
    /// --ocsp-response` both run. With no issuer on the path (the leaf is the anchor) there is
    /// nothing to check a staple against.
    public func judge(response: [UInt8]?, chain: [Certificate], at time: Int64) -> (finding: StapleFinding, refusal: TrustRefusal?) {
        guard mode != .off, chain.count >= 2 else { return (.absent, nil) }
        let leaf = chain[0], issuer = chain[1]
        let finding = response.map { OCSPStaple.examine($0, leaf: leaf, issuer: issuer, at: time) } ?? .absent
        return (finding, refusal(for: finding, leaf: leaf.subject, serial: RevocationLookup.serialHex(leaf)))
    }

    /// A DER OCSP response file, for `check --chain --ocsp-response`.
    public static func readResponse(path: String) throws -> [UInt8] {
        try FileBytes.read(path, what: "OCSP response file")
    }

    /// `leaf`: the served leaf's subject and serial, for the refusal's details.
    public func refusal(for finding: StapleFinding, leaf: String, serial: String) -> TrustRefusal? {
        guard mode != .off else { return nil }
        switch finding {
        case .good:
            return nil
        case .absent where mode == .prefer, .unknown where mode == .prefer:
            return nil
        case .absent:
            return TrustRefusal(kind: .revocationUnknown,
                                details: "revocation unknown for \(leaf) (serial \(serial)): the server stapled no OCSP response,"
                                    + " and ocsp_stapling requires one")
        case .unknown:
            return TrustRefusal(kind: .revocationUnknown,
                                details: "revocation unknown for \(leaf) (serial \(serial)): the stapled OCSP response's"
                                    + " responder does not know the certificate (status unknown), and ocsp_stapling requires a good one")
        case .revoked(let entry):
            let reason = entry.reason.map { ", reason \($0)" } ?? ""
            return TrustRefusal(kind: .revoked,
                                details: "certificate revoked: \(leaf) (serial \(serial)) was revoked on"
                                    + " \(UTCTimestamp.string(entry.revocationDate))\(reason), according to the stapled OCSP response")
        case .invalid(let why):
            return TrustRefusal(kind: .revocationUnknown, details: "stapled OCSP response refused for \(leaf) (serial \(serial)): \(why)")
        }
    }
}
