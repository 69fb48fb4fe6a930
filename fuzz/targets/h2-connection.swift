// libFuzzer entry point for the HTTP/2 frame reader and connection machine. The first octet
// picks the role and how the rest is cut into reads; the rest is what the peer sends. The
// driver answers every head it is given and consumes every body octet, as the proxy would.
// Whatever arrives, what the machine writes must be well-formed frames, what it holds must
// stay within one frame and one read, and after it closes it must stay silent.

@_cdecl("LLVMFuzzerTestOneInput")
public func h2ConnectionFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let role: H2Role = bytes[0] & 1 == 0 ? .server : .client
    let chunk = 1 + Int(bytes[0] >> 1) * 8
    var machine = H2Connection(role: role, limits: H2Limits(maxConcurrentStreams: 8, maxHeaderListSize: 8192, maxHeaderBlockOctets: 16384,
                                                              maxContinuationFrames: 8, maxResetsPerWindow: 20, maxControlFramesPerWindow: 20))
    var ours = H2FrameReader(maxFrameSize: 16_777_215, expectingPreface: role == .client)
    var pending = machine.start()
    if role == .client, case .success(let (_, actions)) = machine.openStream(
        fields: [HPACKField(":method", "POST"), HPACKField(":scheme", "https"), HPACKField(":path", "/"), HPACKField(":authority", "a")], endStream: false) {
        pending += actions
    }
    var offset = 1
    var now: UInt64 = 0
    var closed = false
    while true {
        var next: [H2Action] = []
        for action in pending {
            switch action {
            case .write(let out):
                precondition(!closed, "the machine wrote after closing")
                ours.append(out)
                do {
                    while try ours.next() != nil {}
                } catch {
                    preconditionFailure("the machine wrote a malformed frame: \(error)")
                }
            case .head(let stream, _, _) where role == .server:
                if case .success(let actions) = machine.sendHead(stream: stream, fields: [HPACKField(":status", "200")], endStream: false) { next += actions }
                if case .success(let (_, actions)) = machine.sendData(stream: stream, Array("ok".utf8), endStream: true) { next += actions }
            case .data(let stream, let body, _):
                next += machine.consumed(stream: stream, count: body.count)
            case .close:
                closed = true
            default:
                break
            }
        }
        pending = next
        if !pending.isEmpty { continue }
        guard offset < size else { break }
        let end = min(size, offset + chunk)
        now += 10
        pending = machine.received(bytes[offset..<end], now: now)
        precondition(machine.reader.bufferedCount <= chunk + 16384 + 9 + 24, "the reader holds more than a frame and a read")
        if closed { precondition(pending.isEmpty, "the machine answered after closing") }
        offset = end
    }
    return 0
}
