// libFuzzer entry point for the response head parser and the response framing rules.

@_cdecl("LLVMFuzzerTestOneInput")
public func responseHeadFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    guard case .complete(let head, let consumed) = HeadParser.parseResponse(bytes, maxHeadBytes: 4096) else { return 0 }
    precondition(consumed >= 4 && consumed <= size, "a head consumed \(consumed) of \(size) bytes")
    precondition((0...999).contains(head.status), "a status outside three digits was accepted")
    for field in head.headers {
        precondition(CharacterClass.isToken(field.name), "a field name came back that is not a token")
    }
    for method in ["GET", "HEAD", "CONNECT"] {
        _ = try? BodyFraming.forResponse(head, requestMethod: method)
    }
    return 0
}
