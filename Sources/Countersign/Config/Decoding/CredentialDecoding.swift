/// Decodes `credentials.<name>`: works out the one kind the keys describe and refuses mixtures.
struct CredentialDecoding {
    private enum Kind: String {
        case password, ntHash = "NT hash", token, value, oauth2 = "OAuth2", pem = "PEM identity", pkcs12 = "PKCS#12 identity"
        case signing = "signing key", verifying = "verifying key", aws = "AWS keys"

        /// The keys that, present, make a credential this kind.
        var definingKeys: [String] {
            switch self {
            case .password: return ["password_env", "password_file"]
            case .ntHash: return ["nt_hash_env", "nt_hash_file"]
            case .token: return ["token_env", "token_file"]
            case .value: return ["value_env", "value_file"]
            case .signing: return ["signing"]
            case .verifying: return ["verifying"]
            case .aws: return ["aws"]
            case .oauth2: return ["oauth2"]
            case .pem: return ["certificate", "private_key"]
            case .pkcs12: return ["pkcs12"]
            }
        }

        static let all: [Kind] = [.password, .ntHash, .token, .value, .oauth2, .pem, .pkcs12, .signing, .verifying, .aws]
    }

    static let keys = ["user", "password_env", "password_file", "nt_hash_env", "nt_hash_file", "workstation",
                       "token_env", "token_file", "value_env", "value_file", "signing", "verifying", "aws", "oauth2", "certificate", "private_key", "pkcs12",
                       "passphrase_env", "passphrase_file", "kerberos"]

    let context: DecodingContext

    func decode(_ node: JSON5Node, at path: KeyPath) -> CredentialConfig? {
        guard let reader = ObjectReader(node, at: path, context: context, keys: CredentialDecoding.keys) else { return nil }
        let kinds = Kind.all.filter { $0.definingKeys.contains(where: reader.has) }
        if let node = reader.node("kerberos") { return kerberosCredential(node, kinds: kinds, reader: reader, at: path) }
        guard let kind = kinds.first else {
            context.fail(path, at: node.position, "has no secret; give one of password_env/password_file, nt_hash_env/nt_hash_file, token_env/token_file, value_env/value_file, signing, verifying, aws, oauth2, kerberos, certificate + private_key, or pkcs12")
            return nil
        }
        guard kinds.count == 1 else {
            let described = kinds.map { kind in
                "a \(kind.rawValue) (\(kind.definingKeys.filter(reader.has).joined(separator: ", ")))"
            }
            context.fail(path, at: node.position, "mixes the keys of \(described.joined(separator: " and ")); a credential has exactly one kind, so split it into separate credentials")
            return nil
        }
        return decode(kind, reader)
    }

    private func decode(_ kind: Kind, _ reader: ObjectReader) -> CredentialConfig? {
        guard allowsAuxiliaryKeys(of: kind, in: reader) else { return nil }
        switch kind {
        case .password, .ntHash:
            let user = reader.required("user", hint: "add user: \"name\" (\"DOMAIN\\\\name\" for NTLM)") != nil ? reader.text("user") : nil
            let workstation = reader.text("workstation")
            if kind == .password {
                guard let user, let password = reader.secret("password").secret else { return nil }
                return .password(user: user, password: password, workstation: workstation)
            }
            guard let user, let hash = ntHash(reader) else { return nil }
            return .ntHash(user: user, ntHash: hash, workstation: workstation)
        case .token:
            return reader.secret("token").secret.map(CredentialConfig.token)
        case .value:
            return reader.secret("value").secret.map(CredentialConfig.value)
        case .signing:
            return reader.node("signing").flatMap { signingKey($0, at: reader.keyPath("signing")) }.map(CredentialConfig.signing)
        case .aws:
            return reader.node("aws").flatMap { awsKeys($0, at: reader.keyPath("aws")) }.map(CredentialConfig.aws)
        case .verifying:
            return reader.node("verifying").flatMap { verifyingKey($0, at: reader.keyPath("verifying")) }.map(CredentialConfig.verifying)

        case .oauth2:
            return reader.node("oauth2").flatMap { oauth2($0, at: reader.keyPath("oauth2")) }.map(CredentialConfig.oauth2)
        case .pem:
            let certificate = reader.required("certificate", hint: "add certificate: \"certs/client.pem\"") != nil
                ? reader.existingFile("certificate") : nil
            let key = reader.required("private_key", hint: "add private_key: \"certs/client.key\"") != nil
                ? reader.secretFile("private_key") : nil
            let passphrase = reader.secret("passphrase")
            guard let certificate, let key, !isInvalid(passphrase) else { return nil }
            return .pemIdentity(certificatePath: certificate, privateKeyPath: key, passphrase: passphrase.secret)
        case .pkcs12:
            let file = reader.secretFile("pkcs12")
            let passphrase = reader.secret("passphrase")
            guard let file, !isInvalid(passphrase) else { return nil }
            return .pkcs12Identity(path: file, passphrase: passphrase.secret)
        }
    }

