#if canImport(Glibc)
import Glibc
#endif

/// `countersign pin HOST[:PORT] [--anchors FILE] [--server-name NAME]`.
public enum PinCommand {
    public static let usage = """
        usage: countersign pin HOST[:PORT] [--anchors FILE] [--server-name NAME]

        Connects to HOST (port 443 by default), accepts whatever chain it serves, and prints each
        certificate's SPKI pin (sha256//BASE64), SHA-256 fingerprint and expiry, whether the chain
        validates against the system roots (or the anchors in FILE) and the name, and a ready
        `hosts` entry for the configuration.
          --anchors FILE       verify against the certificates in FILE instead of the system roots
          --server-name NAME   send NAME as SNI and validate it (default: HOST)

        """

    /// `arguments` are the words after `pin`. Exit codes: 0 ok, 1 connection failure, 2 usage.
    public static func run(arguments: [String]) -> Int32 {
        let options: PinOptions
        do {
            guard let parsed = try PinOptions(arguments: arguments) else {
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
        let probe = ServedChainProbe(target: options.target, serverName: options.serverName, anchorsPath: options.anchorsPath)
        let policy: TrustPolicy
        do {
            policy = try probe.makePolicy()
        } catch {
            standardError("countersign pin: \(error)\n")
            return 2
        }
        do {
            let result = try probe.run(policy: policy)
            print(PinReport(result: result, explicitServerName: options.serverName, anchorsPath: options.anchorsPath).text,
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
    var target: HostPort
    var anchorsPath: String?
    var serverName: String?

    /// nil for --help.
    init?(arguments: [String]) throws {
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
                if argument == "--anchors" { anchorsPath = value } else { serverName = value }
            default:
                if argument.hasPrefix("-") { throw TrustError("unknown option \(argument)") }
                guard target == nil else { throw TrustError("only one HOST[:PORT] may be given") }
                target = try HostPort(parsing: argument)
            }
        }
        guard let target else { throw TrustError("HOST[:PORT] is missing") }
        self.target = target
    }
}
