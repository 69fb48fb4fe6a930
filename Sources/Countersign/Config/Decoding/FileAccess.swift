import Foundation

/// The file-system questions the loader asks, answered with sentences a user can act on.
struct FileAccess {
    private var manager: FileManager { FileManager.default }

    func absolute(_ path: String, relativeTo base: String) -> String {
        let joined = path.hasPrefix("/") ? path : (base.hasSuffix("/") ? base : base + "/") + path
        return URL(fileURLWithPath: joined).standardizedFileURL.path
    }

    /// Why a file cannot be read, or nil when it can.
    func problemReading(_ path: String) -> String? {
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else { return "does not exist" }
        if isDirectory.boolValue { return "is a directory, not a file" }
        if !manager.isReadableFile(atPath: path) { return "is not readable by this user" }
        return nil
    }

    func read(_ path: String) -> Result<[UInt8], ValueError> {
        if let problem = problemReading(path) { return .failure(ValueError(problem)) }
        guard let data = manager.contents(atPath: path) else { return .failure(ValueError("could not be read")) }
        return .success(Array(data))
    }

    /// Why a directory cannot hold state files, or nil when it can (now, or once created).
    func problemWritingDirectory(_ path: String) -> String? {
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: path, isDirectory: &isDirectory) {
            if !isDirectory.boolValue { return "\(path) exists and is not a directory" }
            return manager.isWritableFile(atPath: path) ? nil : "\(path) is not writable by this user"
        }
        // Missing directories are created on first use, so look at the nearest existing ancestor.
        var ancestor = URL(fileURLWithPath: path).deletingLastPathComponent()
        while !manager.fileExists(atPath: ancestor.path, isDirectory: &isDirectory) && ancestor.path != "/" {
            ancestor = ancestor.deletingLastPathComponent()
        }
        if !isDirectory.boolValue { return "\(path) cannot be created: \(ancestor.path) is not a directory" }
        return manager.isWritableFile(atPath: ancestor.path)
            ? nil : "\(path) cannot be created: \(ancestor.path) is not writable by this user"
    }

    static var currentDirectory: String { FileManager.default.currentDirectoryPath }
}
