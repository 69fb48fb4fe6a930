/// Parses the RFC 3339 times limbo uses ("2024-03-01T00:00:00.999+00:00", "...Z") into whole
/// seconds since 1970, flooring fractions: a certificate valid from 00:00:01 is not yet valid
/// at 00:00:00.999 (limbo's rfc5280::validity::notbefore-fractional).
enum RFC3339 {
    static func seconds(_ text: String) -> Int64? {
        let characters = Array(text.utf8)
        func number(_ start: Int, _ count: Int) -> Int64? {
            guard start + count <= characters.count else { return nil }
            var value: Int64 = 0
            for byte in characters[start..<start + count] {
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            return value
        }
        guard characters.count >= 20, characters[4] == UInt8(ascii: "-"), characters[7] == UInt8(ascii: "-"),
              characters[10] == UInt8(ascii: "T") || characters[10] == UInt8(ascii: "t"),
              characters[13] == UInt8(ascii: ":"), characters[16] == UInt8(ascii: ":"),
              let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else {
            return nil
        }
        var index = 19
        if characters[index] == UInt8(ascii: ".") {
            index += 1
            while index < characters.count, characters[index] >= 48, characters[index] <= 57 { index += 1 }
        }
        guard index < characters.count else { return nil }
        var offset: Int64 = 0
        switch characters[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard index + 1 == characters.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 == characters.count, characters[index + 3] == UInt8(ascii: ":"),
                  let hours = number(index + 1, 2), let minutes = number(index + 4, 2) else { return nil }
            offset = (hours * 3600 + minutes * 60) * (characters[index] == UInt8(ascii: "+") ? 1 : -1)
        default:
            return nil
        }
        return daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(_ year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
