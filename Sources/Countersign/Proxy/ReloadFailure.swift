import Foundation

/// A reload that was refused: the file on disk is not what runs. Shown on `/status` and
/// `/status.json` until a reload succeeds, since a counter alone goes unnoticed.
struct ReloadFailure: Sendable, Equatable {
    let time: Date
    /// The loader's errors, as logged (file:line:col, key path); never a secret value.
    let reason: String
}

/// How the last reload went, kept beside the running configuration.
enum ReloadOutcome: Sendable, Equatable {
    /// Nothing failed since the running configuration was loaded.
    case current
    case failed(ReloadFailure)
}
