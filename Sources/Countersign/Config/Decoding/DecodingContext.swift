/// State shared while decoding one file: the errors collected so far, where relative paths
/// start, and the environment secrets come from.
final class DecodingContext {
    private(set) var errors: [ConfigError] = []
    /// Every file named and read so far (absolute), each once.
    private(set) var namedFiles: [String] = []
    /// Every object read and the keys allowed in it, in reading order: the schema test walks
    /// these to prove `ConfigurationJSONSchema` names every key the decoder accepts.
    private(set) var allowedKeys: [(path: KeyPath, keys: [String])] = []
    let file: String
    let baseDirectory: String
    let environment: [String: String]
    let files: FileAccess
    let secretReading: SecretReading

    init(file: String, baseDirectory: String, environment: [String: String], files: FileAccess, secretReading: SecretReading = .read) {
        self.secretReading = secretReading
        self.file = file
        self.baseDirectory = baseDirectory
        self.environment = environment
        self.files = files
    }

    func fail(_ path: KeyPath, at position: SourcePosition?, _ message: String) {
        errors.append(ConfigError(file: file, path: path, position: position, message: message))
    }

    func noteNamedFile(_ path: String) {
        if !namedFiles.contains(path) { namedFiles.append(path) }
    }

    func noteAllowedKeys(_ keys: [String], at path: KeyPath) {
        allowedKeys.append((path, keys))
    }

    /// Makes a relative path absolute against the configuration file's directory.
    func absolute(_ path: String) -> String {
        files.absolute(path, relativeTo: baseDirectory)
    }
}
