/// A secret read at load time from an environment variable or a file. It prints as `<redacted>`
/// everywhere (`description`, `debugDescription`, `dump`) so it cannot leak into logs or errors.
public struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public let bytes: [UInt8]
    /// Where it came from, e.g. `env SVC_PASSWORD` or `file /run/secrets/corp`; safe to show.
    public let source: String

    public init(bytes: [UInt8], source: String) {
        self.bytes = bytes
        self.source = source
    }

    public init(_ string: String, source: String) {
        self.init(bytes: Array(string.utf8), source: source)
    }

    /// The secret as UTF-8 text (invalid sequences replaced), for passwords and tokens.
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "Secret(<redacted>, from \(source))" }
    public var customMirror: Mirror { Mirror(self, children: ["source": source], displayStyle: .struct) }
}
