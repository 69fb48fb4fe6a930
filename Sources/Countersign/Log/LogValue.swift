/// A value in a log line. There is deliberately no case for header maps: a log line holds
/// named facts, never a request's fields, so credentials cannot slip in wholesale.
public enum LogValue: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }

    func appendJSON(to out: inout [UInt8]) {
        switch self {
        case .string(let text): JSONText.appendQuoted(text, to: &out)
        case .int(let number): out.append(contentsOf: String(number).utf8)
        case .double(let number): out.append(contentsOf: (number.isFinite ? String(number) : "null").utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        }
    }

    var plain: String {
        switch self {
        case .string(let text): return text
        case .int(let number): return String(number)
        case .double(let number): return String(number)
        case .bool(let flag): return String(flag)
        }
    }
}

/// JSON string literals written as UTF-8 bytes. Valid UTF-8 passes through as it is (JSON
/// allows it unescaped); quotes, backslashes and control characters are escaped.
enum JSONText {
    static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most values (hosts, paths, methods) need no escape: one copy, not a byte at a time.
        if !text.utf8.contains(where: needsEscape) {
            out.append(contentsOf: text.utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        func escaped(_ letter: UInt8) {
            out.append(UInt8(ascii: "\\"))
            out.append(letter)
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): escaped(byte)
            case UInt8(ascii: "\n"): escaped(UInt8(ascii: "n"))
            case UInt8(ascii: "\r"): escaped(UInt8(ascii: "r"))
            case UInt8(ascii: "\t"): escaped(UInt8(ascii: "t"))
            case 0..<0x20, 0x7F:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: "\\u00".utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            default:
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }
}
