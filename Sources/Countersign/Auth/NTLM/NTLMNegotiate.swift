/// NEGOTIATE_MESSAGE (type 1, MS-NLMP §2.2.1.1): the client's flags; no domain or workstation
/// is supplied (the OEM_*_SUPPLIED flags stay clear), and no version field is sent.
public struct NTLMNegotiate: Equatable, Sendable {
    public var flags: NTLMFlags

    public init(flags: NTLMFlags = .clientDefault) { self.flags = flags }

    public func encode() -> [UInt8] {
        var out = NTLMText.signature
        out.appendLittleEndian(UInt32(1))
        out.appendLittleEndian(flags.rawValue)
        for _ in 0..<2 {  // empty DomainNameFields and WorkstationFields pointing at the end
            out.appendLittleEndian(UInt16(0))
            out.appendLittleEndian(UInt16(0))
            out.appendLittleEndian(UInt32(32))
        }
        return out
    }
}
