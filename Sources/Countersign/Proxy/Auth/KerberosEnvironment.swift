import CountersignConfig
import Foundation
import CountersignSupport

/// `kerberos.krb5_conf`: MIT Kerberos reads its configuration file from KRB5_CONFIG, one per
/// process, so the configuration loader allows one krb5_conf for all credentials and this sets
/// it before any Kerberos call of a snapshot. A configuration that names none puts back what
/// the process started with. Known limit: changing krb5_conf by a reload while requests are
/// being answered races with the library's reading of the environment.
enum KerberosEnvironment {
    /// KRB5_CONFIG as the process started, once Countersign first changed it.
    private static let original = Mutex<String??>(nil)

    static func apply(_ configuration: Configuration) {
        let named = configuration.credentials.values.compactMap { $0.kerberos?.krb5Conf }.first
        original.withLock { original in
            // setenv can move the environment under a worker's getenv (inside the Kerberos
            // library): it is called only when the value really changes, which a reload rarely does.
            let current = getenv("KRB5_CONFIG").map { String(cString: $0) }
            if let named {
                guard current != named else { return }
                if original == nil { original = .some(current) }
                setenv("KRB5_CONFIG", named, 1)
            } else if let saved = original {
                if let value = saved { setenv("KRB5_CONFIG", value, 1) } else { unsetenv("KRB5_CONFIG") }
                original = nil
            }
        }
    }
}
