import FoundationEssentials

// libFuzzer entry point for the OAuth2 token response: the first byte picks the status class,
// the rest is the body. An accepted token must be a non-empty bearer token not yet expired.

@_cdecl("LLVMFuzzerTestOneInput")
public func oauth2TokenFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let status = [200, 201, 400, 401, 500][Int(data[0]) % 5]
    let body = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    do {
        let token = try OAuth2TokenResponse.parse(status: status, body: body, tokenURL: "https://idp.test/token", now: now)
        precondition((200..<300).contains(status), "a token was accepted from status \(status)")
        precondition(!token.accessToken.isEmpty, "an empty access token was accepted")
        if let expiry = token.expiresAt { precondition(!(expiry <= now), "an expired token was accepted") }
    } catch {
        precondition(error is AuthError, "the token parser threw something other than an AuthError")
    }
    return 0
}
