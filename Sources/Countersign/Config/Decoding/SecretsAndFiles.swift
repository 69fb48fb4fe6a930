/// The outcome of looking for a `<name>_env` / `<name>_file` pair.
enum SecretLookup {
    /// Neither key is present.
    case absent
    /// Present but unusable; already reported.
    case invalid
    case found(Secret)

    var secret: Secret? {
        if case .found(let secret) = self { return secret }
        return nil
    }
}

extension ObjectReader {
    /// Resolves `<name>_env` (a variable in the environment given to the loader) or `<name>_file`
    /// (read relative to the configuration's directory, trailing line breaks stripped).
    func secret(_ name: String) -> SecretLookup {
        let envKey = name + "_env", fileKey = name + "_file"
        if has(envKey) && has(fileKey) {
            fail(fileKey, "give only one of \(envKey) and \(fileKey)")
            return .invalid
        }
        if context.secretReading == .skipped, has(envKey) || has(fileKey) {
            let key = has(envKey) ? envKey : fileKey
            guard let named = text(key) else { return .invalid }
            if key == fileKey { context.noteNamedFile(context.absolute(named)) }
            return .found(Secret(SecretReading.placeholder, source: "\(key == envKey ? "env" : "file") \(named) (not read)"))
        }
        if has(envKey) {
            guard let variable = text(envKey) else { return .invalid }
            guard let value = context.environment[variable] else {
                fail(envKey, "the environment variable \(variable) is not set; set it, or use \(fileKey)")
                return .invalid
            }
            guard !value.isEmpty else {
                fail(envKey, "the environment variable \(variable) is empty")
                return .invalid
            }
            return .found(Secret(value, source: "env \(variable)"))
        }
        if has(fileKey) {
            guard let given = text(fileKey) else { return .invalid }
            let path = context.absolute(given)
            context.noteNamedFile(path)
            switch context.files.read(path) {
            case .failure(let problem):
                fail(fileKey, "cannot read the secret file \(path): it \(problem)")
                return .invalid
            case .success(var bytes):
                while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { bytes.removeLast() }
                guard !bytes.isEmpty else {
                    fail(fileKey, "the secret file \(path) is empty")
                    return .invalid
                }
                return .found(Secret(bytes: bytes, source: "file \(path)"))
            }
        }
        return .absent
    }

    /// A file that must exist and be readable now (anchors, pinned certificates, identities).
    func existingFile(_ key: String) -> String? {
        guard let node = node(key) else { return nil }
        return ObjectReader.existingFile(node, at: keyPath(key), context: context)
    }

    static func existingFile(_ node: JSON5Node, at path: KeyPath, context: DecodingContext) -> String? {
        guard let given = string(node, at: path, context: context) else { return nil }
        guard !given.isEmpty else {
            context.fail(path, at: node.position, "must not be empty")
            return nil
        }
        let absolute = context.absolute(given)
        context.noteNamedFile(absolute)
        if let problem = context.files.problemReading(absolute) {
            let note = given.hasPrefix("/") ? "" : " (relative paths start at \(context.baseDirectory))"
            context.fail(path, at: node.position, "the file \(absolute) \(problem)\(note)")
            return nil
        }
        return absolute
    }

    /// A file holding a secret (a private key, a PKCS#12 bundle, a keytab): it must exist
    /// unless secrets are skipped, when only the path is checked.
    func secretFile(_ key: String) -> String? {
        guard context.secretReading == .skipped else { return existingFile(key) }
        guard let given = text(key) else { return nil }
        guard !given.isEmpty else {
            fail(key, "must not be empty")
            return nil
        }
        return context.absolute(given)
    }

    /// An array of files that must all exist.
    func existingFiles(_ key: String) -> [String]? {
        guard let elements = array(key) else { return nil }
        return elements.compactMap { ObjectReader.existingFile($0.node, at: $0.path, context: context) }
    }

    /// A path that may not exist yet (CA files, the state directory), made absolute.
    func futurePath(_ key: String) -> String? {
        text(key).map(context.absolute)
    }
}
