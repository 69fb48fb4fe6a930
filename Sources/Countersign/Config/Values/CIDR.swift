/// An address block such as `10.1.0.0/16` or `::1/128`; a bare address means a single host.
public struct CIDR: Sendable, Hashable, CustomStringConvertible {
    public let network: IPAddress
    public let prefixLength: Int

    public init(network: IPAddress, prefixLength: Int) {
        self.network = network
        self.prefixLength = prefixLength
    }

    /// Parses `ADDRESS/PREFIX` or a bare address. Host bits set below the prefix are refused
    /// (with the intended block suggested), since `10.1.2.3/16` is usually a typo.
    public init(parsing text: String) throws {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = IPAddress(String(parts[0])) else {
            throw ValueError("\"\(text)\" is not an address block; write one like \"10.1.0.0/16\", \"::1/128\" or a single address")
        }
        let maximum = address.bytes.count * 8
        var length = maximum
        if parts.count == 2 {
            guard let parsed = Int(parts[1]), (0...maximum).contains(parsed), parts[1].allSatisfy(\.isNumber) else {
                throw ValueError("\"\(text)\" has a bad prefix length; it must be 0 to \(maximum)")
            }
            length = parsed
        }
        let masked = CIDR.mask(address, to: length)
        guard masked == address else {
            throw ValueError("\"\(text)\" has bits set beyond the /\(length) prefix; did you mean \"\(masked)/\(length)\"?")
        }
        self.init(network: address, prefixLength: length)
    }

    /// True when the address lies in the block; IPv4-mapped IPv6 addresses (`::ffff:10.1.2.3`,
    /// as dual-stack sockets report IPv4 clients) match IPv4 blocks, and IPv4 addresses match
    /// IPv6 blocks that cover their mapped form.
    public func contains(_ address: IPAddress) -> Bool {
        switch (network, address) {
        case (.v4, .v4), (.v6, .v6):
            return CIDR.mask(address, to: prefixLength) == network
        case (.v4, .v6):
            guard let v4 = address.unmappedV4 else { return false }
            return CIDR.mask(v4, to: prefixLength) == network
        case (.v6, .v4(let bytes)):
            let mapped = IPAddress.v6(Array(repeating: 0, count: 10) + [0xFF, 0xFF] + bytes)
            return CIDR.mask(mapped, to: prefixLength) == network
        }
    }

    public var description: String { "\(network)/\(prefixLength)" }

    /// The default client allow-list: loopback only.
    public static let loopback: [CIDR] = [
        CIDR(network: .v4([127, 0, 0, 0]), prefixLength: 8),
        CIDR(network: .v6(Array(repeating: 0, count: 15) + [1]), prefixLength: 128),
    ]

    private static func mask(_ address: IPAddress, to length: Int) -> IPAddress {
        var bytes = address.bytes
        for i in 0..<bytes.count {
            let bitsKept = max(0, min(8, length - i * 8))
            bytes[i] &= bitsKept == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - bitsKept))
        }
        if case .v4 = address { return .v4(bytes) }
        return .v6(bytes)
    }
}
