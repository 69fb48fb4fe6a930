import COpenSSL

/// A set of trust anchors as an `X509_STORE*`, built once per compiled policy and shared by
/// every connection that policy evaluates (OpenSSL locks the store internally).
public final class TrustStore: @unchecked Sendable {
    let store: OpaquePointer
    /// Names the store in facts and messages: "system roots", "anchors", "anchors and system roots", ...
    public let label: String
    /// The anchors added explicitly (empty for the system roots alone).
    public let anchors: [Certificate]

    /// `anchors` as trust anchors (each one trusted as is, even an intermediate or a leaf),
    /// plus the system roots when `includeSystemRoots` is set.
    public init(anchors: [Certificate], includeSystemRoots: Bool, label: String) throws {
        guard let store = X509_STORE_new() else { throw TrustError("cannot allocate a certificate store") }
        self.store = store
        // RFC 5280's structural rules that OpenSSL otherwise lets pass (x509-limbo): key
        // identifiers present, CA basicConstraints critical, no empty subject without a critical
        // SAN, no keyCertSign or pathLen on a non-CA, no explicit EC parameters.
        X509_STORE_set_flags(store, UInt(X509_V_FLAG_X509_STRICT))
        self.label = label
        self.anchors = anchors
        for anchor in anchors {
            guard X509_STORE_add_cert(store, anchor.x509) == 1 else {
                throw TrustError.withOpenSSLReason("cannot add anchor \(anchor.subject) to the \(label) store")
            }
        }
        if !anchors.isEmpty {
            // An anchor is trusted as configured: it need not be a self-signed root.
            X509_STORE_set_flags(store, UInt(X509_V_FLAG_PARTIAL_CHAIN))
        }
        if includeSystemRoots, X509_STORE_set_default_paths(store) != 1 {
            throw TrustError.withOpenSSLReason("cannot load the system root certificates")
        }
    }

    /// The operating system's roots only (Debian: /etc/ssl/certs).
    public static func systemRoots() throws -> TrustStore {
        try TrustStore(anchors: [], includeSystemRoots: true, label: "system roots")
    }

    deinit {
        X509_STORE_free(store)
    }
}
