import CountersignConfig
import CountersignInterception
import CountersignProxy
import Foundation

/// `countersign ca init|show`: the interception CA's files, by default where the
/// configuration's `interception` says, else under `--dir`.
enum CACommand {
    static let help = """
    Usage:
      countersign ca init [--dir DIR] [--force] [--unconstrained] [-c FILE]
          Creates the interception CA (EC P-256; the key file is written with mode 0600).
          By default the CA carries X.509 name constraints limited to the hosts the
          configuration intercepts, so a stolen key cannot mint certificates for other
          sites; --unconstrained leaves them out. Existing files are kept unless --force.
      countersign ca show [--dir DIR] [-c FILE]
          Prints the CA certificate and how to make common clients trust it.

    Files: DIR/ca.pem and DIR/ca.key with --dir, else interception.ca_certificate and
    interception.ca_key of the configuration. Of the configuration only `interception` and
    which hosts intercept are read: its secrets, identities and anchors need not be present.
    """

    static func run(_ words: [String]) -> Int32 {
        guard let action = words.first, !action.hasPrefix("-") else {
            if words.contains("--help") || words.contains("-h") { print(help); return ExitCode.success }
            printError("countersign ca: say init or show\n\n\(help)")
            return ExitCode.usage
        }
        let arguments: Arguments
        do {
            arguments = try Arguments(Array(words.dropFirst()), valued: ["--dir", "-c", "--config"],
                                      switches: ["--force", "--unconstrained", "--help", "-h"])
        } catch {
            printError("countersign ca \(action): \(error)\n\n\(help)")
            return ExitCode.usage
        }
        if arguments.has("--help") || arguments.has("-h") {
            print(help)
            return ExitCode.success
        }
        guard arguments.positional.isEmpty else {
            printError("countersign ca \(action): unexpected argument \(arguments.positional[0])")
            return ExitCode.usage
        }
        switch action {
        case "init": return initialize(arguments)
        case "show": return show(arguments)
        default:
            printError("countersign ca: unknown action \"\(action)\"\n\n\(help)")
            return ExitCode.usage
        }
    }

    private static func initialize(_ arguments: Arguments) -> Int32 {
        var section: InterceptionSection?
        if arguments["--dir"] == nil || !arguments.has("--unconstrained") {
            let why = arguments["--dir"] == nil ? "" : "the name constraints come from the hosts the configuration intercepts (or pass --unconstrained); "
            guard let loaded = interceptionSection(arguments, action: "init", why: why) else { return ExitCode.usage }
            section = loaded
        }
        guard let (certificatePath, keyPath) = paths(arguments, section) else { return ExitCode.usage }
        let scope: CAScope
        if arguments.has("--unconstrained") {
            scope = .unconstrained
        } else {
            let patterns = section?.interceptedPatterns ?? []
            guard !patterns.isEmpty else {
                printError("countersign ca init: the configuration intercepts no host, so a constrained CA would permit nothing; add hosts, or pass --unconstrained")
                return ExitCode.usage
            }
            do {
                scope = try CAScope.hosts(patterns)
            } catch {
                printError("countersign ca init: \(error)")
                return ExitCode.usage
            }
        }
        do {
            for path in [certificatePath, keyPath] {
                try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            }
            let ca = try InterceptionCA.create(certificatePath: certificatePath, keyPath: keyPath, scope: scope, force: arguments.has("--force"))
            print("created \(ca.commonName)")
            print("  certificate: \(certificatePath)")
            print("  key:         \(keyPath) (mode 0600)")
            print("  constraints: \(ca.nameConstraints.map { "\($0)" } ?? "none (unconstrained)")")
            print("\nNext: `countersign ca show` prints how to make clients trust it.")
            return ExitCode.success
        } catch {
            printError("countersign ca init: \(error)")
            return ExitCode.failure
        }
    }

    private static func show(_ arguments: Arguments) -> Int32 {
        var section: InterceptionSection?
        if arguments["--dir"] == nil {
            guard let loaded = interceptionSection(arguments, action: "show", why: "") else { return ExitCode.usage }
            section = loaded
        }
        guard let (certificatePath, _) = paths(arguments, section) else { return ExitCode.usage }
        do {
            print(try InterceptionCA.trustInstructions(certificatePath: certificatePath))
            return ExitCode.success
        } catch {
            printError("countersign ca show: \(error)\n(create it with `countersign ca init`, or let `countersign run` create it on first start)")
            return ExitCode.failure
        }
    }

    /// The configuration's `interception` section and intercepted hosts, nothing else (no
    /// secret need be present); nil after printing exactly why it could not be read.
    private static func interceptionSection(_ arguments: Arguments, action: String, why: String) -> InterceptionSection? {
        let environment = ProcessInfo.processInfo.environment
        let path = ConfigLoader.resolvePath(cli: arguments["-c"] ?? arguments["--config"], environment: environment)
        do {
            return try ConfigLoader.loadInterception(path: path)
        } catch {
            let remedy = arguments["--dir"] == nil ? "fix it, pass another with -c FILE, or give --dir DIR" : "fix it, or pass another with -c FILE"
            printError("countersign ca \(action): \(why)the configuration \(path) cannot be used (\(remedy)):\n\(error)")
            return nil
        }
    }

    private static func paths(_ arguments: Arguments, _ section: InterceptionSection?) -> (String, String)? {
        if let directory = arguments["--dir"] {
            return ((directory as NSString).appendingPathComponent("ca.pem"), (directory as NSString).appendingPathComponent("ca.key"))
        }
        guard let interception = section?.interception else { return nil }
        return (interception.caCertificatePath, interception.caKeyPath)
    }
}
