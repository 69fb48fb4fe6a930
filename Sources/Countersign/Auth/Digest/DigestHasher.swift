import CountersignSupport

/// H(entity-body) for qop=auth-int, fed piece by piece so a streamed body never has to be held whole.
public final class DigestHasher {
    public let algorithm: DigestAlgorithm
    private let digest: MessageDigest

    public init(algorithm: DigestAlgorithm) {
        self.algorithm = algorithm
        digest = MessageDigest(algorithm.hash)
    }

    public func update(_ bytes: UnsafeRawBufferPointer) { digest.update(bytes) }
    public func update(_ bytes: [UInt8]) { digest.update(bytes) }

    /// The lower-case hex digest the auth-int A2 needs; call once.
    public func finish() -> String { Hex.encode(digest.finish()) }
}
