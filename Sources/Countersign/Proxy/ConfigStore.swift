import CountersignConfig
import CountersignHTTP
import CountersignInterception
import CountersignSigning
import CountersignTrust
import Synchronization

/// One loaded configuration and what is compiled from it — trust policies with their TLS
/// contexts, identities, the interception CA — immutable once built. Building reads every
/// file the configuration names, so a reload picks up rotated certificates and keys.
public final class ConfigSnapshot: @unchecked Sendable {
    public let configuration: Configuration
    public let generation: Int
    /// What is compiled per `hosts` entry, keyed by its pattern.
    let hostPlans: [String: HostPlan]
    /// For hosts without an entry (and OAuth2 token endpoints without one): system roots,
    /// name validation.
    let defaultTLS: UpstreamTLSContext
    let interception: InterceptionRuntime?
    /// Challenge answering: credentials, learned spaces, tokens.
    let auth: AuthRuntime
    /// Every upstream connection goes through this, when configured.
    let parent: ParentHop?

    init(configuration: Configuration, generation: Int, hostTLS: [String: UpstreamTLSContext],
         defaultTLS: UpstreamTLSContext, interception: InterceptionRuntime?, parentTLS: UpstreamTLSContext? = nil,
         signers: [String: HostSigner] = [:], verifiers: [String: ResponseVerifier] = [:]) {
        self.auth = AuthRuntime(configuration)
        let injection = InjectionPlans.compile(configuration)
        var hostPlans: [String: HostPlan] = [:]
        for host in configuration.hosts.entries {
            let pattern = host.pattern
            hostPlans[pattern] = HostPlan(config: host, tls: hostTLS[pattern], injection: injection[pattern],
                                          signer: signers[pattern], verifier: verifiers[pattern], answerer: auth.answerer(for: host))
        }
        self.hostPlans = hostPlans
        self.parent = configuration.parentProxy.map { ParentHop(host: $0.url.host, port: $0.url.port, tls: parentTLS) }
        self.configuration = configuration
        self.generation = generation
        self.defaultTLS = defaultTLS
        self.interception = interception
    }

    /// The plan of `host` in this snapshot. An entry this snapshot does not have (an
    /// intercepted tunnel's host removed by a reload) gets one with nothing compiled: the
    /// default TLS, no injection, signing or verification — as for any unlisted host.
    func plan(for host: HostConfig?) -> HostPlan? {
        guard let host else { return nil }
        return hostPlans[host.pattern] ?? HostPlan(config: host)
    }

    /// notAfter of every configured identity's certificate, by credential name.
    var identityExpiry: [String: Int64] {
        var expiry: [String: Int64] = [:]
        for host in configuration.hosts.entries {
            if let name = host.identity, let identity = hostPlans[host.pattern]?.tls?.identity { expiry[name] = identity.notAfter }
        }
        if let name = configuration.parentProxy?.identity, let identity = parent?.tls?.identity { expiry[name] = identity.notAfter }
        return expiry
    }

    /// The injection plan for a request under `plan`'s host: the entry's, else one that
    /// resolves no placeholder (every placeholder toward such a host is refused). The latter is
    /// one value for all unlisted hosts, not built per request (a refusal names the authority itself).
    func injectionPlan(for plan: HostPlan?) -> InjectionPlan {
        plan?.injection ?? Self.unlistedPlan
    }

    /// `injectionPlan(for:)` applied to a request, with the OAuth2 access `tokens` fetched for
    /// it. Without tokens the plan is read where it is kept: a copy of it (five counted
    /// fields) cost ~250 instructions a request.
    func applyInjection(for plan: HostPlan?, tokens: [String: [UInt8]], target: String, headers: HeaderFields) -> RequestInjection.Outcome {
        guard tokens.isEmpty else {
            var withTokens = injectionPlan(for: plan)
            withTokens.tokens = tokens
            return RequestInjection.apply(withTokens, target: target, headers: headers)
        }
        if let plan, plan.injection != nil { return RequestInjection.apply(plan.injection!, target: target, headers: headers) }
        // No plan to copy out for most requests to a host without an entry; the scan that
        // tells is the one `apply` goes on from.
        let scan = RequestInjection.PlaceholderScan(target: target, headers: headers)
        guard scan.mayHoldPlaceholder else { return .unchanged }
        return RequestInjection.apply(Self.unlistedPlan, target: target, headers: headers, scan: scan)
    }

    private static let unlistedPlan = InjectionPlan(host: "a host without a hosts entry")

    /// The TLS context for an upstream: its host entry's, else the default.
    func upstreamTLS(for host: HostConfig?) -> UpstreamTLSContext {
        host.flatMap { hostPlans[$0.pattern]?.tls } ?? defaultTLS
    }

    func upstreamTLS(for plan: HostPlan?) -> UpstreamTLSContext {
        plan?.tls ?? defaultTLS
    }
}

/// The parent proxy: plain requests go to it in absolute form, everything else through a
/// CONNECT it answers; with `tls` (an https:// parent) all of it inside a TLS connection
/// to the parent evaluated with `parent_proxy.trust`.
struct ParentHop {
    let host: String
    let port: UInt16
    let tls: UpstreamTLSContext?

    init(host: String, port: UInt16, tls: UpstreamTLSContext? = nil) {
        self.host = host
        self.port = port
        self.tls = tls
    }

    /// How errors and logs name it.
    var name: String { "parent proxy \(Authority(host: host, port: port))" }
}

