import Foundation
import XCTest
@testable import CountersignHTTP

/// The hpack-test-case corpus (github:http2jp/hpack-test-case, copied with its licence in
/// `hpack-test-case/`): stories encoded by eight other implementations. Every case of every
/// story is decoded in order with one decoder per story (the dynamic table carried across
/// cases), and every story is re-encoded by our encoder and decoded again.
final class HPACKTestCaseCorpusTests: XCTestCase {
    private static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("hpack-test-case")

    private struct Case {
        let tableSize: Int?
        let wire: [UInt8]
        let fields: [HPACKField]
    }

    private func stories() throws -> [(String, [Case])] {
        let manager = FileManager.default
        var result: [(String, [Case])] = []
        for implementation in try manager.contentsOfDirectory(atPath: Self.directory.path).sorted() where implementation != "LICENSE" && !implementation.hasSuffix(".md") {
            let folder = Self.directory.appendingPathComponent(implementation)
            for file in try manager.contentsOfDirectory(atPath: folder.path).sorted() where file.hasSuffix(".json") {
                let json = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(file))) as! [String: Any]
                let cases = (json["cases"] as! [[String: Any]]).map { item in
                    Case(tableSize: item["header_table_size"] as? Int,
                         wire: octets(item["wire"] as! String),
                         fields: (item["headers"] as! [[String: String]]).map { HPACKField($0.keys.first!, $0.values.first!) })
                }
                result.append(("\(implementation)/\(file)", cases))
            }
        }
        return result
    }

    func testEveryStoryDecodesToItsHeaderLists() throws {
        let all = try stories()
        XCTAssertGreaterThanOrEqual(all.count, 150, "the copied corpus is present")
        var decoded = 0
        for (name, cases) in all {
            var decoder = HPACKDecoder(maxTableSize: 4096, maxHeaderListSize: 1 << 20)
            for (seqno, item) in cases.enumerated() {
                if let size = item.tableSize { decoder.setMaxTableSizeLimit(size) }
                do {
                    let got = try decoder.decode(item.wire)
                    XCTAssertEqual(got, item.fields, "\(name) case \(seqno)")
                    decoded += 1
                } catch {
                    XCTFail("\(name) case \(seqno): \(error)")
                    break
                }
            }
        }
        print("hpack-test-case: \(all.count) stories, \(decoded) header blocks decoded")
    }

    func testEveryStoryReencodedByUsDecodesToTheSameLists() throws {
        var inputOctets = 0
        var ourOctets = 0
        for (name, cases) in try stories() {
            var encoder = HPACKEncoder(maxTableSize: 4096)
            var decoder = HPACKDecoder(maxTableSize: 4096, maxHeaderListSize: 1 << 20)
            for (seqno, item) in cases.enumerated() {
                if let size = item.tableSize {
                    decoder.setMaxTableSizeLimit(size)
                    encoder.setMaxTableSize(size)
                }
                var block: [UInt8] = []
                encoder.encode(item.fields, into: &block)
                XCTAssertEqual(try decoder.decode(block), item.fields, "\(name) case \(seqno)")
                XCTAssertEqual(decoder.dynamicTableEntries, encoder.dynamicTableEntries, "\(name) case \(seqno): tables in step")
                inputOctets += item.wire.count
                ourOctets += block.count
            }
        }
        print("hpack-test-case re-encoded: \(ourOctets) octets where the corpus has \(inputOctets)")
    }
}
