/// Why a signature could not be made or did not verify: the sentence that becomes the
/// `Proxy-Status` details or the configuration error. Never holds a key or a signature base.
public enum SignatureError: Error, Equatable, CustomStringConvertible {
    case invalidComponent(String)
    case missingComponent(String)
    case invalidKey(String)
    case signingFailed(String)
    case invalidSignatureInput(String)
    case verificationFailed(String)

    public var description: String {
        switch self {
        case .invalidComponent(let why): return "invalid signature component: \(why)"
        case .missingComponent(let name): return "the message has no \(name) to sign"
        case .invalidKey(let why): return "unusable signing key: \(why)"
        case .signingFailed(let why): return "signing failed: \(why)"
        case .invalidSignatureInput(let why): return "invalid Signature-Input: \(why)"
        case .verificationFailed(let why): return why
        }
    }
}
