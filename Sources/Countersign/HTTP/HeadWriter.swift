/// Writes a head into memory the caller provides (the output buffer's own free space, so a
/// forwarded head is written once, where it is sent from), at most `capacity` bytes: the
/// caller sizes the region from the head's `byteBound`. Writing past it is a programming
/// error and stops the process rather than touch memory it was not given.
public struct HeadWriter {
    private let base: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    /// Bytes written so far.
    public private(set) var count = 0

    public init(_ region: UnsafeMutableRawBufferPointer) {
        base = region.baseAddress.map { $0.assumingMemoryBound(to: UInt8.self) } ?? UnsafeMutablePointer(bitPattern: 1)!
        capacity = region.baseAddress == nil ? 0 : region.count
    }

    @inline(__always)
    private mutating func claim(_ size: Int) -> UnsafeMutablePointer<UInt8> {
        precondition(size <= capacity - count, "a head was written past the bound it gave")
        defer { count += size }
        return base + count
    }

    @inline(__always)
    mutating func put(_ byte: UInt8) { claim(1).pointee = byte }

    @inline(__always)
    mutating func putCRLF() {
        let at = claim(2)
        at[0] = CR
        at[1] = LF
    }

    /// `: `, between a name and its value.
    @inline(__always)
    mutating func putColonSpace() {
        let at = claim(2)
        at[0] = COLON
        at[1] = SP
    }

    @inline(__always)
    mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        claim(bytes.count).update(from: source, count: bytes.count)
    }

    mutating func put(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { put($0) }
    }

    /// Text spelled in the code, copied from where the literal lies.
    @inline(__always)
    mutating func put(spelled text: StaticString) {
        put(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A string's UTF-8 bytes as they are (a method, a target).
    mutating func putUTF8(_ text: String) {
        if let done: Void = text.utf8.withContiguousStorageIfAvailable({ put($0) }) { return done }
        var text = text
        text.withUTF8 { put($0) }
    }

    /// A field value given as text, as ISO-8859-1 (`Latin1`).
    mutating func putLatin1(_ text: String) {
        Latin1.encode(text) { put($0) }
    }
}

extension Array where Element == UInt8 {
    /// Appends what `write` puts down in at most `bound` bytes (a head written into an array:
    /// tests, and a head that is signed before it goes).
    mutating func appendHead(bound: Int, _ write: (inout HeadWriter) -> Void) {
        let written = [UInt8](unsafeUninitializedCapacity: bound) { buffer, initialized in
            var writer = HeadWriter(UnsafeMutableRawBufferPointer(buffer))
            write(&writer)
            initialized = writer.count
        }
        if isEmpty { self = written } else { append(contentsOf: written) }
    }
}
