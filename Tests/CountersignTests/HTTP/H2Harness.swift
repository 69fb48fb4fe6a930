@testable import CountersignHTTP

/// A scripted peer around an `H2Connection`: it encodes its frames with its own HPACK context,
/// feeds them to the machine, and reads back what the machine wrote.
struct H2Harness {
    /// How the machine answered one input.
    enum Verdict: Equatable {
        case fine
        case stream(H2ErrorCode)
        case connection(H2ErrorCode)
    }

    struct Outcome {
        var frames: [H2Frame] = []
        var events: [H2Action] = []

        var verdict: Verdict {
            for frame in frames { if case .goaway(_, let code, _) = frame { return .connection(code) } }
            for frame in frames { if case .rstStream(_, let code) = frame { return .stream(code) } }
            return .fine
        }
    }

    var machine: H2Connection
    var encoder = HPACKEncoder()
    var decoder = HPACKDecoder(maxTableSize: 4096, maxHeaderListSize: 1 << 20)
    var reader: H2FrameReader
    var now: UInt64 = 1000
    /// What the machine wrote at start.
    var greeting = Outcome()

    static let get: [(String, String)] = [(":method", "GET"), (":scheme", "https"), (":path", "/"), (":authority", "example.com")]
    static let post: [(String, String)] = [(":method", "POST"), (":scheme", "https"), (":path", "/upload"), (":authority", "example.com")]

    /// A server-role machine that has had the client preface and an empty SETTINGS.
    static func server(_ limits: H2Limits = H2Limits()) -> H2Harness {
        var harness = H2Harness(role: .server, limits: limits)
        _ = harness.feed(H2FrameReader.clientPreface + frameBytes(.settings(ack: false, [])))
        return harness
    }

    /// A client-role machine that has had the server's SETTINGS.
    static func client(_ limits: H2Limits = H2Limits(), settings: [H2Setting] = []) -> H2Harness {
        var harness = H2Harness(role: .client, limits: limits)
        _ = harness.send(.settings(ack: false, settings))
        return harness
    }

    init(role: H2Role, limits: H2Limits) {
        machine = H2Connection(role: role, limits: limits)
        reader = H2FrameReader(maxFrameSize: 16_777_215, expectingPreface: role == .client)
        greeting = absorb(machine.start())
    }

    static func frameBytes(_ frames: H2Frame...) -> [UInt8] {
        var bytes: [UInt8] = []
        for frame in frames { H2FrameWriter.write(frame, into: &bytes) }
        return bytes
    }

    mutating func block(_ pairs: [(String, String)]) -> [UInt8] {
        var bytes: [UInt8] = []
        encoder.encode(fields(pairs), into: &bytes)
        return bytes
    }

    mutating func send(_ frames: H2Frame...) -> Outcome {
        var bytes: [UInt8] = []
        for frame in frames { H2FrameWriter.write(frame, into: &bytes) }
        return feed(bytes)
    }

    mutating func feed(_ bytes: [UInt8]) -> Outcome {
        absorb(machine.received(bytes, now: now))
    }

    /// A request head on `stream` in one HEADERS frame.
    mutating func request(_ stream: UInt32, _ pairs: [(String, String)] = H2Harness.get, endStream: Bool = true) -> Outcome {
        let fragment = block(pairs)
        return send(.headers(stream: stream, fragment: fragment, endStream: endStream, endHeaders: true))
    }

    /// Splits what the machine did into the frames it wrote and its other actions.
    mutating func absorb(_ actions: [H2Action]) -> Outcome {
        var outcome = Outcome()
        for action in actions {
            guard case .write(let bytes) = action else { outcome.events.append(action); continue }
            reader.append(bytes)
            while let frame = try! reader.next() { outcome.frames.append(frame) }
        }
        return outcome
    }

    /// Decodes a header block the machine wrote.
    mutating func fieldsOf(_ frame: H2Frame) -> [HPACKField]? {
        guard case .headers(_, let fragment, _, _, _, _) = frame else { return nil }
        return try? decoder.decode(fragment)
    }
}
