/// CHALLENGE_MESSAGE (type 2, MS-NLMP §2.2.1.2) as the server sent it.
public struct NTLMChallengeMessage: Equatable, Sendable {
    public var flags: NTLMFlags
    public var serverChallenge: [UInt8]
    public var targetName: String
    /// The raw target info bytes (empty when the server sent none).
    public var targetInfo: [UInt8]
    public var avPairs: [NTLMAVPair]
    /// The exact bytes received; the MIC covers them.
    public var raw: [UInt8]

    public static func parse(_ bytes: [UInt8]) throws -> NTLMChallengeMessage {
        let reader = NTLMReader(bytes: bytes)
        guard reader.slice(at: 0, count: 8) == NTLMText.signature, reader.uint32(at: 8) == 2 else {
            throw AuthError("the NTLM server's token is not a CHALLENGE_MESSAGE (wrong signature or message type)")
        }
        guard let rawFlags = reader.uint32(at: 20), let challenge = reader.slice(at: 24, count: 8) else {
            throw AuthError("the NTLM CHALLENGE_MESSAGE is shorter than its fixed header")
        }
        let flags = NTLMFlags(rawValue: rawFlags)
        // The target name is informational only (the domain comes from the credential), so a
        // broken one (Squid's ntlm_fake_auth leaves its offset uninitialised) is read as empty.
        let nameBytes = reader.securityBuffer(at: 12) ?? []
        var targetInfo: [UInt8] = []
        var pairs: [NTLMAVPair] = []
        if bytes.count >= 48, flags.contains(.targetInfo) {
            guard let info = reader.securityBuffer(at: 40) else {
                throw AuthError("the NTLM CHALLENGE_MESSAGE's target information points outside the message")
            }
            targetInfo = info
            if !info.isEmpty { pairs = try NTLMAVPairs.decode(info) }
        }
        return NTLMChallengeMessage(flags: flags, serverChallenge: challenge,
                                    targetName: NTLMText.decode(nameBytes, unicode: flags.contains(.unicode)),
                                    targetInfo: targetInfo, avPairs: pairs, raw: bytes)
    }

    /// MsvAvTimestamp as a FILETIME, when the server sent one.
    public var timestamp: UInt64? {
        guard let pair = avPairs.first(where: { $0.id == NTLMAVPair.timestamp }), pair.value.count == 8 else { return nil }
        return pair.value.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }
}
