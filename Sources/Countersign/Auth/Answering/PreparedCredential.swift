import Foundation
import CountersignSupport

/// The parts of a credential's answers that do not depend on the request, computed once per
/// configuration snapshot instead of once per request: the Basic and static Bearer header
/// values (checked and encoded when the configuration is loaded), and Digest's
/// H(user:realm:password) per protection space (realm and hash), computed on first use.
/// A reload builds new ones, so a changed password is never answered with the old value.
public final class PreparedCredential: @unchecked Sendable {
    /// The material these values were computed from; a scheme uses them only when the
    /// credential in hand is still this one.
    let material: CredentialMaterial
    /// `Basic base64(user:password)`, or why the credential cannot answer Basic.
    let basic: Result<SecretValue, AuthError>?
    /// `Bearer <token>` for a static token, or why the token cannot be sent.
    let bearer: Result<SecretValue, AuthError>?

    private struct DigestSpace: Hashable {
        let hash: HashFunction
        let realm: String
    }
    private let lock = Mutex(())
    private var digestSecrets: [DigestSpace: SecretValue] = [:]
    /// The last one asked for: a credential answers one realm again and again, and finding it
    /// here compares the realm instead of hashing it.
    private var lastDigestSecret: (space: DigestSpace, secret: SecretValue)?
    /// How many H(A1) were computed (tests check that the cache is used).
    private(set) var digestComputations = 0

    public init(_ material: CredentialMaterial) {
        self.material = material
        switch material {
        case .password(let user, let password, _):
            basic = Self.prepare { try BasicAnswer.authorization(user: user, password: password) }
            bearer = nil
        case .token(let token):
            basic = nil
            bearer = Self.prepare { try BearerAnswer.authorization(token: token) }
        case .ntHash, .oauth2, .kerberos:
            basic = nil
            bearer = nil
        }
    }

    private static func prepare(_ value: () throws -> String) -> Result<SecretValue, AuthError> {
        do {
            return .success(SecretValue(try value()))
        } catch let error as AuthError {
            return .failure(error)
        } catch {
            return .failure(AuthError("the credential cannot be used for this scheme"))
        }
    }

    /// Whether these values belong to `credential` (the same user and password, or token).
    func isPrepared(for credential: CredentialMaterial) -> Bool {
        switch (material, credential) {
        case let (.password(user, password, _), .password(otherUser, otherPassword, _)):
            return user == otherUser && password == otherPassword
        case let (.token(token), .token(other)):
            return token == other
        default:
            return false
        }
    }

    /// H(user ":" realm ":" password) in lower-case hex for this credential (RFC 7616 §3.4.2);
    /// the `-sess` variants hash it once more with the nonces, per answer.
    /// The last one asked for is compared before the credential is looked into (taking the
    /// user and password out of it cost four reference counts a request).
    func digestSecret(_ algorithm: DigestAlgorithm, realm: String) -> SecretValue? {
        let kept: SecretValue? = lock.withLock { _ in
            guard let last = lastDigestSecret, last.space.hash == algorithm.hash, last.space.realm == realm else { return nil }
            return last.secret
        }
        if let kept { return kept }
        guard case .password(let user, let password, _) = material else { return nil }
        let space = DigestSpace(hash: algorithm.hash, realm: realm)
        return lock.withLock { _ in
            // Every secret kept as the last one is in `digestSecrets` too.
            let secret: SecretValue
            if let known = digestSecrets[space] {
                secret = known
            } else {
                secret = SecretValue(bytes: algorithm.hexBytes("\(user):\(realm):\(password)"))
                digestComputations += 1
                digestSecrets[space] = secret
            }
            lastDigestSecret = (space, secret)
            return secret
        }
    }
}

extension PreparedCredential: CustomStringConvertible, CustomReflectable {
    public var description: String { "prepared answers for a \(material)" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }
}

/// One `PreparedCredential` per configured credential name.
public struct PreparedCredentials: Sendable, CustomStringConvertible, CustomReflectable {
    private let byName: [String: PreparedCredential]

    public init(_ credentials: [String: CredentialMaterial]) {
        byName = credentials.mapValues(PreparedCredential.init)
    }

    /// The prepared values of `name`, when they were prepared from `credential`.
    func prepared(_ name: String, for credential: CredentialMaterial) -> PreparedCredential? {
        guard let prepared = byName[name], prepared.isPrepared(for: credential) else { return nil }
        return prepared
    }

    public var description: String { "prepared answers for \(byName.count) credential(s)" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