    // MARK: - Kerberos

    /// `kerberos: { ... }`, alone or beside a password / NT hash identity (what NTLM falls back with).
    private func kerberosCredential(_ node: JSON5Node, kinds: [Kind], reader: ObjectReader, at path: KeyPath) -> CredentialConfig? {
        let others = kinds.filter { $0 != .password && $0 != .ntHash }
        guard others.isEmpty else {
            let keys = others.flatMap { $0.definingKeys.filter(reader.has) }.joined(separator: ", ")
            context.fail(path, at: reader.position, "mixes kerberos with \(keys); next to kerberos a credential may carry only a user with password_env/password_file or nt_hash_env/nt_hash_file (for NTLM), so move the rest to a credential of its own")
            return nil
        }
        let kerberos = self.kerberos(node, at: reader.keyPath("kerberos"))
        if kinds.isEmpty {
            let errorsBefore = context.errors.count
            for key in ["user", "workstation"] where reader.has(key) {
                reader.fail(key, "\(key) belongs to the NTLM identity kept next to kerberos, which needs password_env/password_file or nt_hash_env/nt_hash_file too; add one, or remove \(key) (the Kerberos principal goes in kerberos.principal)")
            }
            for key in ["passphrase_env", "passphrase_file"] where reader.has(key) {
                reader.fail(key, "a passphrase applies only to identities (certificate + private_key, or pkcs12); remove it")
            }
            guard let kerberos, context.errors.count == errorsBefore else { return nil }
            return .kerberos(kerberos, alongside: nil)
        }
        guard kinds.count == 1 else {
            context.fail(path, at: reader.position, "mixes password_env/password_file with nt_hash_env/nt_hash_file; the NTLM identity next to kerberos has one of them")
            return nil
        }
        let alongside = decode(kinds[0], reader)
        guard let kerberos, let alongside else { return nil }
        return .kerberos(kerberos, alongside: alongside)
    }

    private func kerberos(_ node: JSON5Node, at path: KeyPath) -> KerberosConfig? {
        let keys = ["principal", "keytab_file", "password_env", "password_file", "ccache", "krb5_conf"]
        guard let reader = ObjectReader(node, at: path, context: context, keys: keys) else { return nil }
        let errorsBefore = context.errors.count
        let principal = reader.required("principal", hint: "add principal: \"svc@CORP.EXAMPLE\"") != nil ? reader.text("principal") : nil
        if let principal, !Self.isPrincipal(principal) {
            reader.fail("principal", "\"\(principal)\" is not a Kerberos principal with its realm; write it as \"name@REALM\", e.g. \"svc@CORP.EXAMPLE\"")
        }
        let sources = ["keytab_file", "password_env", "password_file", "ccache"].filter(reader.has)
        guard sources.count <= 1 || sources == ["password_env", "password_file"] else {
            reader.fail(sources[1], "give exactly one of keytab_file, password_env / password_file, or ccache; this credential names \(sources.joined(separator: " and "))")
            return nil
        }
        var source: KerberosConfig.Source?
        if reader.has("keytab_file") {
            source = reader.secretFile("keytab_file").map { .keytab(path: $0) }
        } else if reader.has("ccache") {
            source = reader.text("ccache").flatMap { ccache($0, reader) }
        } else {
            switch reader.secret("password") {
            case .found(let secret): source = .password(secret)
            case .invalid: break
            case .absent:
                context.fail(path, at: node.position, "has no source of tickets; add keytab_file: \"/run/secrets/svc.keytab\", password_env / password_file, or ccache: \"FILE:/tmp/krb5cc_app\"")
            }
        }
        let krb5Conf = reader.existingFile("krb5_conf")
        guard context.errors.count == errorsBefore, let principal, let source else { return nil }
        return KerberosConfig(principal: principal, source: source, krb5Conf: krb5Conf)
    }

