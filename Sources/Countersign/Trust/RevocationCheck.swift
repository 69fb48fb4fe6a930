/// `revocation.crl_files`: no certificate of the verified path may be revoked by a CRL of its
/// issuer, and where its issuer has a CRL here that CRL must be usable now — a CRL past its
/// nextUpdate, signed by another key or by an issuer without cRLSign fails closed, since
/// accepting then would make an attacker's best move "block the CRL distribution".
public struct RevocationCheck: TrustCheck {
    public init() {}

    public func refusal(for facts: ServedChainFacts) -> TrustRefusal? {
        for finding in facts.revocation {
            switch finding.status {
            case .notRevoked:
                continue
            case .revoked(let entry, let crl):
                let reason = entry.reason.map { ", reason \($0)" } ?? ""
                return TrustRefusal(kind: .revoked,
                                    details: "certificate revoked: \(finding.subject) (serial \(finding.serial)) was revoked on"
                                        + " \(UTCTimestamp.string(entry.revocationDate))\(reason), according to \(crl)")
            case .unusable(let why):
                return TrustRefusal(kind: .revocationUnknown,
                                    details: "revocation unknown for \(finding.subject) (serial \(finding.serial)): \(why)")
            }
        }
        return nil
    }

    public var name: String { "revocation (CRLs)" }

    public func acceptance(for facts: ServedChainFacts) -> String {
        let checked = facts.revocation.compactMap { finding -> String? in
            guard case .notRevoked(let crl) = finding.status else { return nil }
            return "\(finding.subject) (serial \(finding.serial)) not on \(crl)"
        }
        return checked.isEmpty ? "no configured CRL is issued by a CA of the verified path" : checked.joined(separator: "; ")
    }
}
