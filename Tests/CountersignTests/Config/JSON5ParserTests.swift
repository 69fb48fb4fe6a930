import XCTest
@testable import CountersignConfig

final class JSON5ParserTests: XCTestCase {
    private func parse(_ text: String) throws -> JSON5Node { try JSON5Parser.parse(text) }

    private func syntaxError(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> JSON5SyntaxError? {
        do {
            _ = try parse(text)
            XCTFail("expected a syntax error", file: file, line: line)
        } catch let error as JSON5SyntaxError {
            return error
        } catch {
            XCTFail("unexpected \(error)", file: file, line: line)
        }
        return nil
    }

    private func object(_ node: JSON5Node) -> [String: JSON5Node] {
        guard case .object(let members) = node.value else { return [:] }
        return Dictionary(uniqueKeysWithValues: members.map { ($0.key, $0.value) })
    }

    private func string(_ node: JSON5Node?) -> String? {
        if case .string(let s)? = node?.value { return s }
        return nil
    }

    private func number(_ node: JSON5Node?) -> JSON5Number? {
        if case .number(let n)? = node?.value { return n }
        return nil
    }

    func testCommentsTrailingCommasAndUnquotedKeys() throws {
        let root = try parse("""
        // leading comment
        {
          a: 1, /* inline */ 'b': [true, false, null,],
          "c": { $d_1: 'x', },
        }
        """)
        let members = object(root)
        XCTAssertEqual(Set(members.keys), ["a", "b", "c"])
        XCTAssertEqual(number(members["a"])?.integer, 1)
        guard case .array(let b)? = members["b"]?.value else { return XCTFail("b is not an array") }
        XCTAssertEqual(b.count, 3)
        guard case .bool(true) = b[0].value, case .bool(false) = b[1].value, case .null = b[2].value else {
            return XCTFail("wrong literals")
        }
        XCTAssertEqual(string(object(members["c"]!)["$d_1"]), "x")
    }

    func testEveryValueRemembersItsLineAndColumn() throws {
        let root = try parse("{\n  key: [\n    \"v\",\n  ],\n}")
        XCTAssertEqual(root.position, SourcePosition(line: 1, column: 1))
        guard case .object(let members) = root.value, case .array(let elements) = members[0].value.value else {
            return XCTFail("unexpected shape")
        }
        XCTAssertEqual(members[0].keyPosition, SourcePosition(line: 2, column: 3))
        XCTAssertEqual(members[0].value.position, SourcePosition(line: 2, column: 8))
        XCTAssertEqual(elements[0].position, SourcePosition(line: 3, column: 5))
    }

    func testCRLFCountsAsOneLine() throws {
        let root = try parse("{\r\n\r\n  a: 1 }")
        guard case .object(let members) = root.value else { return XCTFail() }
        XCTAssertEqual(members[0].keyPosition.line, 3)
    }

    func testStringEscapes() throws {
        let root = try parse(#"['a\\b\n\t\"\'\u00e9\x41\0', "line \\#ncontinued", "\uD83D\uDE00", '\q']"#)
        guard case .array(let items) = root.value else { return XCTFail() }
        XCTAssertEqual(string(items[0]), "a\\b\n\t\"'éA\u{0}")
        XCTAssertEqual(string(items[1]), "line continued")
        XCTAssertEqual(string(items[2]), "😀")
        XCTAssertEqual(string(items[3]), "q")
    }

    func testNumbers() throws {
        let root = try parse("[42, -7, +3, 0x1F, -0xA, 1.5, .5, 5., 1e3, 2.5E-1, 0]")
        guard case .array(let items) = root.value else { return XCTFail() }
        let values = items.compactMap { number($0) }
        XCTAssertEqual(values.map(\.value), [42, -7, 3, 31, -10, 1.5, 0.5, 5, 1000, 0.25, 0])
        XCTAssertEqual(values.map(\.integer), [42, -7, 3, 31, -10, nil, nil, nil, nil, nil, 0])
    }

    func testInfinityAndNaNAreRefusedClearly() {
        XCTAssertTrue(syntaxError("{ a: Infinity }")?.message.contains("Infinity is not accepted") ?? false)
        XCTAssertTrue(syntaxError("[-NaN]")?.message.contains("NaN is not accepted") ?? false)
    }

    func testMissingCommaNamesLineColumnAndExpectation() {
        let error = syntaxError("{\n  a: 1\n  b: 2\n}")
        XCTAssertEqual(error?.position, SourcePosition(line: 3, column: 3))
        XCTAssertEqual(error?.message, "expected ',' or '}' after the value of \"a\", found 'b'")
    }

    func testDuplicateKeysAreAnError() {
        let error = syntaxError("{\n  listen: [],\n  'listen': [],\n}")
        XCTAssertEqual(error?.position, SourcePosition(line: 3, column: 3))
        XCTAssertEqual(error?.message, "duplicate key \"listen\" (first given at line 2); keep only one")
    }

    func testUnterminatedStringAndComment() {
        let string = syntaxError("{ a: \"abc\n }")
        XCTAssertEqual(string?.position, SourcePosition(line: 1, column: 10))
        XCTAssertTrue(string?.message.contains("before the end of the line") ?? false)
        let comment = syntaxError("{ /* never closed }")
        XCTAssertEqual(comment?.position, SourcePosition(line: 1, column: 3))
        XCTAssertTrue(comment?.message.contains("comment is not closed") ?? false)
    }

    func testUnquotedValuesAndUnitsNeedQuotes() {
        XCTAssertEqual(syntaxError("{ level: info }")?.message,
                       "expected a value, found the bare word 'info' (strings need quotes)")
        XCTAssertTrue(syntaxError("{ t: 10s }")?.message.contains("need quotes") ?? false)
    }

    func testLeadingZerosAndOctalEscapesAreRefused() {
        XCTAssertTrue(syntaxError("[012]")?.message.contains("may not start with 0") ?? false)
        XCTAssertTrue(syntaxError(#"["\01"]"#)?.message.contains("octal") ?? false)
    }

    func testTrailingGarbageAndEmptyInput() {
        XCTAssertEqual(syntaxError("{} x")?.position, SourcePosition(line: 1, column: 4))
        XCTAssertEqual(syntaxError("  // only a comment\n")?.message, "expected a value, found the end of the file")
    }

    func testBadUnicodeEscape() {
        XCTAssertTrue(syntaxError(#"["\u12G4"]"#)?.message.contains("expected 4 hex digits after \\u") ?? false)
    }
}
