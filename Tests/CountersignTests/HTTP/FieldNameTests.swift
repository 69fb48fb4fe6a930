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

    /// Recognition reads names a word (or two overlapping halves) at a time: every byte value
    /// at every position of every name (and of names one byte shorter or longer) gets the
    /// answer a byte-by-byte comparison ignoring ASCII case gives.
    func testRecognitionAgreesWithAByteByByteComparison() {
        let spellings = FieldName.allCases.filter { $0 != .other }.map { Array(spelling($0).utf8) }
        func byDefinition(_ bytes: [UInt8]) -> FieldName {
            for name in FieldName.allCases where name != .other {
                let spelled = Array(spelling(name).utf8)
                if spelled.count == bytes.count, zip(spelled, bytes).allSatisfy({ ASCIICase.lower($0) == ASCIICase.lower($1) }) { return name }
            }
            return .other
        }
        for spelled in spellings {
            for variant in [spelled, spelled + [UInt8(ascii: "x")], Array(spelled.dropLast()), Array(spelled.dropFirst())] {
                for position in variant.indices {
                    for value in 0...255 {
                        var bytes = variant
                        bytes[position] = UInt8(value)
                        let recognised = bytes.withUnsafeBufferPointer { FieldName($0) }
                        XCTAssertEqual(recognised, byDefinition(bytes), "\(bytes) (from \(String(decoding: spelled, as: UTF8.self)))")
                    }
                }
            }
        }
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
