/// A request's target: the bytes a parsed head holds it in (the array its fields were copied
/// into, so reading a request makes no String of its target), or text given to a head made
/// in code. A String is made of received bytes only when text is asked for (`string`).
public struct RequestTargetText: Equatable, Sendable {
    /// Stored side by side, not as an enum's cases: `withBytes` then reads the received bytes
    /// where the head holds them, with no copy (and retain) of a case's payload first.
    private let received: [UInt8]
    private let range: Range<Int>
    /// Set for a target given as text (`received` is then empty).
    private let text: String?

    public init(_ text: String) {
        received = []
        range = 0..<0
        self.text = text
    }

    /// The target is `range` of `storage` (visible ASCII: the parser checked every byte).
    init(received storage: [UInt8], _ range: Range<Int>) {
        received = storage
        self.range = range
        text = nil
    }

    public var string: String {
        text ?? String(decoding: received[range], as: UTF8.self)
    }

    /// Calls `body` with the target's bytes, where they lie.
    public func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        guard let text else {
            return try received.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[range])) }
        }
        if let result = try text.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = text
        return try copy.withUTF8(body)
    }

    public static func == (lhs: RequestTargetText, rhs: RequestTargetText) -> Bool {
        lhs.withBytes { left in rhs.withBytes { right in left.elementsEqual(right) } }
    }
}
