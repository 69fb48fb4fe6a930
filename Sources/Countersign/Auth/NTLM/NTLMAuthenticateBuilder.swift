/// The random and time inputs of an AUTHENTICATE_MESSAGE, injectable so vectors can pin them.
public struct NTLMEntropy: Sendable {
    public var clientChallenge: @Sendable () -> [UInt8]
    public var randomSessionKey: @Sendable () -> [UInt8]
    /// The client's clock as a FILETIME, used only when the server sent no MsvAvTimestamp.
    public var now: @Sendable () -> UInt64

    public init(clientChallenge: @escaping @Sendable () -> [UInt8], randomSessionKey: @escaping @Sendable () -> [UInt8],
                now: @escaping @Sendable () -> UInt64) {
        self.clientChallenge = clientChallenge
        self.randomSessionKey = randomSessionKey
        self.now = now
    }

    public static let system = NTLMEntropy(
        clientChallenge: { SecureRandom.bytes(8) },
        randomSessionKey: { SecureRandom.bytes(16) },
        now: { UnixClock.fileTimeNow() })
}

/// Answers a CHALLENGE_MESSAGE: NTLMv2 response over the server's target info extended with
/// MsvAvFlags (MIC present), MsvAvChannelBindings and optionally MsvAvTargetName; key exchange
/// when negotiated; and the MIC over all three messages.
public struct NTLMAuthenticateBuilder {
    public var credentials: NTLMCredentials
    public var workstation: String
    /// The 16-byte MsvAvChannelBindings value (see `TLSChannelBinding`); nil on plaintext
    /// connections, where 16 zero bytes say "no binding" as Windows clients do.
    public var channelBinding: [UInt8]?
    /// MsvAvTargetName, e.g. "HTTP/host.example.com"; omitted when nil.
    public var targetName: String?
    public var entropy: NTLMEntropy

    public init(credentials: NTLMCredentials, workstation: String, channelBinding: [UInt8]? = nil,
                targetName: String? = nil, entropy: NTLMEntropy = .system) {
        self.credentials = credentials
        self.workstation = workstation
        self.channelBinding = channelBinding
        self.targetName = targetName
        self.entropy = entropy
    }

    public func build(negotiate: [UInt8], negotiatedFlags: NTLMFlags, challenge: NTLMChallengeMessage) throws -> [UInt8] {
        guard challenge.flags.contains(.ntlm) || challenge.flags.contains(.extendedSessionSecurity) else {
            throw AuthError("the NTLM server offers neither NTLM nor extended session security; only NTLMv2 is supported")
        }
        var flags = challenge.flags.intersection(negotiatedFlags)
        if challenge.flags.contains(.targetInfo) { flags.insert(.targetInfo) }
        if !flags.contains(.unicode) { flags.insert(.oem) }

        let serverTimestamp = challenge.timestamp
        let withMIC = !challenge.targetInfo.isEmpty
        let targetInfo = NTLMAVPairs.encode(extendedPairs(challenge.avPairs, withMIC: withMIC))
        let clientChallenge = entropy.clientChallenge()
        let response = NTLMv2Response(responseKey: credentials.responseKeyNT, serverChallenge: challenge.serverChallenge,
                                      clientChallenge: clientChallenge, timestamp: serverTimestamp ?? entropy.now(),
                                      targetInfo: targetInfo)

        var exportedSessionKey = response.sessionBaseKey
        var encryptedKey: [UInt8] = []
        if flags.contains(.keyExchange) {
            exportedSessionKey = entropy.randomSessionKey()
            encryptedKey = try RC4.transform(key: response.sessionBaseKey, exportedSessionKey)
        }
        // With a server timestamp the LM response must be zeros (MS-NLMP §3.1.5.1.2).
        let lmResponse = serverTimestamp != nil ? [UInt8](repeating: 0, count: 24) : response.lmChallengeResponse
        var message = NTLMAuthenticate(flags: flags, lmChallengeResponse: lmResponse, ntChallengeResponse: response.ntChallengeResponse,
                                       domain: credentials.domain, user: credentials.user, workstation: workstation,
                                       encryptedRandomSessionKey: encryptedKey,
                                       mic: withMIC ? [UInt8](repeating: 0, count: 16) : nil)
        guard withMIC else { return message.encode() }
        message.mic = NTLMAuthenticateBuilder.mic(exportedSessionKey: exportedSessionKey, negotiate: negotiate,
                                                  challenge: challenge.raw, authenticateWithZeroMIC: message.encode())
        return message.encode()
    }

    /// MIC = HMAC_MD5(ExportedSessionKey, NEGOTIATE + CHALLENGE + AUTHENTICATE with the MIC zeroed).
    public static func mic(exportedSessionKey: [UInt8], negotiate: [UInt8], challenge: [UInt8], authenticateWithZeroMIC: [UInt8]) -> [UInt8] {
        HMACMD5.authenticate(key: exportedSessionKey, message: negotiate + challenge + authenticateWithZeroMIC)
    }

    /// The server's pairs, then MsvAvFlags, MsvAvChannelBindings and MsvAvTargetName (replacing
    /// any the server sent), ready for MsvAvEOL.
    func extendedPairs(_ serverPairs: [NTLMAVPair], withMIC: Bool) -> [NTLMAVPair] {
        let added: Set<UInt16> = [NTLMAVPair.flags, NTLMAVPair.channelBindings, NTLMAVPair.targetName]
        var pairs = serverPairs.filter { !added.contains($0.id) }
        var flagsValue = serverPairs.first { $0.id == NTLMAVPair.flags }.map { NTLMReader(bytes: $0.value).uint32(at: 0) ?? 0 } ?? 0
        if withMIC { flagsValue |= NTLMAVPair.micPresentFlag }
        if flagsValue != 0 {
            var value: [UInt8] = []
            value.appendLittleEndian(flagsValue)
            pairs.append(NTLMAVPair(id: NTLMAVPair.flags, value: value))
        }
        pairs.append(NTLMAVPair(id: NTLMAVPair.channelBindings, value: channelBinding ?? [UInt8](repeating: 0, count: 16)))
        if let targetName { pairs.append(NTLMAVPair(id: NTLMAVPair.targetName, value: NTLMText.utf16LittleEndian(targetName))) }
        return pairs
    }
}
