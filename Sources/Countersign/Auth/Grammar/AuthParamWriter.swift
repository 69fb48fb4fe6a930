/// Writes auth-params for `Authorization` values: quoted-string where the RFC asks for it,
/// with `"` and `\` escaped.
struct AuthParamWriter {
    private var parts: [String] = []

    mutating func quoted(_ name: String, _ value: String) {
        let needsEscape = { (byte: UInt8) in byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") }
        // Nonces, URIs and hex digests almost never hold either: then the value goes in whole.
        guard value.utf8.contains(where: needsEscape) else {
            parts.append(name + "=\"" + value + "\"")
            return
        }
        var escaped: [UInt8] = []
        escaped.reserveCapacity(value.utf8.count + 8)
        for byte in value.utf8 {
            if needsEscape(byte) { escaped.append(UInt8(ascii: "\\")) }
            escaped.append(byte)
        }
        parts.append(name + "=\"" + String(decoding: escaped, as: UTF8.self) + "\"")
    }

    mutating func token(_ name: String, _ value: String) {
        parts.append("\(name)=\(value)")
    }

    func joined() -> String { parts.joined(separator: ", ") }
}
