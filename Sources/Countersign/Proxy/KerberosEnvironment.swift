import CountersignConfig
import Foundation

/// `kerberos.krb5_conf`: MIT Kerberos reads its configuration file from KRB5_CONFIG, one per
/// process, so the configuration loader allows one krb5_conf for all credentials and this sets
/// it before any Kerberos call of a snapshot. A configuration that names none puts back what
/// the process started with.
enum KerberosEnvironment {
    private static let lock = NSLock()
    /// KRB5_CONFIG as the process started, once Countersign first changed it.
    nonisolated(unsafe) private static var original: String??

    static func apply(_ configuration: Configuration) {
        let named = configuration.credentials.values.compactMap { $0.kerberos?.krb5Conf }.first
        lock.lock()
        defer { lock.unlock() }
        if let named {
            if original == nil { original = .some(ProcessInfo.processInfo.environment["KRB5_CONFIG"]) }
            setenv("KRB5_CONFIG", named, 1)
        } else if let saved = original {
            if let value = saved { setenv("KRB5_CONFIG", value, 1) } else { unsetenv("KRB5_CONFIG") }
            original = nil
        }
    }
}
