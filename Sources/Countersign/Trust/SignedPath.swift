import COpenSSL
import CountersignSupport

/// The verified path when chain validation is skipped (`allow_invalid_certificates`): the
/// leaf, then each served certificate that follows it for as long as its key verifies the
/// signature on the one before. A certificate appended without having signed its
/// predecessor is public material anyone can send, so the path stops there.
enum SignedPath {
    static func of(_ served: [Certificate]) -> [Certificate] {
        guard var previous = served.first else { return [] }
        var path = [previous]
        for next in served.dropFirst() {
            guard let key = X509_get0_pubkey(next.x509), X509_verify(previous.x509, key) == 1 else { break }
            path.append(next)
            previous = next
        }
        // A failed X509_verify leaves its reason on the thread's queue: not an error here.
        OpenSSLErrorQueue.clear()
        return path
    }
}
