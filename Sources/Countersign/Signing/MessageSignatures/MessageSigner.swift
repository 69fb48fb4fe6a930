import CountersignSupport

/// The two fields an RFC 9421 signature travels in, for one label: `Signature-Input: label=(…);…`
/// and `Signature: label=:…:`. Built after every other edit to the message (§1.4: the signer
/// signs what it sends).
public struct SignatureFields: Equatable, Sendable {
    public let label: String
    public let signatureInput: String
    public let signature: String
}

public enum MessageSigner {
    public static func sign(_ message: SignableMessage, label: String, components: [SignatureComponent],
                            parameters: SignatureParameters, key: MessageSigningKey) throws -> SignatureFields {
        var parameters = parameters
        if parameters.algorithm != nil { parameters.algorithm = key.algorithm.rawValue }
        let (base, signatureParams) = try SignatureBase.build(message, components: components, parameters: parameters.structured)
        let signature = try key.sign(base)
        var labelText = ""
        try StructuredFieldSerializer.appendKey(label, to: &labelText)
        return SignatureFields(label: label, signatureInput: labelText + "=" + signatureParams,
                               signature: labelText + "=:" + Base64.encode(signature) + ":")
    }
}
