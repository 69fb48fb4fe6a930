/// What a name in an auth rule refers to.
enum ReferencedCredential {
    /// A credential that can answer challenges.
    case usable(CredentialConfig)
    /// Declared but with errors of its own (already reported): nothing more to check.
    case broken
    /// Undefined or an identity (already reported).
    case invalid

    var credential: CredentialConfig? {
        if case .usable(let credential) = self { return credential }
        return nil
    }
}

/// Checks the places that name a credential (auth rules, `identity`, the parent proxy's auth)
/// against what `credentials` declares and what each credential can answer.
struct CredentialReferences {
    /// Every name under `credentials`, even those whose entry had errors, so a broken
    /// credential is reported once and not again as "not defined" wherever it is used.
    let declared: [String]
    let decoded: [String: CredentialConfig]
    let context: DecodingContext

    /// The credential a rule names, reporting when it is undefined or cannot answer challenges.
    func answering(_ name: String, at path: KeyPath, position: SourcePosition) -> ReferencedCredential {
        guard declared.contains(name) else {
            reportUndefined(name, at: path, position: position)
            return .invalid
        }
        guard let credential = decoded[name] else { return .broken }
        if credential.isIdentity {
            context.fail(path, at: position, "\"\(name)\" is a client identity (\(credential.kindName)); identities are presented with `identity`, not used to answer challenges")
            return .invalid
        }
        return .usable(credential)
    }

    /// Whether an `inject` rule or a placeholder list may name `name`: a password, token or value
    /// credential whose secret can stand in a header (no control character), or an OAuth2
    /// credential (its access token, checked when it arrives). False after reporting, or
    /// silently for a credential already reported as broken.
    @discardableResult
    func injectable(_ name: String, at path: KeyPath, position: SourcePosition) -> Bool {
        guard declared.contains(name) else {
            reportUndefined(name, at: path, position: position)
            return false
        }
        guard let credential = decoded[name] else { return false }
        if case .oauth2 = credential { return true }
        guard let secret = credential.injectableSecret else {
            context.fail(path, at: position, "\"\(name)\" is a \(credential.kindName) credential; inject and placeholders take a password, token, value or OAuth2 credential (value_env / value_file for an API key)")
            return false
        }
        if let problem = HeaderSafety.problem(in: secret) {
            context.fail(path, at: position, "the secret of \"\(name)\" (from \(secret.source)) \(problem), which would split or corrupt a header; fix the secret")
            return false
        }
        return true
    }

    /// Checks `identity: "<name>"`.
    func checkIdentity(_ name: String, at path: KeyPath, position: SourcePosition) {
        guard declared.contains(name) else {
            reportUndefined(name, at: path, position: position)
            return
        }
        if let credential = decoded[name], !credential.isIdentity {
            context.fail(path, at: position, "\"\(name)\" is a \(credential.kindName) credential, not an identity; an identity has certificate + private_key or pkcs12")
        }
    }

    /// Parses `schemes` and checks each is answerable; default: all the credential answers.
    func schemes(in reader: ObjectReader, for reference: ReferencedCredential?, named name: String?) -> [AuthScheme]? {
        let credential = reference?.credential
        guard let elements = reader.array("schemes") else {
            if reader.has("schemes") { return nil }
            return credential?.answerableSchemes ?? []
        }
        guard !elements.isEmpty else {
            reader.fail("schemes", "must list at least one scheme, or be left out to allow every scheme the credential can answer")
            return nil
        }
        var schemes: [AuthScheme] = []
        var fine = true
        for (node, path) in elements {
            guard let scheme = scheme(node, at: path) else {
                fine = false
                continue
            }
            if schemes.contains(scheme) {
                context.fail(path, at: node.position, "\"\(scheme.rawValue)\" is listed twice" + aliasNote(scheme))
                fine = false
                continue
            }
            if let credential, let name, !credential.answerableSchemes.contains(scheme) {
                let answerable = credential.answerableSchemes.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                context.fail(path, at: node.position, "the credential \"\(name)\" (\(credential.kindName)) cannot answer \(scheme.rawValue); it answers \(answerable)")
                fine = false
                continue
            }
            schemes.append(scheme)
        }
        return fine ? schemes : nil
    }

    /// A scheme name or alias ("oauth2" for bearer), or a message listing the names.
    private func scheme(_ node: JSON5Node, at path: KeyPath) -> AuthScheme? {
        guard let text = ObjectReader.string(node, at: path, context: context) else { return nil }
        if let scheme = AuthScheme(configName: text) { return scheme }
        let names = AuthScheme.allCases.map(\.rawValue)
        var message = "\"\(text)\" is not one of " + names.map { "\"\($0)\"" }.joined(separator: ", ")
        if let guess = NearMiss.suggestion(for: text, among: names + AuthScheme.aliases.keys.sorted()) {
            message += " (did you mean \"\(guess)\"?)"
        }
        context.fail(path, at: node.position, message)
        return nil
    }

    private func aliasNote(_ scheme: AuthScheme) -> String {
        let aliases = AuthScheme.aliases.filter { $0.value == scheme }.keys.sorted()
        return aliases.isEmpty ? "" : " (" + aliases.map { "\"\($0)\"" }.joined(separator: ", ") + " is another name for it)"
    }

    private func reportUndefined(_ name: String, at path: KeyPath, position: SourcePosition) {
        var message = "the credential \"\(name)\" is not defined under `credentials`"
        if let guess = NearMiss.suggestion(for: name, among: declared) {
            message += " (did you mean \"\(guess)\"?)"
        } else if declared.isEmpty {
            message += "; add it there"
        } else {
            message += "; defined: " + declared.joined(separator: ", ")
        }
        context.fail(path, at: position, message)
    }
}
