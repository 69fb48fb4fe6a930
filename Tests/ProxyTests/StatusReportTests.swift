import Foundation
import XCTest
@testable import CountersignProxy
@testable import CountersignConfig

/// The status page's urgency levels and the bound on the per-host table.
final class StatusReportTests: XCTestCase {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    private func expiry(inDays days: Double) -> StatusReport.CertificateExpiry {
        StatusReport.CertificateExpiry(kind: .served, name: "x", subject: "CN=x", notAfter: Int64(now.timeIntervalSince1970 + days * 86400), now: now)
    }

    func testAmberUnderThirtyDaysRedUnderSevenOrExpired() {
        XCTAssertEqual(expiry(inDays: 400).level, .ok)
        XCTAssertEqual(expiry(inDays: 30).level, .ok)
        XCTAssertEqual(expiry(inDays: 29.9).level, .amber)
        XCTAssertEqual(expiry(inDays: 7).level, .amber)
        XCTAssertEqual(expiry(inDays: 6.9).level, .red)
        XCTAssertEqual(expiry(inDays: -1).level, .red)
        XCTAssertEqual(expiry(inDays: 6.9).daysLeft, 6)
        XCTAssertEqual(expiry(inDays: -0.5).daysLeft, -1, "an expired certificate has negative days left")
    }

    func testUnlistedHostsShareOneRow() {
        let hosts = HostTable([HostConfig(pattern: "api.example"), HostConfig(pattern: "*.corp.example")])
        XCTAssertEqual(Observations.row(host: "api.example", port: 443, in: hosts), "api.example")
        XCTAssertEqual(Observations.row(host: "a.b.corp.example", port: 80, in: hosts), "*.corp.example")
        XCTAssertEqual(Observations.row(host: "evil-1.example", port: 443, in: hosts), Observations.otherRow)
        XCTAssertEqual(Observations.row(host: "api.example", port: 70000, in: hosts), Observations.otherRow)
    }

    func testRefusalsKeepTheLastFiftyNewestFirst() {
        let observations = Observations()
        for index in 0..<120 { observations.refused(host: "h\(index)", status: 403, type: "http_request_denied", details: "d") }
        XCTAssertEqual(observations.refusals.count, 50)
        XCTAssertEqual(observations.refusals.first?.host, "h119")
        XCTAssertEqual(observations.refusals.last?.host, "h70")
    }

    /// The row touched last is remembered by name and place: counts must still land in their
    /// own rows when hosts alternate, when rows are added (the table grows and rehashes) and
    /// after a reload drops rows and one comes back.
    func testExchangesAreCountedInTheirOwnRowsAsRowsComeAndGo() {
        let observations = Observations()
        observations.exchange(row: "a.example", errorType: nil)
        observations.exchange(row: "a.example", errorType: nil)
        for index in 0..<40 { observations.exchange(row: "h\(index).example", errorType: nil) }
        observations.exchange(row: "a.example", errorType: "http_request_denied")
        // A /status read holds a copy of the table: the next count (of the row remembered)
        // copies it on write, and must land in the copy the table now is.
        let seen = observations.rows
        observations.exchange(row: "a.example", errorType: nil)
        XCTAssertEqual(seen["a.example"]?.requests, 3, "a copy read before is not changed by later counts")
        observations.exchange(row: "h3.example", errorType: nil)
        XCTAssertEqual(observations.rows["a.example"]?.requests, 4)
        XCTAssertEqual(observations.rows["a.example"]?.errors, ["http_request_denied": 1])
        XCTAssertEqual(observations.rows["h3.example"]?.requests, 2)
        XCTAssertEqual(observations.rows["h39.example"]?.requests, 1)

        observations.retain(patterns: ["h3.example"])
        observations.exchange(row: "h3.example", errorType: nil)
        observations.exchange(row: "a.example", errorType: nil)
        XCTAssertEqual(observations.rows["a.example"]?.requests, 1, "a dropped row starts again from nothing")
        XCTAssertEqual(observations.rows["h3.example"]?.requests, 3)
        XCTAssertNil(observations.rows["h39.example"])
        XCTAssertEqual(observations.rows.values.map(\.requests).reduce(0, +), 4)
    }

    func testRefreshIsTakenOnlyWithinBounds() {
        XCTAssertEqual(StatusPage.refreshSeconds(query: "refresh=5"), 5)
        XCTAssertEqual(StatusPage.refreshSeconds(query: "a=1&refresh=60"), 60)
        XCTAssertNil(StatusPage.refreshSeconds(query: "refresh=0"))
        XCTAssertNil(StatusPage.refreshSeconds(query: "refresh=3601"))
        XCTAssertNil(StatusPage.refreshSeconds(query: "refresh=5;url=javascript:alert(1)"))
        XCTAssertNil(StatusPage.refreshSeconds(query: nil))
    }
}
