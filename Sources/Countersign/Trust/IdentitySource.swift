/// Where a client identity comes from, as configured (secrets already resolved by the config layer).
public enum IdentitySource: Sendable, Equatable {
    case pem(certificatePath: String, keyPath: String, passphrase: String?)
    case pkcs12(path: String, passphrase: String?)

    public func load() throws -> ClientIdentity {
        switch self {
        case .pem(let certificatePath, let keyPath, let passphrase):
            return try ClientIdentity.load(pem: certificatePath, keyPath: keyPath, passphrase: passphrase)
        case .pkcs12(let path, let passphrase):
            return try ClientIdentity.load(pkcs12: path, passphrase: passphrase)
        }
    }
}

extension IdentitySource: CustomStringConvertible {
    /// Paths only: passphrases never appear.
    public var description: String {
        switch self {
        case .pem(let certificatePath, let keyPath, _): return "PEM \(certificatePath) + \(keyPath)"
        case .pkcs12(let path, _): return "PKCS#12 \(path)"
        }
    }
}
