import CountersignConfig
import CountersignInterception
import CountersignLog
import Foundation

/// What `countersign check` adds to loading: compiling every trust policy and identity
/// (the files parse, keys match), and comparing the interception CA with the hosts.
public enum ConfigurationCheck {
    public struct Findings {
        public var problems: [String] = []
        public var warnings: [String] = []
        /// What `--online` proved, one line each.
        public var passed: [String] = []
        /// What each aws-sigv4 host signs for, and where that comes from.
        public var signing: [String] = []
    }

    public static func run(_ configuration: Configuration, online: Bool = false) -> Findings {
        var findings = Findings()
        findings.warnings += KerberosCheck.warnings(configuration)
        findings.signing = AWSScopeReport.lines(configuration)
        if online {
            let kerberos = KerberosCheck.online(configuration)
            findings.problems += kerberos.problems
            findings.passed += kerberos.passed
        }
        do {
            let snapshot = try SnapshotBuilder.build(configuration, generation: 0, interception: nil)
            findings.warnings += RevocationListSchedule(snapshot).warnings(now: Int64(Date().timeIntervalSince1970))
        } catch let error as SnapshotError {
            findings.problems += error.problems
        } catch {
            findings.problems.append(String(describing: error))
        }
        if let parent = configuration.parentProxy, let auth = parent.auth {
            let withheld = auth.withheld(overTLS: parent.usesTLS)
            if !withheld.isEmpty {
                let names = withheld.map(\.rawValue).joined(separator: ", ")
                findings.warnings.append("parent_proxy.auth.allow_plaintext is off: \(names) is never sent to the http:// parent proxy (credential \"\(auth.credential)\" would cross in clear); use an https:// url, or set allow_plaintext: true to accept that")
            }
        }
        if let warning = DescriptorBudget.shortfall(configuration, hardLimit: RaiseFileLimit.hardLimit) { findings.warnings.append(warning) }
        guard let settings = configuration.interception else { return findings }
        let patterns = InterceptionBootstrap.interceptedPatterns(configuration)
        guard !patterns.isEmpty else { return findings }
        guard FileManager.default.fileExists(atPath: settings.caCertificatePath) else {
            findings.warnings.append("the interception CA \(settings.caCertificatePath) does not exist yet; `countersign run` creates it on first start (or run `countersign ca init`)")
            return findings
        }
        // The CA's key is a secret too: --no-secrets does not open it.
        guard configuration.secretReading == .read else { return findings }
        do {
            let ca = try InterceptionCA.load(certificatePath: settings.caCertificatePath, keyPath: settings.caKeyPath)
            for pattern in patterns where !ca.permits(host: pattern) {
                findings.warnings.append("hosts.\"\(pattern)\" is intercepted but outside the interception CA's name constraints: clients will reject its certificates; re-create the CA with `countersign ca init --force`")
            }
        } catch {
            findings.problems.append("interception: \(error)")
        }
        return findings
    }
}
