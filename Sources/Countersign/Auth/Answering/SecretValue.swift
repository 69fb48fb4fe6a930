/// A value that is as good as the credential it came from (a Basic or Bearer header value, a
/// Digest H(A1)): `String(describing:)`, interpolation, `debugPrint` and `dump` all show
/// `<redacted>`, so it cannot reach a log line or an error body by accident.
public struct SecretValue: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The value itself, for the one place that puts it on the wire.
    let text: String

    init(_ text: String) { self.text = text }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
