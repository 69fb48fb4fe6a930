/// What the `Connection` fields of a section say (RFC 9110 §7.6.1), read in one scan when the
/// fields are made or changed (`HeaderFields.connection`). A forwarded message asks it up to
/// three times (keep-alive, upgrade, whether it names fields to drop): each was a scan of the
/// values, ~200 instructions a response carrying `Connection: keep-alive`.
struct ConnectionOptions: OptionSet, Sendable {
    let rawValue: UInt8

    /// An element `close`.
    static let close = ConnectionOptions(rawValue: 1 << 0)
    /// An element `keep-alive`.
    static let keepAlive = ConnectionOptions(rawValue: 1 << 1)
    /// An element `upgrade`.
    static let upgrade = ConnectionOptions(rawValue: 1 << 2)
    /// An element that is none of these: a field name the section's own hop drops.
    static let other = ConnectionOptions(rawValue: 1 << 3)

    /// Elements besides `keep-alive` and `upgrade`, whose fields a forwarder removes (or keeps
    /// for an upgrade) anyway: `close`, or a name of another field.
    static var nominating: ConnectionOptions { [.close, .other] }

    /// The options of the elements of one `Connection` value.
    init(list value: UnsafeBufferPointer<UInt8>) {
        // The usual value is one of these alone: spelled as one, it holds no comma and no OWS.
        let whole = Self.option(value)
        guard whole == .other else {
            self = whole
            return
        }
        var options: ConnectionOptions = []
        _ = HeaderFields.listValue(value) { element in
            options.insert(Self.option(element))
            return false
        }
        self = options
    }

    init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Which option one element is, ignoring ASCII case: compared as a word or two each. A
    /// byte's case bit is set before it is compared, which folds only the letter pairs (and CR
    /// onto `-`, so the `-` of keep-alive is compared as it is).
    private static func option(_ element: UnsafeBufferPointer<UInt8>) -> ConnectionOptions {
        guard let base = element.baseAddress else { return .other }
        let bytes = UnsafeRawPointer(base)
        switch element.count {
        case 5:  // "clos", "e"
            let spelled = bytes.loadUnaligned(as: UInt32.self) | 0x2020_2020 == 0x736F_6C63 && element[4] | 0x20 == UInt8(ascii: "e")
            return spelled ? .close : .other
        case 10:  // "keep-ali", "ep-alive"
            let spelled = bytes.loadUnaligned(as: UInt64.self) | 0x2020_2020_2020_2020 == 0x696C_612D_7065_656B
                && bytes.loadUnaligned(fromByteOffset: 2, as: UInt64.self) | 0x2020_2020_2020_2020 == 0x6576_696C_612D_7065
                && element[4] == UInt8(ascii: "-")
            return spelled ? .keepAlive : .other
        case 7:  // "upgr", "rade"
            let spelled = bytes.loadUnaligned(as: UInt32.self) | 0x2020_2020 == 0x7267_7075
                && bytes.loadUnaligned(fromByteOffset: 3, as: UInt32.self) | 0x2020_2020 == 0x6564_6172
            return spelled ? .upgrade : .other
        default:
            return .other
        }
    }
}
