import Foundation
import XCTest
@testable import CountersignProxy
@testable import CountersignLog

/// A client connection reuses its access record from one exchange to the next: the next
/// exchange's line must say only what that exchange did, and what the last one said of its
/// request (a target's query, auth notes, placeholder and token names) must not stay behind.
final class AccessRecordTests: XCTestCase {
    private func accessLines(_ body: (Logger) -> Void) throws -> [[String: Any]] {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let logger = Logger(fd: fds[1])
        body(logger)
        close(fds[1])
        let data = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true).readDataToEndOfFile()
        return try String(decoding: data, as: UTF8.self).split(separator: "\n").map { line in
            var object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            // The only facts that differ between two records made a moment apart.
            object["time"] = nil
            object["duration_ms"] = nil
            return object
        }
    }

    /// A record with every fact an exchange can set, as a busy one leaves it.
    private func fill(_ record: AccessRecord) {
        record.clientProtocol = .http2
        record.scheme = "https"
        record.method = "POST"
        record.host = "api.example"
        record.port = 443
        record.target = "/v1/items?token=s3cret-query"
        record.status = 502
        record.upstreamStatus = 401
        record.auth = "proxy:alice"
        record.authFallback = "kerberos: no ticket"
        record.placeholders = "api-key"
        record.injectedTokens = (["oauth-app"], Date())
        record.signed = true
        record.verified = true
        record.bytesIn = 10
        record.bytesOut = 20
        record.error = "http_protocol_error"
        record.errorDetails = "upstream said s3cret-detail"
    }

    func testARestartedRecordLogsExactlyWhatANewOneDoes() throws {
        let lines = try accessLines { logger in
            let reused = AccessRecord(client: PeerAddress(nil))
            fill(reused)
            reused.write(to: logger)
            reused.clear()
            reused.restart()
            reused.method = "GET"
            reused.write(to: logger)

            let fresh = AccessRecord(client: PeerAddress(nil))
            fresh.method = "GET"
            fresh.write(to: logger)
        }
        XCTAssertEqual(lines.count, 3)
        XCTAssertEqual(lines[0]["path"] as? String, "/v1/items?…", "the query is never logged")
        XCTAssertEqual(NSDictionary(dictionary: lines[1]), NSDictionary(dictionary: lines[2]),
                       "the second exchange's line carries nothing of the first's")
    }

    func testClearingLeavesNothingOfTheRequest() {
        let record = AccessRecord(client: PeerAddress(nil))
        fill(record)
        record.write(to: Logger(fd: -1))
        record.clear()
        XCTAssertEqual(record.target, "-")
        XCTAssertEqual(record.host, "-")
        XCTAssertNil(record.auth)
        XCTAssertNil(record.authFallback)
        XCTAssertNil(record.placeholders)
        XCTAssertNil(record.injectedTokens)
        XCTAssertNil(record.errorDetails)
    }
}
