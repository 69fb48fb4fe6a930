/// A JSON value with object members kept in the order they were written, so the printed
/// schema is stable (byte-equal from run to run and to the committed copy) and reads in the
/// same order as the configuration reference.
public indirect enum SchemaJSON: Equatable, Sendable {
    case string(String)
    case integer(Int)
    case bool(Bool)
    case array([SchemaJSON])
    case object([(String, SchemaJSON)])

    public static func == (lhs: SchemaJSON, rhs: SchemaJSON) -> Bool { lhs.text() == rhs.text() }

    /// Pretty-printed with two-space indentation and a final line break.
    public func text() -> String {
        var out = ""
        write(to: &out, indent: "")
        return out + "\n"
    }

    /// The member named `key` of an object, nil for anything else.
    public subscript(key: String) -> SchemaJSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    private func write(to out: inout String, indent: String) {
        switch self {
        case .string(let text): out += SchemaJSON.quoted(text)
        case .integer(let value): out += String(value)
        case .bool(let value): out += value ? "true" : "false"
        case .array(let elements):
            // Short lists of scalars (enums, types) stay on one line.
            if elements.allSatisfy(\.isScalar) {
                out += "[" + elements.map { $0.text().dropLast() }.joined(separator: ", ") + "]"
                return
            }
            out += "[\n"
            for (index, element) in elements.enumerated() {
                out += indent + "  "
                element.write(to: &out, indent: indent + "  ")
                out += index == elements.count - 1 ? "\n" : ",\n"
            }
            out += indent + "]"
        case .object(let members):
            if members.isEmpty { out += "{}"; return }
            out += "{\n"
            for (index, (key, value)) in members.enumerated() {
                out += indent + "  " + SchemaJSON.quoted(key) + ": "
                value.write(to: &out, indent: indent + "  ")
                out += index == members.count - 1 ? "\n" : ",\n"
            }
            out += indent + "}"
        }
    }

    private var isScalar: Bool {
        switch self {
        case .array, .object: return false
        default: return true
        }
    }

    private static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
