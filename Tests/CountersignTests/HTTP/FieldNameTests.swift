import XCTest
@testable import CountersignHTTP

/// The names the proxy acts on are recognised when a field is stored, and lookups by them
/// answer what a comparison of the names' bytes would.
final class FieldNameTests: XCTestCase {
    private func spelling(_ name: FieldName) -> String {
        String(decoding: UnsafeBufferPointer(start: name.spelling.utf8Start, count: name.spelling.utf8CodeUnitCount), as: UTF8.self)
    }

    func testEveryNameIsRecognisedInAnyCaseAndNoNearMissIs() {
        for name in FieldName.allCases where name != .other {
            let spelled = spelling(name)
            let lower = spelled.lowercased()
            XCTAssertEqual(FieldName(spelled), name, spelled)
            XCTAssertEqual(FieldName(lower), name, lower)
            XCTAssertEqual(FieldName(lower.uppercased()), name, lower)
            XCTAssertEqual(FieldName(String(lower.enumerated().map { $0.offset % 2 == 0 ? Character($0.element.uppercased()) : $0.element })), name)
            XCTAssertEqual(FieldName(lower + "s"), .other, "a longer name")
            XCTAssertEqual(FieldName(String(lower.dropLast())), .other, "a shorter name")
            // Each byte in turn as another letter, or as a byte that differs from a letter or
            // `-` only in the case bit (CR folds onto `-`, `@` onto a backtick, `^` onto `~`).
            let bytes = Array(lower.utf8)
            for position in bytes.indices {
                for replacement in Array("qz.@[^~".utf8) + [0x0D] where ASCIICase.lower(replacement) != ASCIICase.lower(bytes[position]) {
                    var changed = bytes
                    changed[position] = replacement
                    XCTAssertEqual(FieldName(String(decoding: changed, as: UTF8.self)), .other, "\(lower) with byte \(position) as \(replacement)")
                }
            }
        }
        XCTAssertEqual(FieldName("Server"), .other, "as long as Expect")
        XCTAssertEqual(FieldName("Last-Modified"), .other, "as long as Authorization")
        XCTAssertEqual(FieldName(""), .other)
    }

    /// Lookups by `FieldName` and by text agree on parsed, appended, replaced and removed fields.
    func testLookupsByNameFollowTheFieldsAsTheyChange() throws {
        let head = try XCTUnwrap(acceptRequest("GET / HTTP/1.1\r\nHOST: a\r\nx-one: 1\r\ncontent-length: 3\r\nConnection: close\r\nConnection: te\r\n\r\n"))
        var fields = head.headers
        XCTAssertEqual(fields.firstIndex(.host), 0)
        XCTAssertEqual(fields.firstIndex(.contentLength), 2)
        XCTAssertEqual(fields.firstIndex(.connection, from: 4), 4)
        XCTAssertEqual(fields.count(of: .connection), 2)
        XCTAssertFalse(fields.contains(.transferEncoding))
        XCTAssertTrue(fields.listContains(.connection, token: "TE"))
        XCTAssertEqual(fields.firstIndex(named: "X-ONE"), 1)

        fields.append("Transfer-Encoding", "chunked")
        XCTAssertEqual(fields.firstIndex(.transferEncoding), 5)
        fields.removeAll("connection")
        XCTAssertFalse(fields.contains(.connection))
        XCTAssertEqual(fields.count(of: "Connection"), 0)
        XCTAssertEqual(fields.firstIndex(.transferEncoding), 3, "the slots moved up")
        fields.replaceOrAppend("Content-Length", "4")
        XCTAssertEqual(fields["CONTENT-LENGTH"], "4")
        XCTAssertEqual(fields.firstIndex(.contentLength), 2)
        fields.removeAll("x-one")
        XCTAssertNil(fields.firstIndex(named: "x-one"))
        XCTAssertEqual(fields.fields.map(\.name), ["HOST", "content-length", "Transfer-Encoding"])
    }
}
