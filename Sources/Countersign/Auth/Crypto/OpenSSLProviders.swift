import COpenSSL

/// OpenSSL 3 keeps MD4 and RC4 (both needed by NTLM) in the `legacy` provider. Loading any
/// provider explicitly stops the implicit `default` one from loading, so both are loaded together,
/// once per process.
enum OpenSSLProviders {
    /// True when the legacy provider could be loaded (MD4 and RC4 are usable).
    static let legacyAvailable: Bool = {
        let legacy = OSSL_PROVIDER_load(nil, "legacy")
        let standard = OSSL_PROVIDER_load(nil, "default")
        return legacy != nil && standard != nil
    }()
}
