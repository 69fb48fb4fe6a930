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

func loadConfiguration(_ arguments: Arguments, secrets: SecretReading = .read) -> (String, Configuration)? {
    let environment = ProcessInfo.processInfo.environment
    let path = ConfigLoader.resolvePath(cli: arguments["-c"] ?? arguments["--config"], environment: environment)
    do {
        return (path, try ConfigLoader.load(path: path, environment: environment, secrets: secrets))
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
        arguments = try Arguments(words, valued: ["-c", "--config", "--host", "--chain", "--at", "--ocsp-response"], switches: ["--help", "-h", "--online", "--no-secrets"])
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
    let secrets: SecretReading = arguments.has("--no-secrets") ? .skipped : .read
    if secrets == .skipped && arguments.has("--online") {
        printError("countersign check: --online asks the KDC with the real secrets; it cannot go with --no-secrets\n\n\(HelpText.check)")
        return ExitCode.usage
    }
    guard let (path, configuration) = loadConfiguration(arguments, secrets: secrets) else { return ExitCode.usage }
    let findings = ConfigurationCheck.run(configuration, online: arguments.has("--online"))
    if !findings.problems.isEmpty {
        printError("countersign: invalid configuration \(path):\n" + findings.problems.joined(separator: "\n"))
        return ExitCode.usage
    }
    let unread = secrets == .skipped ? " (secret values not read: --no-secrets; private keys, PKCS#12 bundles and keytabs not opened)" : ""
    print("configuration \(path) is valid\(unread)\n")
    print(configuration.summary())
    for line in findings.signing { print(line) }
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

/// `pin` reads `-c FILE` only to know where a relative `--anchors` starts.
func pinCommand(_ words: [String]) -> Int32 {
    guard !words.isEmpty else {
        printError("countersign pin: HOST[:PORT] is missing\n\n\(PinCommand.usage)")
        return ExitCode.usage
    }
    var rest: [String] = []
    var configPath: String?
    var index = 0
    while index < words.count {
        let word = words[index]
        index += 1
        if word == "-c" || word == "--config" {
            guard index < words.count else {
                printError("countersign pin: \(word) needs a value\n\n\(PinCommand.usage)")
                return ExitCode.usage
            }
            configPath = words[index]
            index += 1
        } else if word.hasPrefix("--config=") {
            configPath = String(word.dropFirst("--config=".count))
        } else {
            rest.append(word)
        }
    }
    let path = ConfigLoader.resolvePath(cli: configPath, environment: ProcessInfo.processInfo.environment)
    let base: AnchorsBase = FileManager.default.fileExists(atPath: path)
        ? .configurationDirectory(ConfigLoader.baseDirectory(ofConfigurationAt: path))
        : .workingDirectory(FileManager.default.currentDirectoryPath)
    return PinCommand.run(arguments: rest, anchorsBase: base)
}

func main() -> Int32 {
    // On Linux the Swift runtime reads the arguments from /proc/self/cmdline: without /proc
    // (a bare chroot) there are none, not even the program's name, and `check` would run the proxy.
    guard !CommandLine.arguments.isEmpty else {
        printError("countersign: cannot read the command line (/proc/self/cmdline); mount /proc")
        return ExitCode.usage
    }
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
        return pinCommand(words)
    case "schema":
        return schemaCommand(words)
    case "completion":
        return CompletionCommand.run(words)
    case "help":
        print(HelpText.main)
        return ExitCode.success
    default:
        // A near miss gets the one line that fixes it; anything else the whole usage.
        if let guess = NearMiss.suggestion(for: command, among: HelpText.commands) {
            printError("countersign: unknown command \"\(command)\" (did you mean \(guess)?); see countersign --help")
        } else {
            printError("countersign: unknown command \"\(command)\"\n\n\(HelpText.main)")
        }
        return ExitCode.usage
    }
}

exit(main())
