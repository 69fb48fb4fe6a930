#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Renders seconds since 1970 as an RFC 3339 UTC timestamp, e.g. `2024-01-01T00:00:00Z`.
public enum UTCTimestamp {
    public static func string(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return "@\(seconds)" }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))"
            + "T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// Parses `--at`-style times: unix seconds (`1798761600`) or RFC 3339
    /// (`2027-01-01T00:00:00Z`, fractional seconds dropped, `+01:00` offsets applied).
    public static func parse(_ text: String) throws -> Int64 {
        if !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }), let seconds = Int64(text) { return seconds }
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int32? {
            guard range.upperBound <= bytes.count, range.allSatisfy({ (48...57).contains(bytes[$0]) }) else { return nil }
            return range.reduce(Int32(0)) { $0 * 10 + Int32(bytes[$1] - 48) }
        }
        let invalid = TrustError("\"\(text)\" is not a time: give RFC 3339 (2027-01-01T00:00:00Z) or unix seconds")
        guard bytes.count >= 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] | 0x20 == UInt8(ascii: "t"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60 else { throw invalid }
        var index = 19
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < bytes.count, (48...57).contains(bytes[index]) { index += 1 }
        }
        var offset: Int64 = 0
        if index + 1 == bytes.count, bytes[index] | 0x20 == UInt8(ascii: "z") {
            offset = 0
        } else if index + 6 == bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-"),
                  bytes[index + 3] == UInt8(ascii: ":"), let hours = number(index + 1..<index + 3),
                  let minutes = number(index + 4..<index + 6), hours < 24, minutes < 60 {
            offset = Int64(hours * 3600 + minutes * 60) * (bytes[index] == UInt8(ascii: "-") ? -1 : 1)
        } else {
            throw invalid
        }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        let local = Int64(timegm(&parts))
        // timegm rolls 2027-02-30 over into March: such a date is a typo, not a time.
        guard string(local).utf8.prefix(10).elementsEqual(bytes.prefix(10)) else { throw invalid }
        return local - offset
    }

    static func now() -> Int64 {
        Int64(time(nil))
    }
}
