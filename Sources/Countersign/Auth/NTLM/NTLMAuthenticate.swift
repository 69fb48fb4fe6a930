/// AUTHENTICATE_MESSAGE (type 3, MS-NLMP §2.2.1.3). Payloads are laid out as in the
/// specification's example: domain, user, workstation, LM response, NT response, session key.
public struct NTLMAuthenticate: Equatable, Sendable {
    public var flags: NTLMFlags
    public var lmChallengeResponse: [UInt8]
    public var ntChallengeResponse: [UInt8]
    public var domain: String
    public var user: String
    public var workstation: String
    public var encryptedRandomSessionKey: [UInt8]
    /// The 8-byte VERSION field; always present so the MIC lands at its fixed offset.
    public var version: [UInt8]
    /// Nil: the message has no MIC field at all. Otherwise 16 bytes (zeros while the MIC is computed).
    public var mic: [UInt8]?

    public init(flags: NTLMFlags, lmChallengeResponse: [UInt8], ntChallengeResponse: [UInt8], domain: String, user: String,
                workstation: String, encryptedRandomSessionKey: [UInt8] = [], version: [UInt8] = [UInt8](repeating: 0, count: 8),
                mic: [UInt8]? = nil) {
        self.flags = flags
        self.lmChallengeResponse = lmChallengeResponse
        self.ntChallengeResponse = ntChallengeResponse
        self.domain = domain
        self.user = user
        self.workstation = workstation
        self.encryptedRandomSessionKey = encryptedRandomSessionKey
        self.version = version
        self.mic = mic
    }

    public func encode() -> [UInt8] {
        let unicode = flags.contains(.unicode)
        let domainBytes = NTLMText.encode(domain, unicode: unicode)
        let userBytes = NTLMText.encode(user, unicode: unicode)
        let workstationBytes = NTLMText.encode(workstation, unicode: unicode)
        let headerLength = 64 + 8 + (mic == nil ? 0 : 16)

        var offsets: [Int] = []
        var payload: [UInt8] = []
        for part in [domainBytes, userBytes, workstationBytes, lmChallengeResponse, ntChallengeResponse, encryptedRandomSessionKey] {
            offsets.append(headerLength + payload.count)
            payload += part
        }
        func field(_ bytes: [UInt8], _ offset: Int, into out: inout [UInt8]) {
            out.appendLittleEndian(UInt16(bytes.count))
            out.appendLittleEndian(UInt16(bytes.count))
            out.appendLittleEndian(UInt32(offset))
        }
        var out = NTLMText.signature
        out.appendLittleEndian(UInt32(3))
        field(lmChallengeResponse, offsets[3], into: &out)
        field(ntChallengeResponse, offsets[4], into: &out)
        field(domainBytes, offsets[0], into: &out)
        field(userBytes, offsets[1], into: &out)
        field(workstationBytes, offsets[2], into: &out)
        field(encryptedRandomSessionKey, offsets[5], into: &out)
        out.appendLittleEndian(flags.rawValue)
        out += version.count == 8 ? version : [UInt8](repeating: 0, count: 8)
        if let mic { out += mic.count == 16 ? mic : [UInt8](repeating: 0, count: 16) }
        return out + payload
    }
}
