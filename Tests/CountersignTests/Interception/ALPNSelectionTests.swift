import XCTest
@testable import CountersignInterception

final class ALPNSelectionTests: XCTestCase {
    private func wire(_ names: [String]) -> [UInt8] {
        names.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
    }

    private func choose(_ list: [UInt8], allowH2: Bool = false) -> String? {
        list.withUnsafeBufferPointer { buffer in
            ALPNSelection.choice(inClientList: buffer, allowH2: allowH2).map { String(decoding: list[$0], as: UTF8.self) }
        }
    }

    func testPicksH2WhenTheHostAllowsItWhateverTheClientsOrder() {
        XCTAssertEqual(choose(wire(["h2", "http/1.1"]), allowH2: true), "h2")
        XCTAssertEqual(choose(wire(["http/1.1", "h2"]), allowH2: true), "h2")
        XCTAssertEqual(choose(wire(["h2"]), allowH2: true), "h2")
    }

    func testPicksHTTP11WhenTheHostDisallowsH2() {
        XCTAssertEqual(choose(wire(["h2", "http/1.1"])), "http/1.1")
        XCTAssertEqual(choose(wire(["http/1.1"]), allowH2: true), "http/1.1")
    }

    func testDeclinesAClientOfferingNothingWeSpeak() {
        XCTAssertNil(choose(wire(["h2"])), "h2 only, toward a host with http2 false")
        XCTAssertNil(choose(wire(["http/1.0", "spdy/3"]), allowH2: true))
        XCTAssertNil(choose(wire(["h2c"]), allowH2: true), "no h2c")
    }

    func testDeclinesAMalformedList() {
        XCTAssertNil(choose([9] + Array("http/1.1".utf8)), "length runs past the end")
        XCTAssertNil(choose([0, 8] + Array("http/1.1".utf8)), "empty names are not allowed")
        XCTAssertNil(choose([3] + Array("h2".utf8), allowH2: true), "length runs past the end")
    }
}
