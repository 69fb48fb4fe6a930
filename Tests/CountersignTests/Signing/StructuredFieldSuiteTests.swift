import Foundation
import XCTest
@testable import CountersignSigning

/// Every case of the HTTP WG's structured-field-tests (copied in `structured-field-tests/`):
/// parse `raw`, compare with `expected`, serialize, compare with `canonical`; a `must_fail`
/// case must be refused; a `can_fail` case may go either way but must not crash.
final class StructuredFieldSuiteTests: XCTestCase {
    private static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("structured-field-tests")

    func testEveryParsingCaseOfTheSuite() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.directory.path).filter { $0.hasSuffix(".json") }.sorted()
        XCTAssertGreaterThanOrEqual(files.count, 20, "the suite's files are there")
        var counts = (passed: 0, mustFail: 0, canFail: 0)
        for file in files {
            for test in try cases(in: Self.directory.appendingPathComponent(file)) {
                let name = "\(file): \(test["name"] as? String ?? "?")"
                let raw = try XCTUnwrap(test["raw"] as? [String], name)
                let type = try XCTUnwrap(StructuredFieldType(rawValue: try XCTUnwrap(test["header_type"] as? String)), name)
                let parsed = try? StructuredFieldParser.parse(raw.joined(separator: ", "), as: type)
                if test["must_fail"] as? Bool == true {
                    XCTAssertNil(parsed, "\(name) must fail")
                    counts.mustFail += 1
                    continue
                }
                guard let parsed else {
                    XCTAssertTrue(test["can_fail"] as? Bool == true, "\(name) did not parse")
                    counts.canFail += 1
                    continue
                }
                let expected = try XCTUnwrap(test["expected"], name)
                XCTAssertTrue(SuiteJSON.matches(parsed, expected), "\(name): parsed \(parsed), expected \(expected)")
                let canonical = (test["canonical"] as? [String]) ?? raw
                let serialized = try StructuredFieldSerializer.serialize(parsed)
                XCTAssertEqual(serialized, canonical.first ?? "", name)
                counts.passed += 1
            }
        }
        XCTAssertGreaterThan(counts.passed, 700)
        XCTAssertGreaterThan(counts.mustFail, 800)
        print("structured-field-tests: \(counts.passed) parsed and serialized, \(counts.mustFail) refused as required, \(counts.canFail) may-fail refused")
    }

    func testEverySerialisationCaseOfTheSuite() throws {
        let directory = Self.directory.appendingPathComponent("serialisation-tests")
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path).filter({ $0.hasSuffix(".json") }).sorted() {
            for test in try cases(in: directory.appendingPathComponent(file)) {
                let name = "\(file): \(test["name"] as? String ?? "?")"
                let type = try XCTUnwrap(StructuredFieldType(rawValue: try XCTUnwrap(test["header_type"] as? String)), name)
                guard let value = SuiteJSON.value(test["expected"] as Any, as: type) else {
                    // Values our model cannot even hold (a non-integral number of thousandths) are not serializable either.
                    XCTAssertTrue(test["must_fail"] as? Bool == true || test["canonical"] != nil, "\(name): expected value not representable")
                    continue
                }
                let serialized = try? StructuredFieldSerializer.serialize(value)
                if test["must_fail"] as? Bool == true {
                    XCTAssertNil(serialized, "\(name) must not serialize")
                } else {
                    XCTAssertEqual(serialized, (test["canonical"] as? [String])?.first, name)
                }
            }
        }
    }

    private func cases(in file: URL) throws -> [[String: Any]] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [[String: Any]], file.lastPathComponent)
    }
}

/// The suite's JSON form of values (its README), both ways.
enum SuiteJSON {
    static func matches(_ value: StructuredFieldValue, _ json: Any) -> Bool {
        switch value {
        case .item(let item): return matches(item, json)
        case .list(let list):
            guard let array = json as? [Any], array.count == list.count else { return false }
            return zip(list, array).allSatisfy { matches($0, $1) }
        case .dictionary(let dictionary):
            guard let array = json as? [[Any]], array.count == dictionary.entries.count else { return false }
            return zip(dictionary.entries, array).allSatisfy { entry, pair in pair.count == 2 && pair[0] as? String == entry.key && matches(entry.value, pair[1]) }
        }
    }

