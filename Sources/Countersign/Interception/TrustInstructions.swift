import CountersignTrust
import Foundation

extension InterceptionCA {
    /// The text of `countersign ca show`: what the CA is, its PEM, and how to make common
    /// clients trust it. Reads only the certificate (never the key).
    public static func trustInstructions(certificatePath: String) throws -> String {
        let certificate = try readCertificate(certificatePath)
        let path = shellQuoted(absolute(certificatePath))
        let scope = NameConstraintsExtension.read(from: certificate.x509).map(\.description)
            ?? "none: it can sign for any host"
        return """
        Countersign interception CA
          certificate:      \(absolute(certificatePath))
          subject:          \(certificate.subject)
          SHA-256:          \(CertificateFacts.fingerprint(certificate))
          valid until:      \(UTCTimestamp.string(certificate.notAfter))
          name constraints: \(scope)

        \(certificate.pem)
        Clients reach intercepted hosts through Countersign only if they trust this CA.
        Pick the lines for your client:

        Debian / Ubuntu system store (curl, wget, apt, most OpenSSL and GnuTLS programs):
          sudo cp \(path) /usr/local/share/ca-certificates/countersign.crt
          sudo update-ca-certificates

        One process using OpenSSL (Python ssl, Ruby, PHP, git, ...). SSL_CERT_FILE replaces the
        system roots, and hosts Countersign does not intercept still need them, so give a bundle:
          cat /etc/ssl/certs/ca-certificates.crt \(path) > countersign-bundle.pem
          export SSL_CERT_FILE="$PWD/countersign-bundle.pem"

        Python requests (which ignores SSL_CERT_FILE; same bundle, same reason):
          export REQUESTS_CA_BUNDLE="$PWD/countersign-bundle.pem"

        Node.js (added to its built-in roots):
          export NODE_EXTRA_CA_CERTS=\(path)

        Java (the JDK's default trust store; the default store password is "changeit"):
          keytool -importcert -cacerts -noprompt -alias countersign -file \(path) -storepass changeit

        curl, for one request:
          curl --cacert \(path) --proxy "$HTTPS_PROXY" https://HOST/

        """
    }

    private static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// The path as one shell word: quoted only when it needs to be.
    private static func shellQuoted(_ text: String) -> String {
        let plain = text.unicodeScalars.allSatisfy { scalar in
            scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "/._-+=:@".unicodeScalars.contains(scalar)
        }
        return plain ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
