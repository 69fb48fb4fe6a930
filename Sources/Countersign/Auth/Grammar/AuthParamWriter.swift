/// Writes auth-params for `Authorization` values: quoted-string where the RFC asks for it,
/// with `"` and `\` escaped.
struct AuthParamWriter {
    private var parts: [String] = []

    mutating func quoted(_ name: String, _ value: String) {
        var escaped = ""
        for scalar in value.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { escaped.append("\\") }
            escaped.unicodeScalars.append(scalar)
        }
        parts.append("\(name)=\"\(escaped)\"")
    }

    mutating func token(_ name: String, _ value: String) {
        parts.append("\(name)=\(value)")
    }

    func joined() -> String { parts.joined(separator: ", ") }
}
