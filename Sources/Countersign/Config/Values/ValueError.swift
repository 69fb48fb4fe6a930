/// Why a single value (an address, a duration, a URL...) is not acceptable; the decoder
/// adds the key path and line to it.
public struct ValueError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String

    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}
