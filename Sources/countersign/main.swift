import CountersignConfig
import CountersignLog
import CountersignProxy
import CountersignTrust
import Foundation

/// Exit codes of the SPEC: 0 success, 2 invalid configuration or usage, 1 anything else.
enum ExitCode {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 2
}

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
}

func loadConfiguration(_ arguments: Arguments) -> (String, Configuration)? {
    let environment = ProcessInfo.processInfo.environment
    let path = ConfigLoader.resolvePath(cli: arguments["-c"] ?? arguments["--config"], environment: environment)
    do {
        return (path, try ConfigLoader.load(path: path, environment: environment))
    } catch {
        printError("countersign: invalid configuration \(path):\n\(error)")
        return nil
    }
}

func runCommand(_ words: [String]) -> Int32 {
    let arguments: Arguments
    do {
        arguments = try Arguments(words, valued: ["-c", "--config"], switches: ["--help", "-h"])
    } catch {
        printError("countersign run: \(error)\n\n\(HelpText.run)")
        return ExitCode.usage
    }
    if arguments.has("--help") || arguments.has("-h") {
        print(HelpText.run)
        return ExitCode.success
    }
    guard arguments.positional.isEmpty else {
        printError("countersign run: unexpected argument \(arguments.positional[0])")
        return ExitCode.usage
    }
    guard let (path, configuration) = loadConfiguration(arguments) else { return ExitCode.usage }
    let server: ProxyServer
    do {
        server = try ProxyServer(configPath: path, environment: ProcessInfo.processInfo.environment, configuration: configuration)
    } catch {
        printError("countersign: cannot load what \(path) names:\n\(error)")
        return ExitCode.usage
    }
    do {
        try server.start()
    } catch {
        Logger.shared.error("cannot start", [("error", .string(String(describing: error)))])
        return ExitCode.failure
    }
    server.runMainLoop()
    return ExitCode.success
}

func checkCommand(_ words: [String]) -> Int32 {
    let arguments: Arguments
    do {
        arguments = try Arguments(words, valued: ["-c", "--config", "--host", "--chain", "--at", "--ocsp-response"], switches: ["--help", "-h", "--online"])
    } catch {
        printError("countersign check: \(error)\n\n\(HelpText.check)")
        return ExitCode.usage
    }
    if arguments.has("--help") || arguments.has("-h") {
        print(HelpText.check)
        return ExitCode.success
    }
    if let unexpected = arguments.positional.first {
        printError("countersign check: unexpected argument \(unexpected)\n\n\(HelpText.check)")
        return ExitCode.usage
    }
    if arguments["--host"] != nil || arguments["--chain"] != nil || arguments["--at"] != nil || arguments["--ocsp-response"] != nil {
        return checkChainCommand(arguments)
    }
    guard let (path, configuration) = loadConfiguration(arguments) else { return ExitCode.usage }
    let findings = ConfigurationCheck.run(configuration, online: arguments.has("--online"))
    if !findings.problems.isEmpty {
        printError("countersign: invalid configuration \(path):\n" + findings.problems.joined(separator: "\n"))
        return ExitCode.usage
    }
    print("configuration \(path) is valid\n")
    print(configuration.summary())
    for line in findings.passed { print("online: \(line)") }
    for warning in findings.warnings { print("warning: \(warning)") }
    return ExitCode.success
}

/// `check --host NAME[:PORT] --chain FILE [--at TIME] [--ocsp-response FILE]`: exit 0 accepted, 1 refused, 2 usage or configuration.
func checkChainCommand(_ arguments: Arguments) -> Int32 {
    let target: HostPort
    let chainPath: String
    let time: Int64
    do {
        guard let host = arguments["--host"], let chain = arguments["--chain"], !chain.isEmpty else {
            throw Arguments.UsageError(description: "--host and --chain go together")
        }
        target = try HostPort(parsing: host)
        chainPath = chain
        time = try arguments["--at"].map(UTCTimestamp.parse) ?? Int64(Date().timeIntervalSince1970)
    } catch {
        printError("countersign check: \(error)\n\n\(HelpText.check)")
        return ExitCode.usage
    }
    guard let (path, configuration) = loadConfiguration(arguments) else { return ExitCode.usage }
    let outcome = ChainPreview.run(configuration, host: target, chainPath: chainPath, at: time,
                                   ocspResponsePath: arguments["--ocsp-response"])
    if outcome.exitCode == ExitCode.usage {
        printError("countersign check: \(path): \(outcome.text)")
    } else {
        print(outcome.text, terminator: "")
    }
    return outcome.exitCode
}

func schemaCommand(_ words: [String]) -> Int32 {
    if words == ["--help"] || words == ["-h"] {
        print(HelpText.schema)
        return ExitCode.success
    }
    guard words.isEmpty else {
        printError("countersign schema: unexpected argument \(words[0])\n\n\(HelpText.schema)")
        return ExitCode.usage
    }
    print(ConfigurationJSONSchema.document.text(), terminator: "")
    return ExitCode.success
}

func main() -> Int32 {
    var words = Array(CommandLine.arguments.dropFirst())
    let command = words.first.flatMap { $0.hasPrefix("-") ? nil : $0 } ?? "run"
    if words.first == command { words.removeFirst() }
    switch command {
    case "run":
        if words == ["--version"] { print(HelpText.version); return ExitCode.success }
        if words == ["--help"] || words == ["-h"] {
            print(CommandLine.arguments.count == 2 ? HelpText.main : HelpText.run)
            return ExitCode.success
        }
        return runCommand(words)
    case "check":
        return checkCommand(words)
    case "ca":
        return CACommand.run(words)
    case "pin":
        if words.isEmpty || words == ["--help"] || words == ["-h"] {
            return PinCommand.run(arguments: words.isEmpty ? ["--help"] : words)
        }
        return PinCommand.run(arguments: words)
    case "schema":
        return schemaCommand(words)
    case "help":
        print(HelpText.main)
        return ExitCode.success
    default:
        printError("countersign: unknown command \"\(command)\"\n\n\(HelpText.main)")
        return ExitCode.usage
    }
}

exit(main())
