// libFuzzer entry point for the request head parser and the request framing rules: any bytes
// must parse or be refused without crashing, and a parsed head must be self-consistent.

@_cdecl("LLVMFuzzerTestOneInput")
public func requestHeadFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    guard case .complete(let head, let consumed) = HeadParser.parseRequest(bytes, maxHeadBytes: 4096) else { return 0 }
    precondition(consumed >= 4 && consumed <= size, "a head consumed \(consumed) of \(size) bytes")
    precondition(bytes[consumed - 2] == 0x0D && bytes[consumed - 1] == 0x0A, "a head did not end at CRLF")
    precondition(CharacterClass.isToken(head.method), "a method came back that is not a token")
    precondition(head.version.major == 1, "a version other than 1.x was accepted")
    for field in head.headers {
        precondition(CharacterClass.isToken(field.name), "a field name came back that is not a token")
    }
    _ = try? RequestTarget.parse(head.target, method: head.method)
    // What the proxy sends upstream for it must be one head our own strict parser accepts whole.
    if let framing = try? BodyFraming.forRequest(head) {
        // `bytes` writes the head within its `byteBound` (a write past it stops the process).
        let forwarded = ForwardedHeads.requestHead(head, framing: framing, target: "/", hostField: "origin.test",
                                                   answers: [(name: FieldName.authorization, value: Array("Basic YTpi".utf8))],
                                                   handshakeLeg: size % 2 == 0, ownExpect: size % 3 == 0).bytes
        let reparsed = forwarded.withUnsafeBytes { HeadParser.parseRequest($0, maxHeadBytes: forwarded.count) }
        guard case .complete(_, let used) = reparsed, used == forwarded.count else {
            preconditionFailure("a forwarded head does not parse again as one whole head")
        }
    }
    return 0
}
