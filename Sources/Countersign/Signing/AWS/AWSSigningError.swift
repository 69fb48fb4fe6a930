/// Why a SigV4 signature could not be made, or a client's signing material not understood: the
/// sentence that becomes the `Proxy-Status` details. Never holds a key, a token or a signature.
public enum AWSSigningError: Error, Equatable, CustomStringConvertible {
    case invalidRequest(String)
    case invalidScope(String)
    case invalidPresignedQuery(String)
    case invalidChunk(String)
    /// STS gave no temporary keys (the sentence says what it answered, never the token).
    case stsRefused(String)

    public var description: String {
        switch self {
        case .invalidRequest(let why): return "cannot sign the request: \(why)"
        case .invalidScope(let why): return "invalid AWS credential scope: \(why)"
        case .invalidPresignedQuery(let why): return "invalid presigned query: \(why)"
        case .invalidChunk(let why): return "invalid aws-chunked body: \(why)"
        case .stsRefused(let why): return why
        }
    }
}
