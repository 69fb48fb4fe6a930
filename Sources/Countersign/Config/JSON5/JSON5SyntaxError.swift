/// A JSON5 text that cannot be parsed; parsing stops at the first one because nothing
/// after a syntax error can be trusted.
public struct JSON5SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var position: SourcePosition
    public var message: String

    public var description: String { "\(position): \(message)" }
}
