import CountersignConfig
import CountersignTrust

/// `countersign check --host NAME[:PORT] --chain FILE [--at TIME]`: the chain judged by the
/// policy a request for NAME:PORT would get — the same host lookup (`HostTable.lookup`), the
/// same compiled snapshot and the same `TrustPolicy.assess` the handshake's verify callback
/// runs — so a certificate rotation can be checked against the pins before it goes live.
public enum ChainPreview {
    public struct Outcome {
        public let text: String
        /// 0 accepted, 1 refused, 2 the configuration or the chain file is unusable.
        public let exitCode: Int32
    }

    /// `ocspResponsePath`: a DER OCSP response judged as if the server had stapled it.
    public static func run(_ configuration: Configuration, host target: HostPort, chainPath: String, at time: Int64,
                           ocspResponsePath: String? = nil) -> Outcome {
        let snapshot: ConfigSnapshot
        do {
            snapshot = try SnapshotBuilder.build(configuration, generation: 0, interception: nil)
        } catch {
            return Outcome(text: "the configuration cannot be compiled:\n\(error)\n", exitCode: 2)
        }
        let served: [Certificate]
        do {
            served = try Certificate.loadPEMFile(path: chainPath)
        } catch {
            return Outcome(text: "--chain: \(error)\n", exitCode: 2)
        }
        let response: [UInt8]?
        do {
            response = try ocspResponsePath.map(StapleCheck.readResponse(path:))
        } catch {
            return Outcome(text: "--ocsp-response: \(error)\n", exitCode: 2)
        }
        let entry = configuration.hosts.lookup(host: target.host, port: target.port)
        let policy = snapshot.upstreamTLS(for: entry).policy
        let report = ChainVerdictReport(policy: policy, served: served,
                                        serverName: policy.serverName(forHost: target.host), at: time, ocspResponse: response)
        let text = policyLine(entry, target, configuration.unlistedHosts) + "\n" + report.text
        return Outcome(text: text, exitCode: report.accepted ? 0 : 1)
    }

    /// Which policy applies and why, in the configuration's own words.
    static func policyLine(_ entry: HostConfig?, _ target: HostPort, _ unlisted: UnlistedHostsPolicy) -> String {
        let authority = target.configKey
        guard let entry else {
            let reach = unlisted == .deny
                ? "requests to it are refused (unlisted_hosts \"deny\"); an OAuth2 token endpoint there would be"
                : "CONNECT to it is a blind tunnel where the client judges the chain (unlisted_hosts \"tunnel\");"
                    + " https:// requests the proxy makes itself are"
            return "policy:       no hosts entry matches \(authority): \(reach) held to the default policy"
                + " (system roots, name validation, no pins)"
        }
        return "policy:       hosts.\"\(entry.pattern)\".trust (the entry a request for \(authority) uses)"
    }
}
