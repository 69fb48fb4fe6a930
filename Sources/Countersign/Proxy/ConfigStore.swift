import CountersignConfig
import Synchronization

/// One loaded configuration and what is derived from it, immutable once built.
public final class ConfigSnapshot: Sendable {
    public let configuration: Configuration
    public let generation: Int

    public init(configuration: Configuration, generation: Int) {
        self.configuration = configuration
        self.generation = generation
    }
}

/// The live configuration, swapped whole on reload. Readers take the lock only long enough
/// to copy one reference.
public final class ConfigStore: Sendable {
    private let snapshot: Mutex<ConfigSnapshot>

    public init(_ configuration: Configuration) {
        snapshot = Mutex(ConfigSnapshot(configuration: configuration, generation: 1))
    }

    public var current: ConfigSnapshot { snapshot.withLock { $0 } }

    public func replace(with configuration: Configuration) {
        snapshot.withLock { $0 = ConfigSnapshot(configuration: configuration, generation: $0.generation + 1) }
    }
}
