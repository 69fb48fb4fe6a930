/// A request target as it may be written to a log or shown on `/status`: without its query
/// (queries often carry tokens) and without userinfo (`http://user:password@host/` is refused,
/// but the refusal is logged too). Works on any text a client sent as a target, parsed or not.
public enum LoggableTarget {
    public static func of(_ target: String) -> String {
        // On UTF-8 bytes: this runs for every request, logged or not.
        var bytes = target.utf8[...]
        var suffix = ""
        if let question = bytes.firstIndex(of: UInt8(ascii: "?")) {
            bytes = bytes[..<question]
            suffix = "?…"
        }
        if let at = userinfoEnd(in: bytes) {
            return String(Substring(bytes[..<authorityStart(in: bytes)])) + "…@" + String(Substring(bytes[bytes.index(after: at)...])) + suffix
        }
        return suffix.isEmpty ? target : String(Substring(bytes)) + suffix
    }

    /// Where the authority begins: after `scheme://` in absolute form, at the start in
    /// authority form (`CONNECT user:pw@host:443`), nowhere in origin form.
    private static func authorityStart(in bytes: Substring.UTF8View.SubSequence) -> String.Index {
        if let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
           bytes[colon...].starts(with: "://".utf8),
           bytes[..<colon].allSatisfy(isSchemeByte) {
            return bytes.index(colon, offsetBy: 3)
        }
        return bytes.startIndex
    }

    /// The last `@` of the authority, if it has one.
    private static func userinfoEnd(in bytes: Substring.UTF8View.SubSequence) -> String.Index? {
        let start = authorityStart(in: bytes)
        if start == bytes.startIndex, bytes.first == UInt8(ascii: "/") { return nil }
        let authority = bytes[start...].prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "#") }
        return authority.lastIndex(of: UInt8(ascii: "@"))
    }

    private static func isSchemeByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."): return true
        default: return false
        }
    }
}
