/// Durations in the configuration: "500ms", "10s", "10m", "1h" (decimals allowed, e.g. "1.5s"),
/// or a bare number of seconds. Always returned in seconds.
public enum DurationParser {
    public static func seconds(from text: String) throws -> Double {
        let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        let trimmed = text.trimmingSpaces()
        for unit in units where trimmed.hasSuffix(unit.suffix) {
            let number = trimmed.dropLast(unit.suffix.count).trimmingSpaces()
            if let value = nonNegative(number) { return value * unit.seconds }
            break
        }
        if let value = nonNegative(trimmed) { return value }
        throw ValueError("\"\(text)\" is not a duration; write a number with a unit: \"500ms\", \"10s\", \"10m\" or \"1h\"")
    }

    private static func nonNegative(_ text: String) -> Double? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              let value = Double(text), value.isFinite else { return nil }
        return value
    }
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
