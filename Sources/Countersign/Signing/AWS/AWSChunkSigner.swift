import CountersignSupport

/// The chunk-signature chain of an aws-chunked body (`STREAMING-AWS4-HMAC-SHA256-PAYLOAD`):
/// each chunk's signature covers its data and the previous signature, starting from the
/// request's (seed) signature, so chunks cannot be reordered, dropped or spliced. Sans-I/O: it
/// is given one whole chunk at a time (its signature leads its data on the wire, so a chunk is
/// held before it is sent) and answers the signature; the `-TRAILER` form ends with a signature
/// over the trailing fields.
public struct AWSChunkSigner: Sendable, CustomStringConvertible, CustomReflectable {
    private enum State: Sendable {
        /// Data chunks may follow; `previous` seeds the next signature.
        case chunks(previous: String)
        /// The zero-length chunk was signed; only a trailer signature may follow.
        case afterFinalChunk(previous: String)
        case finished
    }

    private let signingKey: [UInt8]
    private let timestamp: AWSTimestamp
    private let scope: AWSCredentialScope
    private var state: State

    static let emptyHash = AWSPayloadHash.emptyBody.value

    init(signingKey: [UInt8], timestamp: AWSTimestamp, scope: AWSCredentialScope, seedSignature: String) {
        self.signingKey = signingKey
        self.timestamp = timestamp
        self.scope = scope
        state = .chunks(previous: seedSignature)
    }

    public var description: String { "AWSChunkSigner(\(scope.text), key redacted)" }
    public var customMirror: Mirror { Mirror(self, children: ["scope": scope.text], displayStyle: .struct) }

    /// Signs the next chunk; an empty `data` is the final chunk, after which only
    /// `signTrailer` may be called.
    public mutating func signChunk(_ data: [UInt8]) throws -> String {
        guard case .chunks(let previous) = state else { throw AWSSigningError.invalidChunk("a chunk after the final chunk") }
        let stringToSign = "AWS4-HMAC-SHA256-PAYLOAD\n\(timestamp.amzDate)\n\(scope.text)\n\(previous)\n\(Self.emptyHash)\n"
            + Hex.encode(SHA256.hash(data))
        let signature = AWSSigningKey.signature(key: signingKey, stringToSign: stringToSign)
        state = data.isEmpty ? .afterFinalChunk(previous: signature) : .chunks(previous: signature)
        return signature
    }

    /// The chunk's header line as sent: its size as the client wrote it (so the body's length,
    /// and the request's `Content-Length`, do not change) and the new signature.
    public mutating func chunkHeaderLine(sizeText: String, data: [UInt8]) throws -> String {
        "\(sizeText);chunk-signature=\(try signChunk(data))\r\n"
    }

    /// The `x-amz-trailer-signature` over the trailing fields, each canonical as
    /// `name:value\n` (name lower-cased, value trimmed), in the order sent.
    public mutating func signTrailer(_ trailers: [(name: String, value: String)]) throws -> String {
        guard case .afterFinalChunk(let previous) = state else { throw AWSSigningError.invalidChunk("a trailer before the final chunk") }
        let canonical = trailers.map { "\($0.name.lowercased()):\(AWSCanonicalHeaders.canonicalValue($0.value))\n" }.joined()
        let stringToSign = "AWS4-HMAC-SHA256-TRAILER\n\(timestamp.amzDate)\n\(scope.text)\n\(previous)\n"
            + Hex.encode(SHA256.hash(Array(canonical.utf8)))
        state = .finished
        return AWSSigningKey.signature(key: signingKey, stringToSign: stringToSign)
    }
}
