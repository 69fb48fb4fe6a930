/// What a verified response must carry (`verify_responses`): a signature by the key, covering
/// at least `requiredComponents`, made no more than `maxAge` seconds before `now`.
public struct VerificationRequirements: Sendable {
    public var requiredComponents: [SignatureComponent]
    public var maxAge: Int64?
    /// Clock difference tolerated for a `created` in the future.
    public var allowedSkew: Int64 = 60

    public init(requiredComponents: [SignatureComponent], maxAge: Int64?) {
        self.requiredComponents = requiredComponents
        self.maxAge = maxAge
    }
}

/// Checks RFC 9421 signatures (§3.2): every label in `Signature-Input` is tried; the message
/// verifies when one of them meets the requirements and its signature is the key's over the
/// base rebuilt from the message as received. Otherwise the most telling reason is returned.
public enum MessageVerifier {
    public static func verify(_ message: SignableMessage, key: MessageVerifyingKey, keyID: String?,
                              requirements: VerificationRequirements, now: Int64) -> Result<String, SignatureError> {
        let inputLines = message.fieldLines("signature-input"), signatureLines = message.fieldLines("signature")
        guard !inputLines.isEmpty, !signatureLines.isEmpty else { return .failure(.verificationFailed("the response carries no signature")) }
        let inputs: StructuredDictionary, signatures: StructuredDictionary
        do {
            inputs = try StructuredFieldParser.parseDictionary(inputLines.joined(separator: ", "))
            signatures = try StructuredFieldParser.parseDictionary(signatureLines.joined(separator: ", "))
        } catch {
            return .failure(.verificationFailed("the signature fields are not valid structured fields (\(error))"))
        }
        var reason = SignatureError.verificationFailed("no signature in Signature-Input has a matching Signature")
        for (label, member) in inputs.entries {
            switch check(label: label, input: member, signature: signatures[label], message: message, key: key, keyID: keyID, requirements: requirements, now: now) {
            case .success: return .success(label)
            case .failure(let why): reason = why
            }
        }
        return .failure(reason)
    }

    private static func check(label: String, input: StructuredMember, signature: StructuredMember?, message: SignableMessage,
                              key: MessageVerifyingKey, keyID: String?, requirements: VerificationRequirements, now: Int64) -> Result<Void, SignatureError> {
        func fail(_ why: String) -> Result<Void, SignatureError> { .failure(.verificationFailed("signature \(label): \(why)")) }
        guard case .innerList(let covered) = input else { return fail("its Signature-Input is not an inner list") }
        guard case .item(let signatureItem)? = signature, case .byteSequence(let signatureBytes) = signatureItem.bare else {
            return fail("no byte sequence under its label in Signature")
        }
        let parameters: SignatureParameters, components: [SignatureComponent]
        do {
            parameters = try SignatureParameters(covered.parameters)
            components = try covered.items.map(SignatureComponent.init(item:))
        } catch {
            return fail("\(error)")
        }
        if let algorithm = parameters.algorithm, algorithm != key.algorithm.rawValue {
            return fail("alg \(algorithm) is not the configured key's \(key.algorithm.rawValue)")
        }
        if let keyID, let sent = parameters.keyID, sent != keyID { return fail("keyid \(sent) is not \(keyID)") }
        let missing = requirements.requiredComponents.filter { !components.contains($0) }
        guard missing.isEmpty else { return fail("does not cover \(missing.map(\.description).joined(separator: " "))") }
        if let maxAge = requirements.maxAge {
            guard let created = parameters.created else { return fail("has no created time") }
            guard now - created <= maxAge else { return fail("was created \(now - created) s ago, more than max_age \(maxAge) s") }
        }
        if let created = parameters.created, created - now > requirements.allowedSkew { return fail("was created in the future") }
        if let expires = parameters.expires, expires < now { return fail("expired \(now - expires) s ago") }
        let base: String
        do {
            base = try SignatureBase.build(message, components: components, parameters: covered.parameters).base
        } catch {
            return fail("\(error)")
        }
        return key.verify(signatureBytes, over: base) ? .success(()) : fail("does not verify with the configured key")
    }
}
