import COpenSSL
import CountersignTrust
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The local CA whose leaves Countersign presents to clients for intercepted hosts.
/// Created once (`ca init` or the first `run`), loaded at every start and reload.
public final class InterceptionCA: @unchecked Sendable {
    // Immutable after init; the wrapped OpenSSL objects are only read.
    public let certificatePath: String
    public let keyPath: String
    /// The name constraints in the certificate; nil when the CA may sign for any host.
    public let nameConstraints: NameConstraints?
    public let notBefore: Date
    public let notAfter: Date
    public let commonName: String
    /// SHA-256 of the certificate's DER, colon-separated hex.
    public let sha256Fingerprint: String
    public let certificatePEM: String
    public let certificate: Certificate
    let privateKey: PrivateKey

    static let validity: TimeInterval = 10 * 365 * 24 * 3600
    /// Backdating tolerates clients whose clocks run a little behind.
    static let backdating: TimeInterval = 3600

    init(certificate: Certificate, privateKey: PrivateKey, certificatePath: String, keyPath: String) {
        self.certificate = certificate
        self.privateKey = privateKey
        self.certificatePath = certificatePath
        self.keyPath = keyPath
        self.nameConstraints = NameConstraintsExtension.read(from: certificate.x509)
        self.notBefore = CertificateFacts.date(certificate.notBefore)
        self.notAfter = CertificateFacts.date(certificate.notAfter)
        self.commonName = CertificateFacts.commonName(certificate) ?? ""
        self.sha256Fingerprint = CertificateFacts.fingerprint(certificate)
        self.certificatePEM = certificate.pem
    }

    /// Whether leaves for `host` fall inside this CA's name constraints, so `check` can warn
    /// about a configured host that clients would reject. Takes a host or a configured
    /// pattern ("host:port", "*.suffix", IP literals).
    public func permits(host: String) -> Bool {
        guard let nameConstraints else { return (try? NameConstraints.subtree(forPattern: host)) != nil }
        return nameConstraints.permits(host: host)
    }

    /// Makes a new EC P-256 CA valid for about ten years and writes it: the key (PKCS#8 PEM)
    /// with mode 0600 from its creation, the certificate with mode 0644. Existing files are
    /// replaced only with `force`; otherwise nothing is written and the error names them.
    public static func create(certificatePath: String, keyPath: String, scope: CAScope, force: Bool,
                              machineName: String = localMachineName(), now: Date = Date()) throws -> InterceptionCA {
        if !force {
            let existing = [certificatePath, keyPath].filter(SecureFile.exists)
            if !existing.isEmpty {
                throw InterceptionError("refusing to overwrite the existing \(existing.joined(separator: " and ")); "
                    + "pass --force to replace the CA (clients that trust the old one must then trust the new one)")
            }
        }
        let key = try P256Key.generate()
        let draft = try CertificateDraft(subjectKey: key)
        draft.setSubject(commonName: String("Countersign interception CA (\(machineName))".prefix(64)))
        draft.setIssuer(nil)
        draft.setValidity(notBefore: now - backdating, notAfter: now + validity)
        try draft.addExtension(NID_basic_constraints, "critical,CA:TRUE,pathlen:0", issuer: nil)
        try draft.addExtension(NID_key_usage, "critical,keyCertSign,cRLSign", issuer: nil)
        try draft.addExtension(NID_subject_key_identifier, "hash", issuer: nil)
        if case .constrained(let constraints) = scope {
            try draft.addNameConstraints(constraints)
        }
        let certificate = try draft.sign(with: key)
        try SecureFile.write(P256Key.pkcs8PEM(key.evpKey), to: keyPath, mode: 0o600, replacing: force)
        try SecureFile.write(certificate.pem, to: certificatePath, mode: 0o644, replacing: force)
        return InterceptionCA(certificate: certificate, privateKey: key,
                              certificatePath: certificatePath, keyPath: keyPath)
    }

    /// Reads the CA back and checks that it can sign leaves now: the key matches the
    /// certificate, the certificate is a CA, and it has not expired.
    public static func load(certificatePath: String, keyPath: String, now: Date = Date()) throws -> InterceptionCA {
        let certificate = try readCertificate(certificatePath)
        let key = try PrivateKey(pem: try readBytes(keyPath, what: "interception CA key"),
                                 source: "the interception CA key \(keyPath)")
        guard key.matches(certificate) else {
            throw InterceptionError("the interception CA key \(keyPath) does not belong to the certificate \(certificatePath); "
                + "restore the matching pair or create a new CA with `countersign ca init --force`")
        }
        guard X509_check_ca(certificate.x509) >= 1 else {
            throw InterceptionError("\(certificatePath) is not a CA certificate (it may not sign other certificates); "
                + "create an interception CA with `countersign ca init`")
        }
        let ca = InterceptionCA(certificate: certificate, privateKey: key,
                                certificatePath: certificatePath, keyPath: keyPath)
        guard now < ca.notAfter else {
            throw InterceptionError("the interception CA \(certificatePath) expired on \(CertificateFacts.timestamp(ca.notAfter)); "
                + "create a new one with `countersign ca init --force` and make clients trust it")
        }
        return ca
    }

    /// The name shown in the CA's common name, so a person can tell which machine's CA they trust.
    public static func localMachineName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let name = String(cString: buffer)
        return name.isEmpty ? "localhost" : name
    }

    /// The first certificate of the CA certificate file.
    static func readCertificate(_ path: String) throws -> Certificate {
        let bytes = try readBytes(path, what: "interception CA certificate")
        return try Certificate.parsePEM(bytes, source: "the interception CA certificate \(path)")[0]
    }

    static func readBytes(_ path: String, what: String) throws -> [UInt8] {
        guard SecureFile.exists(path) else {
            throw InterceptionError("the \(what) \(path) does not exist; create it with `countersign ca init`")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw InterceptionError("cannot read the \(what) \(path); check its permissions")
        }
        return Array(data)
    }
}