    static func matches(_ member: StructuredMember, _ json: Any) -> Bool {
        switch member {
        case .item(let item): return matches(item, json)
        case .innerList(let list):
            guard let pair = json as? [Any], pair.count == 2, let items = pair[0] as? [Any], items.count == list.items.count else { return false }
            return zip(list.items, items).allSatisfy { matches($0, $1) } && matches(list.parameters, pair[1])
        }
    }

    static func matches(_ item: StructuredItem, _ json: Any) -> Bool {
        guard let pair = json as? [Any], pair.count == 2 else { return false }
        return value(bare: pair[0]) == item.bare && matches(item.parameters, pair[1])
    }

    static func matches(_ parameters: StructuredParameters, _ json: Any) -> Bool {
        guard let array = json as? [[Any]], array.count == parameters.entries.count else { return false }
        return zip(parameters.entries, array).allSatisfy { entry, pair in pair.count == 2 && pair[0] as? String == entry.key && value(bare: pair[1]) == entry.value }
    }

    static func value(_ json: Any, as type: StructuredFieldType) -> StructuredFieldValue? {
        switch type {
        case .item: return item(json).map { .item($0) }
        case .list:
            guard let array = json as? [Any] else { return nil }
            let members = array.compactMap(member)
            return members.count == array.count ? .list(members) : nil
        case .dictionary:
            guard let array = json as? [[Any]] else { return nil }
            var dictionary = StructuredDictionary()
            for pair in array {
                guard pair.count == 2, let key = pair[0] as? String, let member = member(pair[1]) else { return nil }
                dictionary[key] = member
            }
            return .dictionary(dictionary)
        }
    }

    static func member(_ json: Any) -> StructuredMember? {
        if let pair = json as? [Any], pair.count == 2, let items = pair[0] as? [Any] {
            let parsed = items.compactMap(item)
            guard parsed.count == items.count, let parameters = parameters(pair[1]) else { return nil }
            return .innerList(StructuredInnerList(parsed, parameters: parameters))
        }
        return item(json).map { .item($0) }
    }

    static func item(_ json: Any) -> StructuredItem? {
        guard let pair = json as? [Any], pair.count == 2, let bare = value(bare: pair[0]), let parameters = parameters(pair[1]) else { return nil }
        return StructuredItem(bare, parameters: parameters)
    }

    static func parameters(_ json: Any) -> StructuredParameters? {
        guard let array = json as? [[Any]] else { return nil }
        var parameters = StructuredParameters()
        for pair in array {
            guard pair.count == 2, let key = pair[0] as? String, let bare = value(bare: pair[1]) else { return nil }
            parameters[key] = bare
        }
        return parameters
    }

    static func value(bare json: Any) -> StructuredBareItem? {
        if let typed = json as? [String: Any], let type = typed["__type"] as? String {
            switch type {
            case "token": return (typed["value"] as? String).map { .token($0) }
            case "binary": return (typed["value"] as? String).flatMap(Base32.decode).map { .byteSequence($0) }
            case "date": return (typed["value"] as? NSNumber).map { .date($0.int64Value) }
            case "displaystring": return (typed["value"] as? String).map { .displayString($0) }
            default: return nil
            }
        }
        if let text = json as? String { return .string(text) }
        guard let number = json as? NSNumber else { return nil }
        let kind = String(cString: number.objCType)
        if kind == "c" { return .boolean(number.boolValue) }
        if kind != "d" && kind != "f" { return .integer(number.int64Value) }
        let thousandths = (number.doubleValue * 1000).rounded()
        guard abs(number.doubleValue * 1000 - thousandths) < 1e-6, abs(thousandths) < 9e18 else { return nil }
        return .decimal(thousandths: Int64(thousandths))
    }
}

/// RFC 4648 §6 base32, only for reading the suite's `binary` values.
enum Base32 {
    static func decode(_ text: String) -> [UInt8]? {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
        var bits = 0, buffer = 0
        var output: [UInt8] = []
        for byte in text.utf8 where byte != UInt8(ascii: "=") {
            guard let value = alphabet.firstIndex(of: byte) else { return nil }
            buffer = buffer << 5 | value
            bits += 5
            if bits >= 8 {
                bits -= 8
                output.append(UInt8((buffer >> bits) & 0xFF))
            }
        }
        return output
    }
}
