#if canImport(Glibc)
import Glibc
#endif

/// Where a relative `--anchors FILE` starts: like `anchors` in the configuration, at the
/// configuration file's directory, so the printed snippet means the same file once pasted.
public enum AnchorsBase: Sendable, Equatable {
    case configurationDirectory(String)
    /// No configuration file found: nothing to agree with, so the working directory (and
    /// the snippet names the absolute path).
    case workingDirectory(String)

    var directory: String {
        switch self {
        case .configurationDirectory(let directory), .workingDirectory(let directory): return directory
        }
    }
}

/// `countersign pin HOST[:PORT] [-c FILE] [--anchors FILE] [--server-name NAME]`.
public enum PinCommand {
    public static let usage = """
        usage: countersign pin HOST[:PORT] [-c FILE] [--anchors FILE] [--server-name NAME]

        Connects to HOST (port 443 by default), accepts whatever chain it serves, and prints each
        certificate's SPKI pin (sha256//BASE64), SHA-256 fingerprint and expiry, whether the chain
        validates against the system roots (or the anchors in FILE) and the name, and a ready
        `hosts` entry for the configuration.
          --anchors FILE       verify against the certificates in FILE instead of the system roots;
                               a relative FILE starts at the configuration's directory, as `anchors`
                               in it does (-c FILE, $COUNTERSIGN_CONFIG or the default lookup)
          --server-name NAME   send NAME as SNI and validate it (default: HOST)

        """

    /// `arguments` are the words after `pin` (without `-c`). Exit codes: 0 ok, 1 connection
    /// failure, 2 usage.
    public static func run(arguments: [String], anchorsBase: AnchorsBase) -> Int32 {
        let options: PinOptions
        do {
            guard let parsed = try PinOptions(arguments: arguments, anchorsBase: anchorsBase) else {
                print(usage, terminator: "")
                return 0
            }
            options = parsed
        } catch {
            standardError("countersign pin: \(error)\n\n\(usage)")
            return 2
        }
        // A server that resets the connection must not kill the command through SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let probe = ServedChainProbe(target: options.target, serverName: options.serverName, anchorsPath: options.anchors?.resolved)
        let policy: TrustPolicy
        do {
            policy = try probe.makePolicy()
        } catch {
            standardError("countersign pin: \(error)\n")
            return 2
        }
        do {
            let result = try probe.run(policy: policy)
            print(PinReport(result: result, explicitServerName: options.serverName, anchorsPath: options.anchors?.forSnippet).text,
                  terminator: "")
            return 0
        } catch {
            standardError("countersign pin: \(error)\n")
            return 1
        }
    }

    private static func standardError(_ text: String) {
        fputs(text, stderr)
    }
}

/// The parsed arguments of `countersign pin`.
struct PinOptions: Equatable {
    /// `--anchors` as read (`resolved`) and as the snippet writes it: as given when it is
    /// relative to the configuration's directory, which the pasted snippet resolves the same.
    struct Anchors: Equatable {
        let resolved: String
        let forSnippet: String
    }

    var target: HostPort
    var anchors: Anchors?
    var serverName: String?

    /// nil for --help.
    init?(arguments: [String], anchorsBase: AnchorsBase) throws {
        var target: HostPort?
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "-h", "--help":
                return nil
            case "--anchors", "--server-name":
                guard let value = remaining.popFirst(), !value.isEmpty else {
                    throw TrustError("\(argument) needs a value")
                }
                if argument == "--anchors" { anchors = Self.anchors(value, base: anchorsBase) } else { serverName = value }
            default:
                if argument.hasPrefix("-") { throw TrustError("unknown option \(argument)") }
                guard target == nil else { throw TrustError("only one HOST[:PORT] may be given") }
                target = try HostPort(parsing: argument)
            }
        }
        guard let target else { throw TrustError("HOST[:PORT] is missing") }
        self.target = target
    }

    private static func anchors(_ given: String, base: AnchorsBase) -> Anchors {
        if given.hasPrefix("/") { return Anchors(resolved: given, forSnippet: given) }
        let directory = base.directory.hasSuffix("/") ? base.directory : base.directory + "/"
        let resolved = directory + given
        switch base {
        case .configurationDirectory: return Anchors(resolved: resolved, forSnippet: given)
        case .workingDirectory: return Anchors(resolved: resolved, forSnippet: resolved)
        }
    }
}
