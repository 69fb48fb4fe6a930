import Foundation

/// Finds, reads, parses, decodes and validates the configuration file.
public enum ConfigLoader {
    /// A source checkout's configuration, relative to the working directory.
    public static let defaultPath = "conf/countersign.json5"
    /// Where the Debian package, `make install` and the container image put it.
    public static let installedPath = "/etc/countersign/countersign.json5"

    /// `-c FILE`, else `$COUNTERSIGN_CONFIG`, else `conf/countersign.json5` when the working
    /// directory has one (a checkout), else `/etc/countersign/countersign.json5` when that
    /// exists (an installed package), else `conf/countersign.json5` (whose absence the load
    /// then reports, naming both). Decided at run time, so one binary serves both.
    public static func resolvePath(cli: String?, environment: [String: String],
                                   exists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }) -> String {
        if let cli, !cli.isEmpty { return cli }
        if let fromEnvironment = environment["COUNTERSIGN_CONFIG"], !fromEnvironment.isEmpty { return fromEnvironment }
        if !exists(defaultPath) && exists(installedPath) { return installedPath }
        return defaultPath
    }

    /// Where relative paths in the configuration at `path` start: its directory.
    public static func baseDirectory(ofConfigurationAt path: String) -> String {
        URL(fileURLWithPath: FileAccess().absolute(path, relativeTo: FileAccess.currentDirectory)).deletingLastPathComponent().path
    }

    /// Loads the file at `path` (relative paths start at the current directory). Every problem
    /// found is thrown together as `ConfigErrors`.
    public static func load(path: String, environment: [String: String], secrets: SecretReading = .read) throws -> Configuration {
        let (text, absolute) = try read(path: path)
        return try load(text: text, sourcePath: absolute, environment: environment, secrets: secrets)
    }

    /// Only what the interception CA commands need: the `interception` section and which
    /// hosts are intercepted. Secrets, identities and anchors are not read, so `ca show`
    /// works where they are absent (a workstation, a build step); a problem in what is read
    /// is thrown as it is.
    public static func loadInterception(path: String) throws -> InterceptionSection {
        let (text, absolute) = try read(path: path)
        let context = DecodingContext(file: absolute, baseDirectory: URL(fileURLWithPath: absolute).deletingLastPathComponent().path,
                                      environment: [:], files: FileAccess())
        let section = InterceptionSectionDecoder(context: context).decode(try parse(text, file: absolute))
        guard context.errors.isEmpty, let section else { throw ConfigErrors(inFileOrder(context.errors)) }
        return section
    }

    /// The file's text and absolute path, or why it cannot be read.
    private static func read(path: String) throws -> (String, String) {
        let files = FileAccess()
        let absolute = files.absolute(path, relativeTo: FileAccess.currentDirectory)
        if let problem = files.problemReading(absolute) {
            let also = path == defaultPath ? " (nor is there \(installedPath))" : ""
            throw ConfigErrors([ConfigError(file: absolute, path: .root, position: nil,
                                            message: "the configuration file \(problem)\(also); give another with -c FILE or COUNTERSIGN_CONFIG")])
        }
        guard let data = FileManager.default.contents(atPath: absolute) else {
            throw ConfigErrors([ConfigError(file: absolute, path: .root, position: nil, message: "the configuration file could not be read")])
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigErrors([ConfigError(file: absolute, path: .root, position: nil, message: "the configuration file is not UTF-8 text")])
        }
        return (text, absolute)
    }

    private static func parse(_ text: String, file: String) throws -> JSON5Node {
        do {
            return try JSON5Parser.parse(text)
        } catch let error as JSON5SyntaxError {
            throw ConfigErrors([ConfigError(file: file, path: .root, position: error.position, message: error.message)])
        }
    }

    /// Loads configuration text as if it were the file at `sourcePath` (relative paths in it
    /// start at that file's directory). Useful for tests and for validating before a reload.
    public static func load(text: String, sourcePath: String, environment: [String: String], secrets: SecretReading = .read) throws -> Configuration {
        let files = FileAccess()
        let absolute = files.absolute(sourcePath, relativeTo: FileAccess.currentDirectory)
        let root = try parse(text, file: absolute)
        let directory = URL(fileURLWithPath: absolute).deletingLastPathComponent().path
        let context = DecodingContext(file: absolute, baseDirectory: directory, environment: environment, files: files, secretReading: secrets)
        guard var configuration = ConfigDecoder(context: context).decode(root, sourcePath: absolute) else {
            var errors = ConfigErrors(inFileOrder(context.errors))
            errors.namedFiles = context.namedFiles
            throw errors
        }
        configuration.secretReading = secrets
        return configuration
    }

    /// Errors sorted by line (stable, errors without a line last), the order a user fixes them in.
    private static func inFileOrder(_ errors: [ConfigError]) -> [ConfigError] {
        errors.enumerated().sorted { a, b in
            let lineA = a.element.position?.line ?? Int.max, lineB = b.element.position?.line ?? Int.max
            return lineA != lineB ? lineA < lineB : a.offset < b.offset
        }.map(\.element)
    }
}
