/// The two renderings of the signing time SigV4 uses: `20150830T123600Z` (`X-Amz-Date`) and its
/// first eight characters (the credential scope's date). Computed from Unix seconds in UTC by
/// the civil-from-days algorithm, so no calendar, locale or time-zone database is involved.
public struct AWSTimestamp: Equatable, Sendable {
    /// `YYYYMMDD'T'HHMMSS'Z'`.
    public let amzDate: String

    public var date: Substring { amzDate.prefix(8) }

    public init(unixSeconds: Int64) {
        let days = unixSeconds >= 0 ? unixSeconds / 86_400 : (unixSeconds - 86_399) / 86_400
        let secondOfDay = unixSeconds - days * 86_400
        // Howard Hinnant's days-to-civil: eras of 400 years starting 0000-03-01.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        amzDate = Self.digits(year, 4) + Self.digits(month, 2) + Self.digits(day, 2) + "T"
            + Self.digits(secondOfDay / 3600, 2) + Self.digits(secondOfDay / 60 % 60, 2) + Self.digits(secondOfDay % 60, 2) + "Z"
    }

    private static func digits(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
