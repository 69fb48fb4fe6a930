/// The outcome of evaluating a served chain against a host's policy.
public enum TrustDecision: Equatable, Sendable {
    case trusted
    case refused(TrustRefusal)

    public var isTrusted: Bool { self == .trusted }

    public var refusal: TrustRefusal? {
        if case .refused(let refusal) = self { return refusal }
        return nil
    }
}

/// Why a served chain was refused: a category for metrics and a sentence for the
/// `Proxy-Status` details and the log line.
public struct TrustRefusal: Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case noCertificate
        case expired
        case notYetValid
        case untrustedIssuer
        case selfSigned
        case invalidChain
        case nameMismatch
        case pinMismatch
        /// A CRL or stapled OCSP response says a certificate of the path is revoked.
        case revoked
        /// Revocation was to be checked and could not be: a CRL expired or not signed by its
        /// issuer; an OCSP staple missing (with "require") or not valid.
        case revocationUnknown
    }

    public let kind: Kind
    public let details: String

    public init(kind: Kind, details: String) {
        self.kind = kind
        self.details = details
    }

    public var description: String { details }
}

/// A served chain's facts together with the policy's decision over them.
public struct TrustAssessment: Sendable {
    public let facts: ServedChainFacts
    public let decision: TrustDecision
}
