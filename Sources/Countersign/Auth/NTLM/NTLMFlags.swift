/// NEGOTIATE flags of MS-NLMP §2.2.2.5.
public struct NTLMFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let unicode = NTLMFlags(rawValue: 0x0000_0001)
    public static let oem = NTLMFlags(rawValue: 0x0000_0002)
    public static let requestTarget = NTLMFlags(rawValue: 0x0000_0004)
    public static let sign = NTLMFlags(rawValue: 0x0000_0010)
    public static let seal = NTLMFlags(rawValue: 0x0000_0020)
    public static let ntlm = NTLMFlags(rawValue: 0x0000_0200)
    public static let alwaysSign = NTLMFlags(rawValue: 0x0000_8000)
    public static let targetTypeDomain = NTLMFlags(rawValue: 0x0001_0000)
    public static let targetTypeServer = NTLMFlags(rawValue: 0x0002_0000)
    public static let extendedSessionSecurity = NTLMFlags(rawValue: 0x0008_0000)
    public static let targetInfo = NTLMFlags(rawValue: 0x0080_0000)
    public static let version = NTLMFlags(rawValue: 0x0200_0000)
    public static let negotiate128 = NTLMFlags(rawValue: 0x2000_0000)
    public static let keyExchange = NTLMFlags(rawValue: 0x4000_0000)
    public static let negotiate56 = NTLMFlags(rawValue: 0x8000_0000)

    /// What this client asks for in its NEGOTIATE_MESSAGE: NTLMv2 with extended session security,
    /// key exchange so the MIC key is fresh, and both string encodings.
    public static let clientDefault: NTLMFlags = [
        .unicode, .oem, .requestTarget, .sign, .ntlm, .alwaysSign, .extendedSessionSecurity,
        .negotiate128, .keyExchange, .negotiate56,
    ]
}
