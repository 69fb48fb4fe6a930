/// A loaded, validated configuration: an immutable snapshot the proxy swaps on reload.
public struct Configuration: Sendable {
    /// Absolute path of the file loaded.
    public var sourcePath: String
    public var listeners: [ListenerConfig]
    public var admin: AdminConfig?
    /// Event loops; a configured 0 is resolved to the number of active processors.
    public var workers: Int
    public var unlistedHosts: UnlistedHostsPolicy
    public var interception: InterceptionConfig?
    public var parentProxy: ParentProxyConfig?
    /// Absolute; default `state` next to the configuration file.
    public var stateDir: String
    public var credentials: [String: CredentialConfig]
    public var hosts: HostTable
    public var limits: Limits
    public var log: LogConfig
    public var reload: ReloadConfig
    /// Absolute paths of every file the configuration named and read (anchors, pinned
    /// certificates, identities, `*_file` secrets), in the order they were read: what a
    /// reload re-reads, so what `reload.watch` watches.
    public var namedFiles: [String]
    /// `.skipped` when loaded for `check --no-secrets`: secrets are placeholders, and
    /// identities and keytabs were not opened (so must not be compiled).
    public var secretReading = SecretReading.read

    public init(sourcePath: String, listeners: [ListenerConfig], admin: AdminConfig? = nil, workers: Int = 1,
                unlistedHosts: UnlistedHostsPolicy = .tunnel, interception: InterceptionConfig? = nil,
                parentProxy: ParentProxyConfig? = nil, stateDir: String, credentials: [String: CredentialConfig] = [:],
                hosts: HostTable = HostTable([]), limits: Limits = Limits(), log: LogConfig = LogConfig(),
                reload: ReloadConfig = ReloadConfig(), namedFiles: [String] = []) {
        self.sourcePath = sourcePath
        self.listeners = listeners
        self.admin = admin
        self.workers = workers
        self.unlistedHosts = unlistedHosts
        self.interception = interception
        self.parentProxy = parentProxy
        self.stateDir = stateDir
        self.credentials = credentials
        self.hosts = hosts
        self.limits = limits
        self.log = log
        self.reload = reload
        self.namedFiles = namedFiles
    }
}
