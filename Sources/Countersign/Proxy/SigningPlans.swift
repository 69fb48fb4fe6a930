import CountersignConfig
import CountersignSigning
import CountersignTrust

/// Compiles each host's `sign` into a `HostSigner`: for RFC 9421 the key read (a PEM file, or an
/// HMAC secret), the algorithm chosen, the components parsed; for AWS SigV4 the keys (static, or
/// web identity) and the payload mode. Every problem names its key path, at
/// `check`, at start and on reload alike.
enum SigningPlans {
    static func compile(_ configuration: Configuration, problems: inout [String]) -> [String: HostSigner] {
        var signers: [String: HostSigner] = [:]
        for host in configuration.hosts.entries {
            do {
                if let sign = host.sign {
                    signers[host.pattern] = try signer(sign, in: configuration).map(HostSigner.messageSignature)
                } else if let sign = host.awsSign {
                    signers[host.pattern] = try awsSigner(sign, in: configuration).map(HostSigner.awsSigV4)
                }
            } catch {
                problems.append("hosts.\"\(host.pattern)\".sign: \(error)")
            }
        }
        return signers
    }

    private static func awsSigner(_ sign: AWSSignConfig, in configuration: Configuration) throws -> AWSHostSigning? {
        guard case .aws(let keys)? = configuration.credentials[sign.credential] else {
            throw AWSSigningError.invalidRequest("credential \(sign.credential) has no aws keys")
        }
        // `check --no-secrets` reads no web identity token.
        if case .webIdentity = keys, configuration.secretReading != .read { return nil }
        let signer = AWSHeadSigner(region: sign.region, service: sign.service, payload: AWSPayloadMode(rawValue: sign.payload.rawValue) ?? .signed)
        return AWSHostSigning(signer: signer, keys: try AWSKeySource(sign.credential, keys))
    }

    private static func signer(_ sign: SignConfig, in configuration: Configuration) throws -> RequestSigner? {
        guard case .signing(let keyConfig)? = configuration.credentials[sign.credential] else {
            throw SignatureError.invalidKey("credential \(sign.credential) has no signing key")
        }
        let components = try sign.components.map(SignatureComponent.parse)
        let key: MessageSigningKey
        switch keyConfig.source {
        case .hmac(let secret):
            key = try MessageSigningKey(sharedSecret: secret.bytes)
        case .privateKey(let path, let passphrase):
            // `check --no-secrets` opens no private key: the components are checked, no signer is made.
            guard configuration.secretReading == .read else { return nil }
            let privateKey = try PrivateKey.loadPEMFile(path: path, passphrase: passphrase?.string)
            key = try MessageSigningKey(privateKey: privateKey, algorithm: sign.algorithm.flatMap(SignatureAlgorithm.init(rawValue:)))
        }
        let digest: ContentDigester.Algorithm? = switch sign.contentDigest {
        case .sha256: .sha256
        case .sha512: .sha512
        case .none: nil
        }
        return RequestSigner(key: key, keyID: keyConfig.keyID, label: sign.label, components: components, digest: digest,
                             expiresIn: sign.expiresIn.map { Int64($0.rounded()) }, nonce: sign.nonce, tag: sign.tag)
    }
}

/// Compiles each host's `verify_responses` into a `ResponseVerifier`: the key read (a PEM
/// public key or an HMAC secret), the required components parsed.
enum VerifyingPlans {
    static func compile(_ configuration: Configuration, problems: inout [String]) -> [String: ResponseVerifier] {
        var verifiers: [String: ResponseVerifier] = [:]
        for host in configuration.hosts.entries {
            guard let verify = host.verifyResponses else { continue }
            do {
                verifiers[host.pattern] = try verifier(verify, in: configuration)
            } catch {
                problems.append("hosts.\"\(host.pattern)\".verify_responses: \(error)")
            }
        }
        return verifiers
    }

    private static func verifier(_ verify: VerifyConfig, in configuration: Configuration) throws -> ResponseVerifier {
        guard case .verifying(let keyConfig)? = configuration.credentials[verify.credential] else {
            throw SignatureError.invalidKey("credential \(verify.credential) has no verifying key")
        }
        let key: MessageVerifyingKey
        switch keyConfig.source {
        case .hmac(let secret): key = try MessageVerifyingKey(sharedSecret: secret.bytes)
        case .publicKey(let path): key = try MessageVerifyingKey(publicKey: PublicKey.loadPEMFile(path: path))
        }
        let requirements = VerificationRequirements(requiredComponents: try verify.components.map(SignatureComponent.parse),
                                                    maxAge: Int64(verify.maxAge.rounded()))
        return ResponseVerifier(key: key, keyID: keyConfig.keyID, requirements: requirements,
                                digestRule: verify.contentDigest == .required ? .required : .ifPresent)
    }
}
