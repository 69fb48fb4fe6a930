/// One AV_PAIR of a target info list (MS-NLMP §2.2.2.1).
public struct NTLMAVPair: Equatable, Sendable {
    public var id: UInt16
    public var value: [UInt8]

    public init(id: UInt16, value: [UInt8]) {
        self.id = id
        self.value = value
    }

    public static let eol: UInt16 = 0
    public static let netBIOSComputerName: UInt16 = 1
    public static let netBIOSDomainName: UInt16 = 2
    public static let dnsComputerName: UInt16 = 3
    public static let dnsDomainName: UInt16 = 4
    public static let flags: UInt16 = 6
    public static let timestamp: UInt16 = 7
    public static let targetName: UInt16 = 9
    public static let channelBindings: UInt16 = 10

    /// The MsvAvFlags bit saying the AUTHENTICATE_MESSAGE carries a MIC.
    public static let micPresentFlag: UInt32 = 0x2
}

/// A target info list: parsed from a CHALLENGE_MESSAGE, extended by the client, and encoded back.
public enum NTLMAVPairs {
    /// The pairs before MsvAvEOL; throws when a pair runs past the end or no EOL is found.
    public static func decode(_ bytes: [UInt8]) throws -> [NTLMAVPair] {
        let reader = NTLMReader(bytes: bytes)
        var pairs: [NTLMAVPair] = []
        var offset = 0
        while let id = reader.uint16(at: offset), let length = reader.uint16(at: offset + 2) {
            if id == NTLMAVPair.eol { return pairs }
            guard let value = reader.slice(at: offset + 4, count: Int(length)) else { break }
            pairs.append(NTLMAVPair(id: id, value: value))
            offset += 4 + Int(length)
        }
        throw AuthError("the NTLM server's target information is truncated (no MsvAvEOL); the CHALLENGE_MESSAGE is malformed")
    }

    /// Encodes the pairs followed by MsvAvEOL.
    public static func encode(_ pairs: [NTLMAVPair]) -> [UInt8] {
        var out: [UInt8] = []
        for pair in pairs where pair.id != NTLMAVPair.eol {
            out.appendLittleEndian(pair.id)
            out.appendLittleEndian(UInt16(pair.value.count))
            out += pair.value
        }
        out += [0, 0, 0, 0]
        return out
    }
}
