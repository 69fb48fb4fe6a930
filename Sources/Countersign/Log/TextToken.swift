/// One value of a `key=value` text log line. A value is written bare only when it cannot be
/// mistaken for anything else; otherwise it is quoted as a JSON string, so that a value
/// holding `status=200 host=x`, a quote or a line break (a realm chosen by a server, a path
/// chosen by a client) can never add a field or a line: every line parses back to what was logged.
enum TextToken {
    static func append(_ text: String, to out: inout [UInt8]) {
        if !text.isEmpty, text.utf8.allSatisfy(isBare) {
            out.append(contentsOf: text.utf8)
        } else {
            JSONText.appendQuoted(text, to: &out)
        }
    }

    /// Printable ASCII other than the space, `=` and `"` (and `\\`, which quoting escapes).
    private static func isBare(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "=") && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }
}
