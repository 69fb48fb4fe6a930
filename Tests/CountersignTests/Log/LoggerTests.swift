import Foundation
import XCTest
@testable import CountersignLog

/// What an operator's log pipeline reads: one JSON object per line, every value a JSON
/// parser gives back exactly as logged, whatever the value held.
final class LoggerTests: XCTestCase {
    private func loggedLines(_ body: (Logger) -> Void) throws -> [String] {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let logger = Logger(fd: fds[1])
        body(logger)
        close(fds[1])
        let data = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true).readDataToEndOfFile()
        let text = try XCTUnwrap(String(data: data, encoding: .utf8))
        return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    func testAccessLineIsOneJSONObjectWithEveryValueIntact() throws {
        let awkward = "quote \" backslash \\ newline \n return \r tab \t bell \u{07} del \u{7F} é 🔐"
        let lines = try loggedLines { logger in
            logger.access([("host", .string(awkward)), ("status", .int(407)), ("ms", .double(1.5)), ("tls", .bool(true))])
        }
        XCTAssertEqual(lines.count, 2, "one line and the newline that ends it")
        XCTAssertEqual(lines.last, "")
        XCTAssertFalse(lines[0].contains("\u{07}") || lines[0].contains("\u{7F}"), "control characters are escaped")
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        XCTAssertEqual(object["msg"] as? String, "access")
        XCTAssertEqual(object["level"] as? String, "info")
        XCTAssertEqual(object["host"] as? String, awkward)
        XCTAssertEqual(object["status"] as? Int, 407)
        XCTAssertEqual(object["ms"] as? Double, 1.5)
        XCTAssertEqual(object["tls"] as? Bool, true)
        let time = try XCTUnwrap(object["time"] as? String)
        XCTAssertNotNil(time.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"#, options: .regularExpression), time)
        let parsed = try XCTUnwrap(ISO8601DateFormatter.withFractionalSeconds.date(from: time))
        XCTAssertLessThan(abs(parsed.timeIntervalSinceNow), 60, "the timestamp is now, in UTC")
    }

    func testLinesBelowTheLevelAndDisabledAccessAreNotWritten() throws {
        let lines = try loggedLines { logger in
            logger.configure(level: .warn, format: .json, access: false)
            logger.info("not written")
            logger.access([("host", "example")])
            logger.warn("written", [("n", 1)])
        }
        XCTAssertEqual(lines.count, 2)
        XCTAssertTrue(lines[0].contains(#""msg":"written""#), lines[0])
        XCTAssertTrue(lines[0].hasSuffix(#","n":1}"#), lines[0])
    }

    func testTextFormatIsKeyEqualsValue() throws {
        let lines = try loggedLines { logger in
            logger.configure(level: .info, format: .text, access: true)
            logger.info("started", [("port", 3128)])
        }
        XCTAssertNotNil(lines[0].range(of: #"^\d{4}-\d{2}-\d{2}T[\d:.]+Z info started port=3128$"#, options: .regularExpression), lines[0])
    }
}

private extension ISO8601DateFormatter {
    static var withFractionalSeconds: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
