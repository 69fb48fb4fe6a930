// libFuzzer entry point for the Digest challenge: every challenge the grammar returns is offered
// to DigestChallenge, which must accept it with a realm and nonce or refuse it.

@_cdecl("LLVMFuzzerTestOneInput")
public func digestChallengeFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let fields = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    for challenge in ChallengeParser.parse(fieldValues: fields) {
        guard let digest = try? DigestChallenge(challenge) else { continue }
        precondition(!digest.nonce.isEmpty, "a Digest challenge was accepted without a nonce")
        if let options = digest.qopOptions {
            precondition(options.contains("auth") || options.contains("auth-int"), "a qop without auth was accepted")
        }
    }
    return 0
}
