/// Standard base64 (RFC 4648 §4, with padding), as curl and HPKP write SPKI pins.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let b0 = bytes[index]
            let b1 = index + 1 < bytes.count ? bytes[index + 1] : 0
            let b2 = index + 2 < bytes.count ? bytes[index + 2] : 0
            output.append(alphabet[Int(b0 >> 2)])
            output.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            output.append(index + 1 < bytes.count ? alphabet[Int((b1 & 0x0f) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            output.append(index + 2 < bytes.count ? alphabet[Int(b2 & 0x3f)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Strict decoding: the length must be a multiple of 4 and padding only at the end.
    static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        var index = 0
        while index < characters.count {
            let isLastGroup = index + 4 == characters.count
            var values: [UInt8] = []
            var padding = 0
            for character in characters[index..<index + 4] {
                if character == UInt8(ascii: "=") {
                    padding += 1
                    continue
                }
                guard padding == 0, let value = alphabet.firstIndex(of: character) else { return nil }
                values.append(UInt8(value))
            }
            guard padding == 0 || (isLastGroup && padding <= 2) else { return nil }
            output.append(values[0] << 2 | values[1] >> 4)
            if values.count > 2 { output.append(values[1] << 4 | values[2] >> 2) }
            if values.count > 3 { output.append(values[2] << 6 | values[3]) }
            index += 4
        }
        return output
    }
}
