import XCTest
@testable import CountersignTrust

/// `--at` times: RFC 3339 in UTC or with an offset, or unix seconds; anything else is refused.
final class UTCTimestampTests: XCTestCase {
    func testParsesRFC3339AndUnixSeconds() throws {
        let rows: [(String, Int64)] = [
            ("2027-01-01T00:00:00Z", 1_798_761_600), ("2027-01-01t00:00:00z", 1_798_761_600),
            ("2027-01-01T01:00:00+01:00", 1_798_761_600), ("2026-12-31T19:00:00-05:00", 1_798_761_600),
            ("2027-01-01T00:00:00.123Z", 1_798_761_600), ("1798761600", 1_798_761_600), ("0", 0),
            ("2024-02-29T12:00:00Z", 1_709_208_000),
        ]
        for (text, expected) in rows {
            XCTAssertEqual(try UTCTimestamp.parse(text), expected, text)
        }
        XCTAssertEqual(UTCTimestamp.string(try UTCTimestamp.parse("2027-01-01T00:00:00Z")), "2027-01-01T00:00:00Z")
    }

    func testRefusesWhatIsNotATime() {
        for text in ["", "tomorrow", "2027-01-01", "2027-01-01 00:00:00Z", "2027-01-01T00:00:00", "2027-13-01T00:00:00Z",
                     "2027-02-30T00:00:00Z", "2027-01-01T24:00:00Z", "2027-01-01T00:00:00+1:00", "-5", "1e9"] {
            XCTAssertThrowsError(try UTCTimestamp.parse(text), text) { error in
                XCTAssertTrue("\(error)".contains("is not a time"), "\(error)")
            }
        }
    }
}
