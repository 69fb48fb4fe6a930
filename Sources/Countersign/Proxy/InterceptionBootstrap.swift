import CountersignConfig
import CountersignInterception
import CountersignLog
import Foundation

/// Loads the interception CA named by `interception`, creating it on first start, and
/// builds the TLS context that presents minted leaves to intercepted clients.
enum InterceptionBootstrap {
    /// Host patterns whose CONNECTs are intercepted.
    static func interceptedPatterns(_ configuration: Configuration) -> [String] {
        configuration.hosts.entries.filter(\.intercept).map(\.pattern)
    }

    static func prepare(_ configuration: Configuration, createIfMissing: Bool, log: Logger) throws -> InterceptionRuntime? {
        guard let settings = configuration.interception else { return nil }
        let patterns = interceptedPatterns(configuration)
        guard !patterns.isEmpty else { return nil }
        let files = FileManager.default
        let haveCertificate = files.fileExists(atPath: settings.caCertificatePath)
        let haveKey = files.fileExists(atPath: settings.caKeyPath)
        let ca: InterceptionCA
        if !haveCertificate && !haveKey && createIfMissing {
            for path in [settings.caCertificatePath, settings.caKeyPath] {
                try files.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            }
            ca = try InterceptionCA.create(certificatePath: settings.caCertificatePath, keyPath: settings.caKeyPath,
                                           scope: try CAScope.hosts(patterns), force: false)
            log.info("created the interception CA; make clients trust it (see `countersign ca show`)", [
                ("certificate", .string(settings.caCertificatePath)), ("key", .string(settings.caKeyPath)),
                ("constrained_to", .string(patterns.joined(separator: ","))),
            ])
        } else {
            ca = try InterceptionCA.load(certificatePath: settings.caCertificatePath, keyPath: settings.caKeyPath)
        }
        for pattern in patterns where !ca.permits(host: pattern) {
            log.warn("an intercepted host is outside the interception CA's name constraints: clients will reject its certificates; re-create the CA with `countersign ca init --force`",
                     [("host", .string(pattern))])
        }
        let tls = try InterceptionTLSContext(minter: LeafMinter(ca: ca))
        return InterceptionRuntime(ca: ca, tls: tls)
    }
}
