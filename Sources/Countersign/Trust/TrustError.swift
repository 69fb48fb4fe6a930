import CountersignSupport

/// A trust, certificate or identity problem, carrying a sentence a person can act on.
/// The message never contains key material or passphrases.
public struct TrustError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }

    /// Appends what OpenSSL said, when it said anything, so the sentence keeps its detail.
    static func withOpenSSLReason(_ message: String) -> TrustError {
        let reasons = OpenSSLErrorQueue.drainReasons()
        guard !reasons.isEmpty else { return TrustError(message) }
        return TrustError("\(message) (\(reasons.joined(separator: "; ")))")
    }
}
