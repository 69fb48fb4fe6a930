// libFuzzer entry point for the NTLM CHALLENGE_MESSAGE parser: a hostile server's type-2 token
// must be parsed or refused without reading outside the message.

@_cdecl("LLVMFuzzerTestOneInput")
public func ntlmChallengeFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let message = try? NTLMChallengeMessage.parse(bytes) else { return 0 }
    precondition(message.serverChallenge.count == 8, "a server challenge that is not 8 bytes")
    precondition(message.raw == bytes, "the raw bytes were not kept as received")
    precondition(message.targetInfo.count <= size, "target info longer than the message")
    _ = message.timestamp
    return 0
}
