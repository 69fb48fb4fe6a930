import CountersignHTTP

/// Writes an `Authorization` value as bytes: the scheme, then auth-params, quoted-string where
/// the RFC asks for it with `"` and `\\` escaped. Text goes out as ISO-8859-1, as every header
/// value does (the inverse of how the parser read the server's challenge).
struct AuthParamWriter {
    private(set) var bytes: [UInt8] = []
    private var hasParams = false

    init(scheme: String) {
        bytes.reserveCapacity(320)
        bytes.append(contentsOf: scheme.utf8)
    }

    /// Goes on after parameters already written (`bytes`, from another writer).
    init(continuing written: ArraySlice<UInt8>) {
        bytes.reserveCapacity(320)
        bytes.append(contentsOf: written)
        hasParams = true
    }

    /// Parameters another writer wrote, each after its comma (`, name=value`).
    mutating func appendWritten(_ written: ArraySlice<UInt8>) {
        bytes.append(contentsOf: written)
    }

    mutating func quoted(_ name: StaticString, _ value: String) {
        startParam(name)
        bytes.append(UInt8(ascii: "\""))
        func needsEscape(_ byte: UInt8) -> Bool { byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") }
        // Nonces, URIs and hex digests are ASCII and almost never hold either: then the value
        // goes in whole, after one look at its bytes.
        var value = value
        let copied = value.withUTF8 { raw in
            guard !raw.contains(where: { $0 >= 0x80 || needsEscape($0) }) else { return false }
            bytes.append(contentsOf: raw)
            return true
        }
        guard !copied else { return bytes.append(UInt8(ascii: "\"")) }
        var escaped: [UInt8] = []
        HeaderFields.appendLatin1(value, to: &escaped)
        for byte in escaped {
            if needsEscape(byte) { bytes.append(UInt8(ascii: "\\")) }
            bytes.append(byte)
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A hash in hex, quoted (hex needs no escaping).
    mutating func quotedHex(_ name: StaticString, _ hex: UnsafeRawBufferPointer) {
        startParam(name)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: hex)
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func token(_ name: StaticString, _ value: String) {
        startParam(name)
        HeaderFields.appendLatin1(value, to: &bytes)
    }

    /// Names are literals, copied as bytes (no string view walked per parameter).
    private mutating func startParam(_ name: StaticString) {
        if hasParams { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: " "))
        hasParams = true
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "="))
    }
}
