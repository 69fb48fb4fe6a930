/// One problem in the configuration: where it is, what is wrong and how to fix it.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The configuration file the problem is in, when known.
    public var file: String?
    public var path: KeyPath
    public var position: SourcePosition?
    /// What is wrong and, where possible, the fix. Never contains a secret's value.
    public var message: String

    public init(file: String? = nil, path: KeyPath, position: SourcePosition?, message: String) {
        self.file = file
        self.path = path
        self.position = position
        self.message = message
    }

    public var description: String {
        var location = file ?? ""
        if let position {
            location += location.isEmpty ? "line \(position.line)" : ":\(position.line):\(position.column)"
        }
        let prefix = location.isEmpty ? "" : location + ": "
        if path.components.isEmpty { return prefix + message }
        return prefix + "\(path): " + message
    }
}

/// Every problem found while loading, so a user fixes them all in one pass; printed one per line.
public struct ConfigErrors: Error, Sendable, CustomStringConvertible {
    public var errors: [ConfigError]
    /// Files the configuration named before it failed (absolute), so a reload watch can wait
    /// for one that is missing yet.
    public var namedFiles: [String] = []

    public init(_ errors: [ConfigError]) {
        self.errors = errors
    }

    public var description: String {
        errors.map(\.description).joined(separator: "\n")
    }

    /// The messages alone, convenient for matching in tests and for the admin page.
    public var messages: [String] { errors.map(\.message) }
}
