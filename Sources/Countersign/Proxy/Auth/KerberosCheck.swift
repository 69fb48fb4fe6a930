import CountersignAuth
import CountersignConfig
import Foundation

/// What loading a configuration with Kerberos credentials checks beyond the file's syntax:
/// that the GSSAPI library can be loaded (at `check`, start and reload), that each keytab
/// holds the principal, and, for `check --online`, that a ticket can be had.
enum KerberosCheck {
    private static func kerberosCredentials(_ configuration: Configuration) -> [(name: String, settings: KerberosConfig)] {
        configuration.credentials.compactMap { name, credential in credential.kerberos.map { (name, $0) } }.sorted { $0.name < $1.name }
    }

    /// Problems that make the configuration unusable, each naming the key path and the fix.
    static func problems(_ configuration: Configuration, library: () -> Result<GSSAPI, GSSAPI.LoadError> = { GSSAPI.shared }) -> [String] {
        let credentials = kerberosCredentials(configuration)
        guard !credentials.isEmpty else { return [] }
        var problems: [String] = []
        if case .failure(let error) = library() {
            let names = credentials.map(\.name).joined(separator: ", ")
            problems.append("credentials.\(credentials[0].name).kerberos: \(error.description) (needed by credential(s) \(names))")
        }
        for (name, settings) in credentials {
            guard case .keytab(let path) = settings.source, configuration.secretReading == .read else { continue }
            if let problem = keytabProblem(path: path, principal: settings.principal) {
                problems.append("credentials.\(name).kerberos.keytab_file: \(problem)")
            }
        }
        return problems
    }

    static func keytabProblem(path: String, principal: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return "cannot read \(path)" }
        let keytab: KeytabFile
        do {
            keytab = try KeytabFile(bytes: Array(data))
        } catch {
            return "\(path) \(error)"
        }
        guard !keytab.holds(principal) else { return nil }
        let held = Array(Set(keytab.entries.map(\.principal))).sorted()
        return "\(path) holds no key for \(principal)"
            + (held.isEmpty ? " (it is empty)" : " (it holds \(held.joined(separator: ", ")))")
            + "; export one with kadmin: ktadd -k \(path) \(principal), or correct kerberos.principal"
    }

    /// A keytab is the principal's key itself: readable by others, it is theirs too.
    static func warnings(_ configuration: Configuration) -> [String] {
        kerberosCredentials(configuration).compactMap { name, settings in
            guard case .keytab(let path) = settings.source,
                  let mode = (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int,
                  mode & 0o077 != 0 else { return nil }
            return "credentials.\(name).kerberos.keytab_file: \(path) has mode \(String(mode, radix: 8)), so other users can read the key of the principal; chmod 600 it"
        }
    }

    /// `check --online`: for each Kerberos credential, a ticket for each service its rules ask
    /// for (a hosts entry's `HTTP@host` or `spn`, the parent proxy's `HTTP@host`), or else for
    /// the ticket-granting service of its realm. One line per credential and service.
    static func online(_ configuration: Configuration) -> (problems: [String], passed: [String]) {
        var problems: [String] = [], passed: [String] = []
        KerberosEnvironment.apply(configuration)
        for (name, settings) in kerberosCredentials(configuration) {
            let credential = AuthRuntime.kerberosCredential(settings, name: "check-\(name)")
            for service in services(for: name, settings: settings, in: configuration) {
                do {
                    try credential.obtainTicket(for: service)
                    passed.append("credentials.\(name).kerberos: \(settings.principal) got a ticket for \(service)")
                } catch {
                    problems.append("credentials.\(name).kerberos: \(settings.principal) cannot get a ticket for \(service): \(error)")
                }
            }
        }
        return (problems, passed)
    }

    static func services(for credential: String, settings: KerberosConfig, in configuration: Configuration) -> [String] {
        var services: [String] = []
        for host in configuration.hosts.entries {
            for rule in host.auth where rule.credential == credential && rule.schemes.contains(.negotiate) {
                if let spn = rule.spn {
                    services.append(spn)
                } else if let pattern = try? HostPattern(parsing: host.pattern), !host.pattern.contains("*") {
                    services.append("HTTP@\(pattern.host)")
                }
            }
        }
        if let parent = configuration.parentProxy, let auth = parent.auth, auth.credential == credential, auth.schemes.contains(.negotiate) {
            services.append("HTTP@\(parent.url.host)")
        }
        if services.isEmpty, let at = settings.principal.lastIndex(of: "@") {
            let realm = settings.principal[settings.principal.index(after: at)...]
            services.append("krbtgt/\(realm)@\(realm)")
        }
        var seen = Set<String>()
        return services.filter { seen.insert($0).inserted }
    }
}
