/// A value that is as good as the credential it came from (a Basic, Bearer or Digest header
/// value, a Digest H(A1)): `String(describing:)`, interpolation, `debugPrint` and `dump` all show
/// `<redacted>`, so it cannot reach a log line or an error body by accident. Held as the bytes
/// that go on the wire, spliced into the outgoing head as they are.
public struct SecretValue: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The value itself, for the one place that puts it on the wire.
    public let bytes: [UInt8]

    init(_ text: String) { bytes = Array(text.utf8) }
    init(bytes: [UInt8]) { self.bytes = bytes }

    /// As text, for the tests and for a handshake token read back: never for a log.
    var text: String { String(decoding: bytes, as: UTF8.self) }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
