/// Standard base64 (RFC 4648 §4, with padding): Basic credentials, NTLM and Negotiate tokens,
/// and SPKI pins as curl and HPKP write them.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    /// The value of each alphabet byte; 0xff for every byte outside the alphabet.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xff, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()

    public static func encode<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        append(bytes, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// The encoding appended to bytes being built (a signature field), with no `String` between.
    public static func append<Bytes: Collection>(_ bytes: Bytes, to output: inout [UInt8]) where Bytes.Element == UInt8 {
        if let done: Void = bytes.withContiguousStorageIfAvailable({ append(UnsafeRawBufferPointer($0), to: &output) }) { return done }
        Array(bytes).withUnsafeBytes { append($0, to: &output) }
    }

    /// One pass over contiguous bytes through a stack buffer, then one copy onto the output:
    /// this runs for every signature and nonce, where growing the output by padding first and
    /// indexing a static table cost more than the encoding itself.
    public static func append(_ bytes: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        guard !bytes.isEmpty else { return }
        let length = (bytes.count + 2) / 3 * 4
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { out in
            alphabetBytes.withUTF8Buffer { alphabet in
                var write = 0, read = 0
                while read + 3 <= bytes.count {
                    let b0 = bytes[read], b1 = bytes[read + 1], b2 = bytes[read + 2]
                    out[write] = alphabet[Int(b0 >> 2)]
                    out[write + 1] = alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)]
                    out[write + 2] = alphabet[Int((b1 & 0x0f) << 2 | b2 >> 6)]
                    out[write + 3] = alphabet[Int(b2 & 0x3f)]
                    read += 3
                    write += 4
                }
                // One or two bytes left: the rest of the group is padding.
                if read < bytes.count {
                    let b0 = bytes[read], b1: UInt8 = read + 1 < bytes.count ? bytes[read + 1] : 0
                    out[write] = alphabet[Int(b0 >> 2)]
                    out[write + 1] = alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)]
                    out[write + 2] = read + 1 < bytes.count ? alphabet[Int((b1 & 0x0f) << 2)] : UInt8(ascii: "=")
                    out[write + 3] = UInt8(ascii: "=")
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(out))
        }
    }

    /// The alphabet as a literal in the binary: no lazy global, nothing to retain.
    private static let alphabetBytes: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    /// The digest of an SPKI pin from what follows `sha256/`: curl writes a second `/` before
    /// the base64 (`sha256//…`), HPKP does not (`sha256/…`), and the base64 may itself begin with
    /// `/` (one pin in 64): the HPKP reading is taken when only it decodes to a SHA-256. Any
    /// other text is read as curl's form, so a bad pin is judged as the usual form writes it.
    public static func decodePinDigest(afterSlash rest: Substring) -> [UInt8]? {
        guard rest.first == "/" else { return decode(rest) }
        let curl = decode(rest.dropFirst())
        if curl?.count != 32, let hpkp = decode(rest), hpkp.count == 32 { return hpkp }
        return curl
    }

    /// Strict decoding: nil unless the length is a multiple of 4, every character is in the
    /// alphabet, and padding (at most two `=`) stands only at the very end.
    public static func decode<Text: StringProtocol>(_ text: Text) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(characters.count / 4 * 3)
        var index = 0
        while index < characters.count {
            let isLastGroup = index + 4 == characters.count
            var group: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
            var count = 0
            var padding = 0
            for character in characters[index..<index + 4] {
                if character == UInt8(ascii: "=") {
                    padding += 1
                    continue
                }
                let value = values[Int(character)]
                guard padding == 0, value != 0xff else { return nil }
                switch count {
                case 0: group.0 = value
                case 1: group.1 = value
                case 2: group.2 = value
                default: group.3 = value
                }
                count += 1
            }
            guard padding == 0 || (isLastGroup && padding <= 2) else { return nil }
            output.append(group.0 << 2 | group.1 >> 4)
            if count > 2 { output.append(group.1 << 4 | group.2 >> 2) }
            if count > 3 { output.append(group.2 << 6 | group.3) }
            index += 4
        }
        return output
    }
}
