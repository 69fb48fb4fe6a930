/// What `countersign ca init|show` need from a configuration.
public struct InterceptionSection: Sendable {
    public var interception: InterceptionConfig
    /// Patterns of the hosts whose CONNECTs are intercepted (`intercept` absent or true),
    /// in file order: the CA's name constraints.
    public var interceptedPatterns: [String]
}

/// Decodes `interception` as the full decoder does and, of `hosts`, only each entry's
/// pattern and `intercept` flag; every other key is left unread (and unchecked: `check`
/// is the command that validates the whole file).
struct InterceptionSectionDecoder {
    let context: DecodingContext

    func decode(_ root: JSON5Node) -> InterceptionSection? {
        guard case .object(let members) = root.value else {
            context.fail(.root, at: root.position, "expected an object { ... }, found \(root.kindName)")
            return nil
        }
        func member(_ key: String) -> JSON5Member? {
            members.last { $0.key == key }.flatMap { if case .null = $0.value.value { return nil } else { return $0 } }
        }
        guard let section = member("interception") else {
            context.fail(.root, at: nil, "has no `interception` section; add interception: { ca_certificate: \"certs/ca.pem\", ca_key: \"certs/ca.key\" }, or give --dir DIR")
            return nil
        }
        guard let interception = ConfigDecoder(context: context).interception(section.value, at: KeyPath.root.appending("interception")) else { return nil }
        var patterns: [String] = []
        if let hosts = member("hosts"), let entries = ObjectReader.namedEntries(hosts.value, at: KeyPath.root.appending("hosts"), context: context) {
            for entry in entries where intercepts(entry) { patterns.append(entry.key) }
        }
        return InterceptionSection(interception: interception, interceptedPatterns: patterns)
    }

    /// `intercept` defaults to true; a value that is not a boolean is reported.
    private func intercepts(_ entry: JSON5Member) -> Bool {
        guard case .object(let keys) = entry.value.value, let flag = keys.last(where: { $0.key == "intercept" }) else { return true }
        switch flag.value.value {
        case .bool(let value): return value
        case .null: return true
        default:
            context.fail(KeyPath.root.appending("hosts").appending(entry.key).appending("intercept"), at: flag.value.position,
                         "expected true or false, found \(flag.value.kindName)")
            return false
        }
    }
}
