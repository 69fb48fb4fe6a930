/// The checks that hold a verified path to what a TLS server's path must be, beyond what
/// OpenSSL's X509_verify_cert enforces (x509-limbo's cases showed each gap): strong keys,
/// a leaf that is a server certificate, name constraints that see through wildcards,
/// well-formed names, serials, key identifiers and extensions, an address CN spelled as a
/// SAN address, and (when the name is validated) no match through a
/// wildcard over a public suffix. They run after the chain and name checks, so a chain that
/// fails those is refused with the familiar reason first.
enum PathProfileChecks {
    static func make(storeLabel: String, validateDomain: Bool) -> [any TrustCheck] {
        var checks: [any TrustCheck] = [
            KeyStrengthCheck(storeLabel: storeLabel),
            EndEntityCheck(storeLabel: storeLabel),
            NameConstraintsCheck(storeLabel: storeLabel),
            SubjectAltNameSyntaxCheck(),
            SerialNumberCheck(storeLabel: storeLabel),
            KeyIdentifierCheck(storeLabel: storeLabel),
            ExtensionSyntaxCheck(storeLabel: storeLabel),
            CommonNameAddressCheck(),
        ]
        if validateDomain { checks.append(PublicSuffixWildcardCheck()) }
        return checks
    }
}
