// libFuzzer entry point for the challenge grammar: any bytes must parse without crashing or
// looping, and every challenge returned must have a token for its scheme.

@_cdecl("LLVMFuzzerTestOneInput")
public func challengeFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    // Treat newlines as field separators so one input can exercise several header fields.
    let fields = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    for challenge in ChallengeParser.parse(fieldValues: fields) {
        precondition(TokenSyntax.isToken(challenge.scheme), "a challenge came back without a token scheme")
        for param in challenge.params {
            precondition(TokenSyntax.isToken(param.name), "a parameter came back without a token name")
        }
    }
    _ = AuthenticationInfo.parse(fieldValues: fields)
    return 0
}
