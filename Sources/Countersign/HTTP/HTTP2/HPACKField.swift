/// One header field as HPACK carries it: octets, not text (a value may hold obs-text).
public struct HPACKField: Equatable, Hashable, Sendable {
    public var name: [UInt8]
    public var value: [UInt8]

    public init(name: [UInt8], value: [UInt8]) {
        self.name = name
        self.value = value
    }

    public init(_ name: String, _ value: String) {
        self.name = Array(name.utf8)
        self.value = Array(value.utf8)
    }

    /// RFC 7541 §4.1: an entry's size counts 32 octets of overhead besides name and value;
    /// SETTINGS_MAX_HEADER_LIST_SIZE counts fields the same way (RFC 9113 §6.5.2).
    public var size: Int { 32 + name.count + value.count }

    public var nameText: String { String(decoding: name, as: UTF8.self) }
    public var valueText: String { String(decoding: value, as: UTF8.self) }
}

extension HPACKField: CustomStringConvertible {
    public var description: String { "\(nameText): \(valueText)" }
}
