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
    _ = try? BodyFraming.forRequest(head)
    _ = try? RequestTarget.parse(head.target, method: head.method)
    return 0
}