/// The interception CA and the server-side TLS context that presents minted leaves.
final class InterceptionRuntime {
    let ca: InterceptionCA
    let tls: InterceptionTLSContext

    init(ca: InterceptionCA, tls: InterceptionTLSContext) {
        self.ca = ca
        self.tls = tls
    }
}

/// Why a configuration could not be compiled: each line names the host or credential.
public struct SnapshotError: Error, CustomStringConvertible {
    public let problems: [String]
    public var description: String { problems.joined(separator: "\n") }
}

enum SnapshotBuilder {
    /// Compiles every host's trust policy and identity; all problems are reported together.
    static func build(_ configuration: Configuration, generation: Int, interception: InterceptionRuntime?) throws -> ConfigSnapshot {
        var problems: [String] = []
        var hostTLS: [String: UpstreamTLSContext] = [:]
        var identities: [String: ClientIdentity] = [:]
        let identityNames = configuration.hosts.entries.compactMap(\.identity) + [configuration.parentProxy?.identity].compactMap { $0 }
        // Without secrets (check --no-secrets) the private keys were not read: trust still compiles.
        for name in Set(identityNames).sorted() where configuration.secretReading == .read {
            do {
                identities[name] = try identity(named: name, in: configuration)
            } catch {
                problems.append("credentials.\(name): \(error)")
            }
        }
        for host in configuration.hosts.entries {
            if let name = host.identity, identities[name] == nil, configuration.secretReading == .read { continue }
            do {
                let policy = try TrustPolicy.load(trustSettings(host.trust))
                hostTLS[host.pattern] = try UpstreamTLSContext(policy: policy, identity: host.identity.flatMap { identities[$0] }, offersH2: host.http2)
            } catch {
                problems.append("hosts.\"\(host.pattern)\".trust: \(error)")
            }
        }
        var parentTLS: UpstreamTLSContext?
        if let parent = configuration.parentProxy, parent.usesTLS,
           parent.identity.map({ identities[$0] != nil }) ?? true || configuration.secretReading == .skipped {
            do {
                parentTLS = try UpstreamTLSContext(policy: TrustPolicy.load(trustSettings(parent.trust)), identity: parent.identity.flatMap { identities[$0] })
            } catch {
                problems.append("parent_proxy.trust: \(error)")
            }
        }
        problems += KerberosCheck.problems(configuration)
        let signers = SigningPlans.compile(configuration, problems: &problems)
        let verifiers = VerifyingPlans.compile(configuration, problems: &problems)
        let defaultTLS: UpstreamTLSContext
        do {
            // Hosts without an entry have the default `http2: true` too.
            defaultTLS = try UpstreamTLSContext(policy: TrustPolicy.load(.systemDefault), offersH2: true)
        } catch {
            throw SnapshotError(problems: problems + ["system trust roots: \(error)"])
        }
        guard problems.isEmpty else { throw SnapshotError(problems: problems) }
        return ConfigSnapshot(configuration: configuration, generation: generation, hostTLS: hostTLS,
                              defaultTLS: defaultTLS, interception: interception, parentTLS: parentTLS, signers: signers, verifiers: verifiers)
    }

    static func identity(named name: String?, in configuration: Configuration) throws -> ClientIdentity? {
        guard let name else { return nil }
        switch configuration.credentials[name] {
        case .pemIdentity(let certificatePath, let keyPath, let passphrase)?:
            return try IdentitySource.pem(certificatePath: certificatePath, keyPath: keyPath, passphrase: passphrase?.string).load()
        case .pkcs12Identity(let path, let passphrase)?:
            return try IdentitySource.pkcs12(path: path, passphrase: passphrase?.string).load()
        default:
            throw SnapshotError(problems: ["identity \"\(name)\" is not a PEM or PKCS#12 identity credential"])
        }
    }

    static func trustSettings(_ trust: TrustConfig) -> TrustSettings {
        TrustSettings(anchors: trust.anchors, anchorsOnly: trust.anchorsOnly,
                      pinning: TrustSettings.Pinning(rawValue: trust.pinning.rawValue) ?? .none,
                      pins: trust.pins, pinnedCertificates: trust.pinnedCertificates,
                      validateDomain: trust.validateDomain, allowInvalidCertificates: trust.allowInvalidCertificates,
                      serverName: trust.serverName, minTLSVersion: trust.minTLSVersion == .v1_3 ? .tls13 : .tls12,
                      maxChainDepth: trust.maxChainDepth, crlFiles: trust.crlFiles,
                      ocspStapling: TrustSettings.OCSPStapling(rawValue: trust.ocspStapling.rawValue) ?? .off)
    }
}

/// The live configuration, swapped whole on reload. Readers take the lock only long enough
/// to copy one reference.
public final class ConfigStore: Sendable {
    private let snapshot: Mutex<ConfigSnapshot>
    private let outcome = Mutex(ReloadOutcome.current)

    init(_ initial: ConfigSnapshot) {
        snapshot = Mutex(initial)
    }

    public var current: ConfigSnapshot { snapshot.withLock { $0 } }

    /// Whether the file on disk was refused since `current` was loaded.
    var lastReload: ReloadOutcome { outcome.withLock { $0 } }

    /// A successful reload: the running configuration is the file's again.
    func replace(with fresh: ConfigSnapshot) {
        snapshot.withLock { $0 = fresh }
        outcome.withLock { $0 = .current }
    }

    func reloadFailed(_ failure: ReloadFailure) {
        outcome.withLock { $0 = .failed(failure) }
    }
}
