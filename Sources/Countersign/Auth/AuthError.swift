/// A failure inside the authentication core, carrying a sentence a user can act on.
/// Never built from a secret: messages name fields and schemes, not their values.
public struct AuthError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
