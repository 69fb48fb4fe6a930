/// A request's target: the bytes a parsed head holds it in (the array its fields were copied
/// into, so reading a request makes no String of its target), or text given to a head made
/// in code. A String is made of received bytes only when text is asked for (`string`).
public struct RequestTargetText: Equatable, Sendable {
    private enum Held: Sendable {
        case received([UInt8], Range<Int>)
        case text(String)
    }

    private let held: Held

    public init(_ text: String) { held = .text(text) }

    /// The target is `range` of `storage` (visible ASCII: the parser checked every byte).
    init(received storage: [UInt8], _ range: Range<Int>) { held = .received(storage, range) }

    public var string: String {
        switch held {
        case .text(let text): return text
        case .received(let storage, let range): return String(decoding: storage[range], as: UTF8.self)
        }
    }

    /// Calls `body` with the target's bytes, where they lie.
    public func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        switch held {
        case .received(let storage, let range):
            return try storage.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[range])) }
        case .text(let text):
            if let result = try text.utf8.withContiguousStorageIfAvailable(body) { return result }
            var text = text
            return try text.withUTF8(body)
        }
    }

    public static func == (lhs: RequestTargetText, rhs: RequestTargetText) -> Bool {
        lhs.withBytes { left in rhs.withBytes { right in left.elementsEqual(right) } }
    }
}