    /// "name@REALM" (name components may contain "/"); no spaces or control characters.
    static func isPrincipal(_ text: String) -> Bool {
        guard let at = text.lastIndex(of: "@"), at != text.startIndex, text.index(after: at) != text.endIndex else { return false }
        return !text.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7f }
    }

    /// "FILE:/path", "DIR:/path", "KEYRING:…", "KCM:…", "MEMORY:…"; a bare path is a FILE cache.
    /// A file-based cache must exist now. It is not watched for reloads: the Kerberos library
    /// itself writes the service tickets it gets into it, and Countersign reads it again before
    /// its tickets run out anyway.
    private func ccache(_ name: String, _ reader: ObjectReader) -> KerberosConfig.Source? {
        let colon = name.firstIndex(of: ":")
        let type = colon.map { String(name[..<$0]).uppercased() } ?? "FILE"
        let residual = colon.map { String(name[name.index(after: $0)...]) } ?? name
        guard ["FILE", "DIR", "KEYRING", "KCM", "MEMORY"].contains(type) else {
            reader.fail("ccache", "\"\(type)\" is not a credential cache type; write FILE:/path (or DIR:, KEYRING:, KCM:)")
            return nil
        }
        guard type == "FILE" || type == "DIR" else { return .ccache(name) }
        let path = context.absolute(residual)
        if type == "FILE", let problem = context.files.problemReading(path) {
            reader.fail("ccache", "the credential cache \(path) \(problem); fill it with kinit first, or use keytab_file")
            return nil
        }
        return .ccache("\(type):\(path)")
    }

    /// `user`/`workstation` belong to password-like kinds, `passphrase_*` to identities.
    private func allowsAuxiliaryKeys(of kind: Kind, in reader: ObjectReader) -> Bool {
        var fine = true
        let passwordLike = kind == .password || kind == .ntHash
        for key in ["user", "workstation"] where reader.has(key) && !passwordLike {
            reader.fail(key, "\(key) does not apply to a \(kind.rawValue) credential; remove it")
            fine = false
        }
        let identity = kind == .pem || kind == .pkcs12
        for key in ["passphrase_env", "passphrase_file"] where reader.has(key) && !identity {
            reader.fail(key, "a passphrase applies only to identities (certificate + private_key, or pkcs12); remove it")
            fine = false
        }
        return fine
    }

    private func isInvalid(_ lookup: SecretLookup) -> Bool {
        if case .invalid = lookup { return true }
        return false
    }

    /// 32 hex digits, kept as the 16 bytes NTLM uses.
    private func ntHash(_ reader: ObjectReader) -> Secret? {
        guard let raw = reader.secret("nt_hash").secret else { return nil }
        if context.secretReading == .skipped { return Secret(bytes: [UInt8](repeating: 0, count: 16), source: raw.source) }
        let key = reader.has("nt_hash_env") ? "nt_hash_env" : "nt_hash_file"
        let text = raw.string.trimmingSpaces()
        var bytes: [UInt8] = []
        var digits = text.unicodeScalars.makeIterator()
        while let high = digits.next() {
            guard let low = digits.next(), let h = UInt8(String(high), radix: 16), let l = UInt8(String(low), radix: 16) else { break }
            bytes.append(h << 4 | l)
        }
        guard text.unicodeScalars.count == 32, bytes.count == 16 else {
            reader.fail(key, "the NT hash from \(raw.source) must be 32 hex digits (the MD4 of the UTF-16LE password)")
            return nil
        }
        return Secret(bytes: bytes, source: raw.source)
    }

    /// `signing: { key_id, hmac_secret_env | hmac_secret_file | private_key (+ passphrase) }`.
    private func signingKey(_ node: JSON5Node, at path: KeyPath) -> SigningKeyConfig? {
        let keys = ["key_id", "hmac_secret_env", "hmac_secret_file", "private_key", "passphrase_env", "passphrase_file"]
        guard let reader = ObjectReader(node, at: path, context: context, keys: keys) else { return nil }
        let keyID = reader.required("key_id", hint: "add key_id: \"the keyid the verifier knows this key by\"") != nil ? reader.text("key_id") : nil
        guard let source = keySource(reader, fileKey: "private_key", example: "certs/sign.key") else { return nil }
        let passphrase = reader.secret("passphrase")
        if case .hmac = source, reader.has("passphrase_env") || reader.has("passphrase_file") {
            reader.fail(reader.has("passphrase_env") ? "passphrase_env" : "passphrase_file", "a passphrase applies to private_key only; remove it")
            return nil
        }
        if case .invalid = passphrase { return nil }
        guard let keyID else { return nil }
        switch source {
        case .hmac(let secret): return SigningKeyConfig(keyID: keyID, source: .hmac(secret))
        case .file(let path): return SigningKeyConfig(keyID: keyID, source: .privateKey(path: path, passphrase: passphrase.secret))
        }
    }

    /// `verifying: { key_id, hmac_secret_env | hmac_secret_file | public_key }`.
    private func verifyingKey(_ node: JSON5Node, at path: KeyPath) -> VerifyingKeyConfig? {
        let keys = ["key_id", "hmac_secret_env", "hmac_secret_file", "public_key"]
        guard let reader = ObjectReader(node, at: path, context: context, keys: keys) else { return nil }
        let keyID = reader.required("key_id", hint: "add key_id: \"the keyid the origin signs with\"") != nil ? reader.text("key_id") : nil
        guard let source = keySource(reader, fileKey: "public_key", example: "certs/api-sign.pub"), let keyID else { return nil }
        switch source {
        case .hmac(let secret): return VerifyingKeyConfig(keyID: keyID, source: .hmac(secret))
        case .file(let path): return VerifyingKeyConfig(keyID: keyID, source: .publicKey(path: path))
        }
    }

    /// `aws: { access_key_id_env | _file, secret_access_key_env | _file, session_token_env | _file }`,
    /// or web identity: `aws: { role_arn, web_identity_token_file, sts_endpoint, role_session_name, duration }`.
    private func awsKeys(_ node: JSON5Node, at path: KeyPath) -> AWSCredentialsConfig? {
        let staticKeys = ["access_key_id_env", "access_key_id_file", "secret_access_key_env", "secret_access_key_file",
                          "session_token_env", "session_token_file"]
        let identityKeys = ["role_arn", "web_identity_token_file", "sts_endpoint", "role_session_name", "duration"]
        guard let reader = ObjectReader(node, at: path, context: context, keys: staticKeys + identityKeys) else { return nil }
        let usesIdentity = identityKeys.contains(where: reader.has)
        if usesIdentity, let mixed = staticKeys.first(where: reader.has) {
            reader.fail(mixed, "give either static keys or web identity (role_arn + web_identity_token_file), not both")
            return nil
        }
        if usesIdentity { return webIdentity(reader).map(AWSCredentialsConfig.webIdentity) }
        let accessKey = reader.secret("access_key_id"), secretKey = reader.secret("secret_access_key"), token = reader.secret("session_token")
        if case .absent = accessKey { context.fail(path, at: node.position, "missing the access key id; add access_key_id_env or access_key_id_file (or role_arn + web_identity_token_file)") }
        if case .absent = secretKey { context.fail(path, at: node.position, "missing the secret access key; add secret_access_key_env or secret_access_key_file") }
        guard let accessKeyID = accessKey.secret, let secret = secretKey.secret, !isInvalid(token) else { return nil }
        if let problem = HeaderSafety.problem(in: accessKeyID) ?? token.secret.flatMap(HeaderSafety.problem(in:)) {
            context.fail(path, at: node.position, "the access key id or session token \(problem), and SigV4 puts both in headers; fix the secret")
            return nil
        }
        return .keys(AWSKeysConfig(accessKeyID: accessKeyID, secretAccessKey: secret, sessionToken: token.secret))
    }

    private func webIdentity(_ reader: ObjectReader) -> AWSWebIdentityConfig? {
        let errorsBefore = context.errors.count
        let role = reader.required("role_arn", hint: "add role_arn: \"arn:aws:iam::123456789012:role/app\"") != nil
            ? reader.parsed("role_arn") { text -> String in
                guard text.hasPrefix("arn:"), text.utf8.count <= 2048, HeaderSafety.problem(in: Secret(text, source: "")) == nil else {
                    throw ValueError("\"\(text)\" is not an IAM role ARN (arn:aws:iam::ACCOUNT:role/NAME)")
                }
                return text
            } : nil
        let tokenFile = reader.required("web_identity_token_file", hint: "add web_identity_token_file: \"/var/run/secrets/eks.amazonaws.com/serviceaccount/token\"") != nil
            ? reader.secretFile("web_identity_token_file") : nil
        let endpoint = reader.parsed("sts_endpoint", EndpointURL.init(parsing:))
        // Plain http only to this machine (a local STS emulator): anywhere else the token and the keys would travel in clear text.
        if let endpoint, endpoint.scheme != "https", !["127.0.0.1", "::1", "localhost"].contains(endpoint.host) {
            reader.fail("sts_endpoint", "the web identity token and the keys STS answers would travel in clear text; use an https:// sts_endpoint (http:// only to 127.0.0.1, ::1 or localhost)")
        }
        let sessionName = reader.parsed("role_session_name") { text -> String in
            // STS: 2 to 64 of [\w+=,.@-].
            guard (2...64).contains(text.utf8.count), text.utf8.allSatisfy({ byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || Array("_+=,.@-".utf8).contains(byte)
            }) else { throw ValueError("\"\(text)\" is not a role session name (2 to 64 letters, digits and _+=,.@-)") }
            return text
        }
        let duration = reader.duration("duration")
        if let duration, !(900...43_200).contains(duration) { reader.fail("duration", "must be 15m to 12h (what STS allows)") }
        guard context.errors.count == errorsBefore, let role, let tokenFile else { return nil }
        return AWSWebIdentityConfig(roleARN: role, tokenFile: tokenFile, stsEndpoint: endpoint ?? AWSWebIdentityConfig.defaultEndpoint,
                                    sessionName: sessionName ?? AWSWebIdentityConfig.defaultSessionName,
                                    durationSeconds: duration.map { Int($0) })
    }

    private enum KeySource {
        case hmac(Secret)
        case file(String)
    }

    /// Exactly one of an HMAC secret and a key file.
    private func keySource(_ reader: ObjectReader, fileKey: String, example: String) -> KeySource? {
        let hasSecret = reader.has("hmac_secret_env") || reader.has("hmac_secret_file")
        switch (hasSecret, reader.has(fileKey)) {
        case (true, true):
            reader.fail(fileKey, "give either an HMAC secret (hmac_secret_env / hmac_secret_file) or \(fileKey), not both")
            return nil
        case (false, false):
            context.fail(reader.path, at: reader.position, "has no key; add hmac_secret_env / hmac_secret_file (hmac-sha256) or \(fileKey): \"\(example)\"")
            return nil
        case (true, false):
            return reader.secret("hmac_secret").secret.map(KeySource.hmac)
        case (false, true):
            return reader.secretFile(fileKey).map(KeySource.file)
        }
    }

    private func oauth2(_ node: JSON5Node, at path: KeyPath) -> OAuth2Config? {
        let keys = ["token_url", "client_id", "client_secret_env", "client_secret_file", "scope", "auth"]
        guard let reader = ObjectReader(node, at: path, context: context, keys: keys) else { return nil }
        let url = reader.required("token_url", hint: "add token_url: \"https://idp.example.com/oauth/token\"") != nil
            ? reader.parsed("token_url", EndpointURL.init(parsing:)) : nil
        let clientID = reader.required("client_id", hint: "add client_id: \"your-client-id\"") != nil
            ? reader.text("client_id") : nil
        let secret = reader.secret("client_secret")
        if case .absent = secret {
            context.fail(path, at: node.position, "missing the client secret; add client_secret_env or client_secret_file")
        }
        let scope = reader.text("scope")
        let auth = reader.choice("auth", of: OAuth2Config.ClientAuthentication.self)
        if reader.has("auth") && auth == nil { return nil }
        guard let url, let clientID, let clientSecret = secret.secret else { return nil }
        if url.scheme != "https" {
            reader.fail("token_url", "the client secret would travel in clear text; use an https:// token_url")
            return nil
        }
        return OAuth2Config(tokenURL: url, clientID: clientID, clientSecret: clientSecret, scope: scope, auth: auth ?? .basic)
    }
}
