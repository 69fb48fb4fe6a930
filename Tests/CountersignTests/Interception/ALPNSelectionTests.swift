import XCTest
@testable import CountersignInterception

final class ALPNSelectionTests: XCTestCase {
    private func wire(_ names: [String]) -> [UInt8] {
        names.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
    }

    private func choose(_ list: [UInt8]) -> String? {
        list.withUnsafeBufferPointer { buffer in
            ALPNSelection.http11Range(inClientList: buffer).map { String(decoding: list[$0], as: UTF8.self) }
        }
    }

    func testPicksHTTP11EvenWhenTheClientPrefersH2() {
        XCTAssertEqual(choose(wire(["h2", "http/1.1"])), "http/1.1")
    }

    func testDeclinesAClientOfferingOnlyH2() {
        XCTAssertNil(choose(wire(["h2"])))
        XCTAssertNil(choose(wire(["http/1.0", "spdy/3"])))
    }

    func testDeclinesAMalformedList() {
        XCTAssertNil(choose([9] + Array("http/1.1".utf8)), "length runs past the end")
        XCTAssertNil(choose([0, 8] + Array("http/1.1".utf8)), "empty names are not allowed")
    }
}
