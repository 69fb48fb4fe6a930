/// A value in a log line. There is deliberately no case for header maps: a log line holds
/// named facts, never a request's fields, so credentials cannot slip in wholesale.
public enum LogValue: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }

    func appendJSON(to out: inout String) {
        switch self {
        case .string(let text): JSONText.appendQuoted(text, to: &out)
        case .int(let number): out += String(number)
        case .double(let number): out += number.isFinite ? String(number) : "null"
        case .bool(let flag): out += flag ? "true" : "false"
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

enum JSONText {
    static func appendQuoted(_ text: String, to out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
