/// The NTLMv2 computation of MS-NLMP §3.3.2 for one challenge.
public struct NTLMv2Response: Sendable {
    public let ntProofStr: [UInt8]
    public let ntChallengeResponse: [UInt8]
    public let lmChallengeResponse: [UInt8]
    public let sessionBaseKey: [UInt8]

    /// - Parameters:
    ///   - timestamp: FILETIME (100 ns since 1601) — the server's MsvAvTimestamp when it sent one.
    ///   - targetInfo: the encoded AV pairs, MsvAvEOL included, exactly as they go in the response.
    public init(responseKey: [UInt8], serverChallenge: [UInt8], clientChallenge: [UInt8], timestamp: UInt64, targetInfo: [UInt8]) {
        var temp: [UInt8] = [1, 1, 0, 0, 0, 0, 0, 0]
        temp.appendLittleEndian(timestamp)
        temp += clientChallenge
        temp += [0, 0, 0, 0]
        temp += targetInfo
        temp += [0, 0, 0, 0]
        ntProofStr = HMACMD5.authenticate(key: responseKey, message: serverChallenge + temp)
        ntChallengeResponse = ntProofStr + temp
        lmChallengeResponse = HMACMD5.authenticate(key: responseKey, message: serverChallenge + clientChallenge) + clientChallenge
        sessionBaseKey = HMACMD5.authenticate(key: responseKey, message: ntProofStr)
    }

    /// FILETIME for a moment given in seconds since 1970.
    public static func fileTime(unixSeconds: Double) -> UInt64 {
        UInt64((unixSeconds + 11_644_473_600) * 10_000_000)
    }
}
