import XCTest
@testable import CountersignHTTP

/// Hostile bytes must only ever produce an answer, never a crash: every parser is fed
/// seeded random input, half of it mutated from valid messages so the deeper paths run.
final class ParserRobustnessTests: XCTestCase {
    private let seeds: [[UInt8]] = [
        "GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\n\r\n",
        "CONNECT [::1]:8443 HTTP/1.1\r\nHost: [::1]:8443\r\nProxy-Authorization: Basic eDp5\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nConnection: X-A, close\r\nX-A: 1\r\n\r\n",
    ].map(Wire.bytes)

    /// Bytes weighted towards the ones the grammar cares about.
    private let interesting: [UInt8] = Array("\r\n :\t,;/[]@#?%HTTP/1.0\u{0}\u{7F}".utf8) + [0x80, 0xFF]

    private func randomInput(_ rng: inout SeededGenerator) -> [UInt8] {
        if Bool.random(using: &rng) {
            var bytes = seeds.randomElement(using: &rng)!
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let index = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: bytes[index] = interesting.randomElement(using: &rng)!
                case 1: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: index)
                default: bytes.remove(at: index)
                }
                if bytes.isEmpty { break }
            }
            return bytes
        }
        let length = Int.random(in: 0...96, using: &rng)
        return (0..<length).map { _ in
            Bool.random(using: &rng) ? interesting.randomElement(using: &rng)! : UInt8.random(in: 0...255, using: &rng)
        }
    }

    func testRandomBytesNeverCrashAnyParser() {
        var rng = SeededGenerator(state: 0xC0FF_EE00_2024)
        var outcomes = (complete: 0, invalid: 0, incomplete: 0)
        for _ in 0..<20_000 {
            let input = randomInput(&rng)
            let maxHead = Int.random(in: 16...256, using: &rng)
            switch Wire.request(input, maxHeadBytes: maxHead) {
            case .complete(let head, let consumed):
                outcomes.complete += 1
                XCTAssertLessThanOrEqual(consumed, input.count)
                _ = try? BodyFraming.forRequest(head)
                _ = try? RequestTarget.parse(head.target, method: head.method)
                var headers = head.headers
                HopByHop.strip(&headers, keepUpgrade: Bool.random(using: &rng))
                let written = HeadSerializer.request(method: head.method, target: head.target, version: head.version, headers: headers)
                guard case .complete = Wire.request(written, maxHeadBytes: written.count) else {
                    return XCTFail("a serialized head must parse again: \(input)")
                }
            case .invalid: outcomes.invalid += 1
            case .incomplete: outcomes.incomplete += 1
            }
            if case .complete(let head, _) = Wire.response(input, maxHeadBytes: maxHead) {
                _ = try? BodyFraming.forResponse(head, requestMethod: Bool.random(using: &rng) ? "GET" : "HEAD")
                _ = HeadSerializer.response(head)
            }
            _ = try? RequestTarget.parse(String(decoding: input, as: UTF8.self), method: Bool.random(using: &rng) ? "CONNECT" : "GET")
            var decoder = ChunkedDecoder(maxTrailerBytes: 64)
            for line in input.split(separator: 0x0A, omittingEmptySubsequences: false) {
                guard decoder.need == .line else {
                    decoder.consumedData(UInt64(line.count))
                    continue
                }
                do {
                    _ = try Array(line).withUnsafeBytes { try decoder.consumeLine($0) }
                } catch {
                    break
                }
            }
        }
        // The mix reaches all three outcomes, so the loop exercised more than the first byte.
        XCTAssertGreaterThan(outcomes.complete, 100)
        XCTAssertGreaterThan(outcomes.invalid, 100)
        XCTAssertGreaterThan(outcomes.incomplete, 100)
    }
}
