@testable import CountersignHTTP

/// Hex in, octets out, for known-answer tests; whitespace is ignored.
func octets(_ hex: String) -> [UInt8] {
    let digits = Array(hex.unicodeScalars.filter { !$0.properties.isWhitespace })
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0]) + String(digits[$0 + 1]), radix: 16)! }
}

func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

func fields(_ pairs: [(String, String)]) -> [HPACKField] {
    pairs.map { HPACKField($0.0, $0.1) }
}
