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

    mutating func quoted(_ name: String, _ value: String) {
        startParam(name)
        bytes.append(UInt8(ascii: "\""))
        let needsEscape = { (byte: UInt8) in byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") }
        // Nonces, URIs and hex digests are almost always ASCII with neither: then the value
        // goes in whole, copied from the string's own bytes.
        if appendPlainASCII(value, unless: needsEscape) {
            // done
        } else if value.utf8.contains(where: needsEscape) {
            var escaped: [UInt8] = []
            HeaderFields.appendLatin1(value, to: &escaped)
            for byte in escaped {
                if needsEscape(byte) { bytes.append(UInt8(ascii: "\\")) }
                bytes.append(byte)
            }
        } else {
            HeaderFields.appendLatin1(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A hash in hex, quoted (hex needs no escaping).
    mutating func quotedHex(_ name: String, _ hex: [UInt8]) {
        startParam(name)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: hex)
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func token(_ name: String, _ value: String) {
        startParam(name)
        if !appendPlainASCII(value, unless: { _ in false }) { HeaderFields.appendLatin1(value, to: &bytes) }
    }

    /// Appends `value` when it is all ASCII and holds no byte `excluded` picks; false (nothing
    /// appended) otherwise.
    private mutating func appendPlainASCII(_ value: String, unless excluded: (UInt8) -> Bool) -> Bool {
        var value = value
        return value.withUTF8 { raw in
            for byte in raw where byte >= 0x80 || excluded(byte) { return false }
            bytes.append(contentsOf: raw)
            return true
        }
    }

    private mutating func startParam(_ name: String) {
        bytes.append(contentsOf: (hasParams ? ", " : " ").utf8)
        hasParams = true
        bytes.append(contentsOf: name.utf8)
        bytes.append(UInt8(ascii: "="))
    }
}
