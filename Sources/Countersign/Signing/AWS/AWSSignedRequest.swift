/// What signing changes in a request, for the proxy to apply to the head it sends: fields to
/// remove (the client's own signing fields), fields to append in order, and — for the query
/// form — the new request target. Also the seed signature and scope an aws-chunked body's chunk
/// signatures chain from.
public struct AWSSignedRequest: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Lower-case names; every field with one of them is removed before `addedFields` are appended.
    public let removedFields: Set<String>
    public let addedFields: [(name: String, value: String)]
    /// Origin-form `path?query`, when the signature travels in the query; nil for the header form.
    public let target: String?
    /// Hex; the first chunk signature's "previous signature".
    public let signature: String
    public let timestamp: AWSTimestamp
    public let scope: AWSCredentialScope
    /// The derived key, for the chunk signer; never public, never logged.
    let signingKey: [UInt8]
    /// Kept for tests and the `check` explanation; they may hold the session token.
    let canonicalRequest: String
    let stringToSign: String

    /// The added fields hold the session token and the key derives chunk signatures: printing
    /// shows the scope only.
    public var description: String { "AWSSignedRequest(\(scope.text), token and key redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["scope": scope.text], displayStyle: .struct) }

    /// A chunk signer continuing this signature's chain, for `STREAMING-AWS4-HMAC-SHA256-PAYLOAD`
    /// and its `-TRAILER` form.
    public func chunkSigner() -> AWSChunkSigner {
        AWSChunkSigner(signingKey: signingKey, timestamp: timestamp, scope: scope, seedSignature: signature)
    }
}

enum AWSStringToSign {
    static let algorithm = "AWS4-HMAC-SHA256"

    static func make(timestamp: AWSTimestamp, scope: AWSCredentialScope, canonicalRequest: String) -> String {
        "\(algorithm)\n\(timestamp.amzDate)\n\(scope.text)\n\(hexSHA256(canonicalRequest))"
    }

    static func hexSHA256(_ text: String) -> String { AWSPayloadHash.of(body: Array(text.utf8)).value }
}
