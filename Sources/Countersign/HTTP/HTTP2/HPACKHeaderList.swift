/// A header list the encoder reads in place (RFC 7541 §2.1): each field's name and value as
/// bytes, valid during the call. Encoding from the bytes a head already holds spares a field
/// list of arrays made and freed per message.
public protocol HPACKHeaderList {
    /// Whether names come as an HTTP/1.1 head spells them, in any case: the encoder then sends
    /// them in lower case (RFC 9113 §8.2.1). Otherwise they are sent as they are.
    var namesInAnyCase: Bool { get }
    func forEachField(_ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) -> Void)
}

extension Array: HPACKHeaderList where Element == HPACKField {
    public var namesInAnyCase: Bool { false }

    public func forEachField(_ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) -> Void) {
        for field in self {
            field.name.withUnsafeBufferPointer { name in field.value.withUnsafeBufferPointer { body(name, $0) } }
        }
    }
}

/// Byte comparisons for the encoder's table lookups.
enum HPACKBytes {
    /// Whether `name`, lower-cased when `lowering`, equals `stored` (a table's name).
    static func equalName(_ name: UnsafeBufferPointer<UInt8>, lowering: Bool, _ stored: UnsafeBufferPointer<UInt8>) -> Bool {
        guard lowering else { return equal(name, stored) }
        guard name.count == stored.count else { return false }
        for index in 0..<name.count where ASCIICase.lower(name[index]) != stored[index] { return false }
        return true
    }

    /// Whether a table's `entry` is exactly `name` (lower-cased when `lowering`) and `value`;
    /// the value first, the likelier to differ.
    static func holds(_ entry: HPACKField, name: UnsafeBufferPointer<UInt8>, lowering: Bool, value: UnsafeBufferPointer<UInt8>) -> Bool {
        entry.value.withUnsafeBufferPointer { equal($0, value) } && entry.name.withUnsafeBufferPointer { equalName(name, lowering: lowering, $0) }
    }

    static func equal(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        guard left.count == right.count else { return false }
        guard let a = left.baseAddress.map(UnsafeRawPointer.init), let b = right.baseAddress.map(UnsafeRawPointer.init) else { return true }
        // Eight octets at a time: values (dates, tags) run to tens of octets.
        var offset = 0
        while offset + 8 <= left.count {
            guard a.loadUnaligned(fromByteOffset: offset, as: UInt64.self) == b.loadUnaligned(fromByteOffset: offset, as: UInt64.self) else { return false }
            offset += 8
        }
        while offset < left.count {
            guard left[offset] == right[offset] else { return false }
            offset += 1
        }
        return true
    }
}
