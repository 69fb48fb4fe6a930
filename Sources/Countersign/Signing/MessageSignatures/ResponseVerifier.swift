/// Checks a response from a host with `verify_responses` before any of it is released: an RFC
/// 9421 signature by the configured key covering at least the required components, made within
/// `max_age`, and a `Content-Digest` that matches the body as received (required, or checked
/// when present). The reason it gives is what the client's `502` says.
public struct ResponseVerifier: Sendable {
    public enum DigestRule: Sendable {
        case required
        case ifPresent
    }

    public let key: MessageVerifyingKey
    public let keyID: String
    public let requirements: VerificationRequirements
    public let digestRule: DigestRule

    public init(key: MessageVerifyingKey, keyID: String, requirements: VerificationRequirements, digestRule: DigestRule) {
        self.key = key
        self.keyID = keyID
        self.requirements = requirements
        self.digestRule = digestRule
    }

    /// `hasContent`: false for a response that carries none (to `HEAD`, `204`, `304`), which
    /// needs no digest. `digest` hashes the held body with the algorithm the response claims.
    public func verify(_ response: SignableResponse, hasContent: Bool, now: Int64,
                       digest: (ContentDigester.Algorithm) -> [UInt8]) -> Result<Void, SignatureError> {
        if case .failure(let why) = MessageVerifier.verify(.response(response), key: key, keyID: keyID, requirements: requirements, now: now) {
            return .failure(why)
        }
        // A response without content has nothing a digest could be checked against.
        guard hasContent else { return .success(()) }
        let lines = response.fields.filter { $0.name.lowercased() == "content-digest" }.map(\.value)
        guard !lines.isEmpty else {
            return digestRule == .required ? .failure(.verificationFailed("the response has no Content-Digest")) : .success(())
        }
        let claim: ContentDigestClaim?
        do {
            claim = try ContentDigestClaim.strongest(in: lines.joined(separator: ", "))
        } catch {
            return .failure(.verificationFailed("the response's Content-Digest is not a valid dictionary"))
        }
        guard let claim else {
            return digestRule == .required
                ? .failure(.verificationFailed("the response's Content-Digest has neither sha-256 nor sha-512")) : .success(())
        }
        return claim.matches(digest(claim.algorithm))
            ? .success(()) : .failure(.verificationFailed("the response's Content-Digest (\(claim.algorithm.rawValue)) does not match its body"))
    }
}
