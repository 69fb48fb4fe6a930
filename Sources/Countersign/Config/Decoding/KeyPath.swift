/// The path to a value in the configuration, printed the way a user would find it:
/// `hosts."api.example.com".trust.pins[0]` (keys that are not identifiers are quoted).
public struct KeyPath: Sendable, Equatable, CustomStringConvertible {
    public enum Component: Sendable, Equatable {
        case key(String)
        case index(Int)
    }

    public var components: [Component]

    public init(_ components: [Component] = []) {
        self.components = components
    }

    public static let root = KeyPath()

    public func appending(_ key: String) -> KeyPath { KeyPath(components + [.key(key)]) }
    public func appending(_ index: Int) -> KeyPath { KeyPath(components + [.index(index)]) }

    public var description: String {
        if components.isEmpty { return "(top level)" }
        var text = ""
        for component in components {
            switch component {
            case .key(let key):
                if !text.isEmpty { text += "." }
                text += KeyPath.isIdentifier(key) ? key : "\"" + escaped(key) + "\""
            case .index(let index):
                text += "[\(index)]"
            }
        }
        return text
    }

    static func isIdentifier(_ key: String) -> Bool {
        guard let first = key.unicodeScalars.first, first == "_" || first == "$" || first.properties.isAlphabetic
        else { return false }
        return key.unicodeScalars.allSatisfy {
            $0 == "_" || $0 == "$" || ($0.isASCII && $0.properties.isAlphabetic) || ("0"..."9").contains($0)
        }
    }

    private func escaped(_ key: String) -> String {
        key.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"")
    }
}

extension String {
    /// Plain substring replacement without pulling Foundation into the key-path code.
    func replacingAll(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
