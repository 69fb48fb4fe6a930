import CountersignSupport

/// A problem with the interception CA or with minting, carrying a sentence a person can act on.
/// Messages name files and hosts, never key material.
public struct InterceptionError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }

    /// Appends what OpenSSL said (its queued reasons), so the sentence keeps the detail.
    static func withOpenSSLReason(_ message: String) -> InterceptionError {
        let reasons = OpenSSLErrorQueue.drainReasons()
        guard !reasons.isEmpty else { return InterceptionError(message) }
        return InterceptionError("\(message) (\(reasons.joined(separator: "; ")))")
    }
}
