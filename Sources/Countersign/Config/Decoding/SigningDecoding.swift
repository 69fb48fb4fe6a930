/// Decodes `hosts.<pattern>.sign` and `.verify_responses`. The component lists are checked for
/// their shape here; what each component means is checked when the snapshot is compiled (the
/// signature code owns that grammar), with the same key path in the message.
struct SigningDecoding {
    let context: DecodingContext
    let references: CredentialReferences

    func sign(_ node: JSON5Node, at path: KeyPath) -> SignConfig? {
        let keys = ["credential", "format", "components", "content_digest", "label", "expires_in", "nonce", "tag", "algorithm"]
        guard let reader = ObjectReader(node, at: path, context: context, keys: keys) else { return nil }
        let errorsBefore = context.errors.count
        let credential = key(reader, kind: "signing", example: "{ signing: { key_id: \"app-1\", hmac_secret_env: \"SIG_SECRET\" } }")
        if reader.required("format", hint: "add format: \"rfc9421\" or \"aws-sigv4\"") != nil { _ = reader.choice("format", of: SignConfig.Format.self) }
        let components = self.components(reader) ?? SignConfig.defaultComponents
        let digest = reader.choice("content_digest", of: SignConfig.ContentDigest.self) ?? .sha256
        if digest == .none, components.contains("content-digest") {
            reader.fail("components", "covers content-digest but content_digest is \"none\", so there would be none to cover; choose \"sha-256\" or \"sha-512\", or leave content-digest out")
        }
        let label = reader.text("label") ?? "sig1"
        if !Self.isKey(label) {
            reader.fail("label", "\"\(label)\" is not a structured-field key: lower-case letters, digits, _ - . *, starting with a letter or *")
        }
        let expiresIn = reader.duration("expires_in")
        let tag = reader.string("tag")
        if let tag, !tag.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { reader.fail("tag", "must be printable ASCII") }
        let algorithm = reader.choice("algorithm", of: SigningAlgorithmChoice.self)
        guard context.errors.count == errorsBefore, let credential else { return nil }
        return SignConfig(credential: credential, components: components, contentDigest: digest, label: label, expiresIn: expiresIn,
                          nonce: reader.bool("nonce") ?? true, tag: tag, algorithm: algorithm?.rawValue)
    }

    /// Whether a `sign` object asks for AWS Signature V4 (its keys then differ).
    static func isAWSFormat(_ node: JSON5Node) -> Bool {
        guard case .object(let members) = node.value else { return false }
        return members.contains { member in
            if member.key == "format", case .string("aws-sigv4") = member.value.value { return true }
            return false
        }
    }

    /// `sign: { credential, format: "aws-sigv4", region, service, payload }`.
    func awsSign(_ node: JSON5Node, at path: KeyPath) -> AWSSignConfig? {
        let keys = ["credential", "format", "region", "service", "payload"]
        guard let reader = ObjectReader(node, at: path, context: context, keys: keys) else { return nil }
        let errorsBefore = context.errors.count
        let credential = key(reader, kind: "aws", example: "{ aws: { access_key_id_env: \"AWS_ACCESS_KEY_ID\", secret_access_key_env: \"AWS_SECRET_ACCESS_KEY\" } }")
        let region = reader.parsed("region", Self.awsName)
        let service = reader.parsed("service", Self.awsName)
        let payload = reader.choice("payload", of: AWSSignConfig.Payload.self) ?? .signed
        guard context.errors.count == errorsBefore, let credential else { return nil }
        return AWSSignConfig(credential: credential, region: region, service: service, payload: payload)
    }

    /// A region or service name: lower-case letters, digits and `-` (they go into the credential scope).
    static func awsName(_ text: String) throws -> String {
        guard !text.isEmpty, text.utf8.allSatisfy({ ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "-") }) else {
            throw ValueError("\"\(text)\" is not an AWS region or service name (lower-case letters, digits and -, e.g. \"eu-west-1\", \"s3\")")
        }
        return text
    }

    func verify(_ node: JSON5Node, at path: KeyPath) -> VerifyConfig? {
        let keys = ["credential", "components", "max_age", "content_digest"]
        guard let reader = ObjectReader(node, at: path, context: context, keys: keys) else { return nil }
        let errorsBefore = context.errors.count
        let credential = key(reader, kind: "verifying", example: "{ verifying: { key_id: \"api-1\", public_key: \"certs/api-sign.pub\" } }")
        let components = self.components(reader) ?? VerifyConfig.defaultComponents
        let maxAge = reader.duration("max_age") ?? 300
        let digest = reader.choice("content_digest", of: VerifyConfig.ContentDigest.self) ?? .required
        guard context.errors.count == errorsBefore, let credential else { return nil }
        return VerifyConfig(credential: credential, components: components, maxAge: maxAge, contentDigest: digest)
    }

    /// The credential name, which must be a signing (or verifying) key.
    private func key(_ reader: ObjectReader, kind: String, example: String) -> String? {
        guard reader.required("credential", hint: "add credential: \"<a credential with \(kind)>\"") != nil,
              let name = reader.text("credential"), let node = reader.node("credential") else { return nil }
        guard references.declared.contains(name) else {
            references.injectable(name, at: reader.keyPath("credential"), position: node.position)
            return nil
        }
        switch references.decoded[name] {
        case nil: return nil
        case .signing? where kind == "signing", .verifying? where kind == "verifying", .aws? where kind == "aws": return name
        case let other?:
            reader.fail("credential", "\"\(name)\" is a \(other.kindName) credential; this needs one with \(kind), e.g. \(name): \(example)")
            return nil
        }
    }

    private func components(_ reader: ObjectReader) -> [String]? {
        guard let elements = reader.array("components") else { return nil }
        var names: [String] = []
        for (node, path) in elements {
            guard let name = ObjectReader.string(node, at: path, context: context) else { continue }
            if name.isEmpty { context.fail(path, at: node.position, "must not be empty") }
            if names.contains(name) { context.fail(path, at: node.position, "\(name) is listed twice") }
            names.append(name)
        }
        return names
    }

    static func isKey(_ text: String) -> Bool {
        guard let first = text.utf8.first, (first >= UInt8(ascii: "a") && first <= UInt8(ascii: "z")) || first == UInt8(ascii: "*") else { return false }
        return text.utf8.allSatisfy { ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || "_-.*".utf8.contains($0) }
    }
}

/// `sign.algorithm`: only RSA keys have a choice to make.
enum SigningAlgorithmChoice: String, CaseIterable {
    case rsaV15 = "rsa-v1_5-sha256"
    case rsaPSS = "rsa-pss-sha512"
}
