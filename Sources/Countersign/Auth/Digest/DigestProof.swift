import CountersignHTTP
import Glibc

/// What a Digest answer lets the proxy check of the server's `Authentication-Info` (RFC 7616
/// §3.5): the `rspauth` the server must send back, and the nc and cnonce the answer went with.
/// The rspauth is computed with the answer's own response from the same KD state
/// (`DigestNoncePrefix.answer`), so the check is a comparison and no hash state (what H(A1),
/// password-equivalent for the realm, hashed to) outlives the answer. A value: no object, and
/// nothing to wipe, per answer (the expected rspauth is what the server sends in the clear).
/// Plain data, no reference: the answer's record copies it as bytes. The cnonce is the
/// session's for its nonce (`DigestSession.clientNonce`), given to the check.
struct DigestProof: Sendable, CustomStringConvertible {
    let algorithm: DigestAlgorithm
    /// The nonce count sent (nil without qop).
    let count: UInt32?
    /// qop=auth-int rather than auth (with a count).
    let protectsBody: Bool
    /// A cnonce went with the answer (a qop, or a `-sess` algorithm).
    let sentClientNonce: Bool
    /// KD(H(A1), nonce ":" nc ":" cnonce ":" qop ":" H(":" uri [":" H(body)])), lower-case hex.
    let rspauth: DigestHex

    /// The qop sent: auth or auth-int with a count, none without.
    var qop: String? { count == nil ? nil : protectsBody ? "auth-int" : "auth" }

    var description: String { "Digest proof (\(algorithm), qop \(qop ?? "none"))" }

    /// Whether the server's `Authentication-Info` proves it knows the password too: `rspauth`
    /// present and equal (in any case) to the one expected, and `cnonce` and `nc`, when given,
    /// the ones sent. The parameters are checked one by one as they are read (`DigestReply`),
    /// on their bytes where they lie. Made only with a proof (`DigestReply` reads a reply
    /// without one past every parameter): the proof is read in place, not copied out of an
    /// optional for each parameter. Plain data: the cnonce sent is lent to `cnonce` rather
    /// than held, so the check takes no reference and has nothing to release.
    struct Check {
        private let proof: DigestProof
        private var rspauth: Bool?
        private var othersSent = true

        init(_ proof: DigestProof) {
            self.proof = proof
        }

        /// Nil when the server sent no `rspauth` (no verdict), else whether it proves the answer.
        var verdict: Bool? { rspauth.map { $0 && othersSent } }

        mutating func rspauth(_ given: UnsafeBufferPointer<UInt8>) {
            rspauth = proof.rspauth.withBytes { expected in
                // Servers write it in lower case as the RFC does; any case is the same hex.
                guard given.count == expected.count, !Self.equal(given, expected) else { return given.count == expected.count }
                for index in 0..<given.count {
                    let byte = given[index]
                    if (byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte) != expected[index] { return false }
                }
                return true
            }
        }

        /// `sent` is the cnonce of the answer's session (`DigestSession.clientNonce`); it went
        /// with the answer only when `proof.sentClientNonce`.
        mutating func cnonce(_ given: UnsafeBufferPointer<UInt8>, sent: String?) {
            guard proof.sentClientNonce, let sent else { return othersSent = false }
            let same = sent.utf8.withContiguousStorageIfAvailable { Self.equal(given, UnsafeRawBufferPointer($0)) }
                ?? Array(sent.utf8).withUnsafeBytes { Self.equal(given, $0) }
            othersSent = othersSent && same
        }

        /// The count as sent: 8 lower-case hex digits (`DigestNonceCount`).
        mutating func nc(_ given: UnsafeBufferPointer<UInt8>) {
            guard let count = proof.count else { return othersSent = false }
            othersSent = othersSent && DigestNonceCount(count).withBytes { Self.equal(given, $0) }
        }

        private static func equal(_ given: UnsafeBufferPointer<UInt8>, _ sent: UnsafeRawBufferPointer) -> Bool {
            given.count == sent.count && (given.count == 0 || memcmp(given.baseAddress!, sent.baseAddress!, given.count) == 0)
        }
    }
}
