/// The TLS 1.3 cipher suites Countersign offers and accepts, in its order of preference: that of
/// the TLS 1.3 list in Mozilla's server guidelines. OpenSSL's default puts AES-256-GCM first,
/// which costs 40% more AES rounds per record and a SHA-384 key schedule (no SHA-NI) for no
/// security a proxy's peers need; ChaCha20 serves peers without AES instructions.
public enum TLS13Suites {
    public static let preferred = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
}
