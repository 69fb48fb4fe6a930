/// Whether loading reads secret values: `*_env` variables, `*_file` secrets, private keys,
/// PKCS#12 bundles and keytabs. `countersign check --no-secrets` skips them, so CI can check a
/// configuration without holding the real secrets; everything else is validated as usual.
public enum SecretReading: Sendable, Equatable {
    case read
    /// Each secret's key must be well-formed, but its value is not looked up: a placeholder
    /// stands in, and identities and keytabs are not opened.
    case skipped

    /// What stands in for a secret that was not read.
    static let placeholder = "(not read: --no-secrets)"
}
