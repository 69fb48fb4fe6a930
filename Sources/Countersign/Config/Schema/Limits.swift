/// Resource limits and timeouts; every timeout is in seconds.
public struct Limits: Sendable, Equatable {
    public var maxConnections = 10000
    public var maxHeaderBytes = 65536
    public var replayBodyBytes = 1048576
    /// One body held whole for a digest or signature (request or response).
    public var signedBodyBytes = 8 * 1048576
    /// All such bodies held at once, process-wide.
    public var heldBodiesBytes = 64 * 1048576
    public var connectTimeout: Double = 10
    public var headerTimeout: Double = 15
    public var idleTimeout: Double = 60
    public var tunnelIdleTimeout: Double = 600
    /// How long a tunnel stays idle once one side has closed its half (HAProxy's
    /// `client-fin`/`server-fin`), instead of `tunnelIdleTimeout`.
    public var halfCloseTimeout: Double = 5
    public var drainTimeout: Double = 30
    /// How long a drain waits with no client connection open and none arriving before it
    /// ends: an application shutting down beside the sidecar still makes its last requests.
    public var drainQuietPeriod: Double = 1
    /// Streams an HTTP/2 client may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS).
    public var h2MaxConcurrentStreams = 100

    public init() {}
}
