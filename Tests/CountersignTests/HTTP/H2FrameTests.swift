import XCTest
@testable import CountersignHTTP

/// The frame reader and writer (RFC 9113 §4, §6): every type written then read back, fed one
/// octet at a time, and each rule a frame alone can break.
final class H2FrameTests: XCTestCase {
    /// A frame header and payload as a peer would send them, flags and reserved bit included.
    static func raw(type: UInt8, flags: UInt8 = 0, stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
        [UInt8(payload.count >> 16 & 0xFF), UInt8(payload.count >> 8 & 0xFF), UInt8(payload.count & 0xFF), type, flags,
         UInt8(stream >> 24 & 0xFF), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF)] + payload
    }

    private func read(_ bytes: [UInt8], maxFrameSize: Int = 16384) throws -> [H2Frame] {
        var reader = H2FrameReader(maxFrameSize: maxFrameSize, expectingPreface: false)
        reader.append(bytes)
        var frames: [H2Frame] = []
        while let frame = try reader.next() { frames.append(frame) }
        return frames
    }

    private func failure(_ bytes: [UInt8], maxFrameSize: Int = 16384) -> H2Failure? {
        do { _ = try read(bytes, maxFrameSize: maxFrameSize); return nil } catch { return error as? H2Failure }
    }

    private func code(_ failure: H2Failure?) -> H2ErrorCode? {
        switch failure {
        case .connection(let code, _)?: return code
        case .stream(_, let code, _)?: return code
        case nil: return nil
        }
    }

    private let everyType: [H2Frame] = [
        .data(stream: 1, data: Array("hello".utf8), endStream: true),
        .data(stream: 3, data: Array("padded".utf8), endStream: false, padding: 7),
        .headers(stream: 5, fragment: [0x82, 0x86], endStream: true, endHeaders: true),
        .headers(stream: 7, fragment: [0x82], endStream: false, endHeaders: false, priority: H2Priority(exclusive: true, dependency: 5, weight: 200), padding: 3),
        .priority(stream: 9, H2Priority(exclusive: false, dependency: 1, weight: 0)),
        .rstStream(stream: 1, .cancel),
        .rstStream(stream: 1, H2ErrorCode(rawValue: 0xABCD)),
        .settings(ack: false, [H2Setting(H2Setting.initialWindowSize, 1), H2Setting(0xFF01, 9)]),
        .settings(ack: true, []),
        .pushPromise(stream: 1, promised: 2, fragment: [0x88], endHeaders: true),
        .ping(ack: false, opaque: 0x0102_0304_0506_0708),
        .ping(ack: true, opaque: 42),
        .goaway(lastStream: 7, .enhanceYourCalm, debug: Array("calm".utf8)),
        .windowUpdate(stream: 0, increment: 0x7FFF_FFFF),
        .continuation(stream: 7, fragment: [0x84], endHeaders: true),
    ]

    func testEveryFrameTypeRoundTrips() throws {
        var bytes: [UInt8] = []
        for frame in everyType { H2FrameWriter.write(frame, into: &bytes) }
        XCTAssertEqual(try read(bytes), everyType)
    }

    func testFramesArriveOneOctetAtATime() throws {
        var bytes = H2FrameReader.clientPreface
        for frame in everyType { H2FrameWriter.write(frame, into: &bytes) }
        var reader = H2FrameReader(expectingPreface: true)
        var frames: [H2Frame] = []
        for byte in bytes {
            reader.append([byte])
            while let frame = try reader.next() { frames.append(frame) }
        }
        XCTAssertEqual(frames, everyType)
        XCTAssertEqual(reader.bufferedCount, 0)
    }

    /// Once every frame is read the reader holds no storage: an idle connection costs no buffer.
    func testAReaderThatReadEverythingHoldsNoBuffer() throws {
        var reader = H2FrameReader(expectingPreface: false)
        reader.append(Self.raw(type: 0, stream: 1, [UInt8](repeating: 0, count: 16384)))
        XCTAssertNotNil(try reader.next())
        XCTAssertNil(try reader.next())
        XCTAssertEqual(reader.heldCapacity, 0)
    }

    func testPaddingCountsAgainstFlowControl() {
        XCTAssertEqual(H2Frame.data(stream: 1, data: [1, 2], endStream: false, padding: 7).flowControlledLength, 10)
        XCTAssertEqual(H2Frame.data(stream: 1, data: [1, 2], endStream: false).flowControlledLength, 2)
    }

    func testAHeaderBlockIsSplitIntoContinuations() throws {
        var bytes: [UInt8] = []
        let block = (0..<40).map { UInt8($0) }
        H2FrameWriter.headerBlock(block, stream: 1, endStream: true, maxFrameSize: 16, into: &bytes)
        XCTAssertEqual(try read(bytes), [
            .headers(stream: 1, fragment: Array(block[0..<16]), endStream: true, endHeaders: false),
            .continuation(stream: 1, fragment: Array(block[16..<32]), endHeaders: false),
            .continuation(stream: 1, fragment: Array(block[32..<40]), endHeaders: true),
        ])
    }

    // h2spec 3.5 #2: an invalid preface ends the connection, found at the first wrong octet.
    func testAnInvalidPrefaceIsAConnectionError() {
        var reader = H2FrameReader(expectingPreface: true)
        reader.append(Array("GET / HTTP/1.1\r\n".utf8))
        XCTAssertThrowsError(try reader.next()) { XCTAssertEqual(code($0 as? H2Failure), .protocolError) }
    }

    // h2spec 4.1 #1-#3: unknown types ignored, undefined flags and the reserved bit ignored.
    func testUnknownTypesUndefinedFlagsAndTheReservedBitAreIgnored() throws {
        XCTAssertEqual(try read(Self.raw(type: 0x16, stream: 0, [1, 2, 3])), [.unknown(type: 0x16, stream: 0)])
        XCTAssertEqual(try read(Self.raw(type: H2FrameType.ping, flags: 0x16, stream: 0, [UInt8](repeating: 0, count: 8))), [.ping(ack: false, opaque: 0)])
        XCTAssertEqual(try read(Self.raw(type: H2FrameType.windowUpdate, stream: 0x8000_0001, [0x80, 0, 0, 1])), [.windowUpdate(stream: 1, increment: 1)])
    }

    // h2spec 4.2 #1-#3: 2^14 octets read; beyond SETTINGS_MAX_FRAME_SIZE, FRAME_SIZE_ERROR before the payload is buffered.
    func testFrameSizeLimit() throws {
        XCTAssertEqual(try read(Self.raw(type: 0, stream: 1, [UInt8](repeating: 0, count: 16384))).first?.flowControlledLength, 16384)
        var reader = H2FrameReader(expectingPreface: false)
        reader.append(Self.raw(type: 0, stream: 1, [UInt8](repeating: 0, count: 16385)).prefix(9))
        XCTAssertThrowsError(try reader.next()) { XCTAssertEqual($0 as? H2Failure, .connection(.frameSizeError, reason: "frame of 16385 octets above SETTINGS_MAX_FRAME_SIZE 16384")) }
        XCTAssertEqual(code(failure(Self.raw(type: 1, flags: 4, stream: 1, [UInt8](repeating: 0x82, count: 16385)))), .frameSizeError)
    }

    func testStreamIdentifierRules() {
        // h2spec 6.1 #1, 6.2 #3, 6.3 #1, 6.4 #1, 6.10 #3: these types never go on stream 0.
        for type in [H2FrameType.data, H2FrameType.headers, H2FrameType.continuation] {
            guard case .connection(.protocolError, _)? = failure(Self.raw(type: type, flags: 4, stream: 0, [0x82])) else { return XCTFail("type \(type)") }
        }
        XCTAssertEqual(code(failure(Self.raw(type: H2FrameType.priority, stream: 0, [0, 0, 0, 1, 1]))), .protocolError)
        XCTAssertEqual(code(failure(Self.raw(type: H2FrameType.rstStream, stream: 0, [0, 0, 0, 8]))), .protocolError)
        // h2spec 6.5 #2, 6.7 #3, 6.8 #1: these only go on stream 0.
        XCTAssertEqual(code(failure(Self.raw(type: H2FrameType.settings, stream: 1, []))), .protocolError)
        XCTAssertEqual(code(failure(Self.raw(type: H2FrameType.ping, stream: 1, [UInt8](repeating: 0, count: 8)))), .protocolError)
        XCTAssertEqual(code(failure(Self.raw(type: H2FrameType.goaway, stream: 1, [UInt8](repeating: 0, count: 8)))), .protocolError)
    }

    func testFixedLengthsAndPadding() {
        // h2spec 6.3 #2: a PRIORITY of the wrong length fails its stream only.
        XCTAssertEqual(failure(Self.raw(type: H2FrameType.priority, stream: 3, [0, 0, 0, 1])), .stream(3, .frameSizeError, reason: "PRIORITY of 4 octets"))
        // h2spec 6.4 #3, 6.5 #1, 6.5 #3, 6.7 #4, 6.9 #3.
        XCTAssertEqual(code(failure(Self.raw(type: H2FrameType.rstStream, stream: 1, [0, 0, 0, 8, 0]))), .frameSizeError)
        XCTAssertEqual(code(failure(Self.raw(type: H2FrameType.settings, flags: 1, stream: 0, [0, 1, 0, 0, 0, 0]))), .frameSizeError)
        XCTAssertEqual(code(failure(Self.raw(type: H2FrameType.settings, stream: 0, [0, 1, 0, 0, 0]))), .frameSizeError)
        XCTAssertEqual(code(failure(Self.raw(type: H2FrameType.ping, stream: 0, [0, 0, 0, 0, 0, 0]))), .frameSizeError)
        XCTAssertEqual(code(failure(Self.raw(type: H2FrameType.windowUpdate, stream: 0, [0, 0, 1]))), .frameSizeError)
        XCTAssertEqual(code(failure(Self.raw(type: H2FrameType.goaway, stream: 0, [0, 0, 0, 0]))), .frameSizeError)
        // h2spec 6.1 #3, 6.2 #4: padding as long as the payload.
        XCTAssertEqual(code(failure(Self.raw(type: H2FrameType.data, flags: H2FrameType.padded, stream: 1, [3, 1, 2]))), .protocolError)
        XCTAssertEqual(code(failure(Self.raw(type: H2FrameType.headers, flags: H2FrameType.padded | 4, stream: 1, [2, 0x82]))), .protocolError)
        XCTAssertEqual(code(failure(Self.raw(type: H2FrameType.data, flags: H2FrameType.padded, stream: 1, []))), .frameSizeError)
    }
}

extension H2Failure {
    var reason: String {
        switch self {
        case .connection(_, let reason), .stream(_, _, let reason): return reason
        }
    }

    var code: H2ErrorCode {
        switch self {
        case .connection(let code, _), .stream(_, let code, _): return code
        }
    }
}
