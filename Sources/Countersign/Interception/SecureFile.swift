#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a file whole, created with its final mode so that no reader ever sees it with
/// wider permissions or half-written: the bytes go to a fresh temporary file opened with
/// `mode` (O_EXCL), which is then linked (no overwrite) or renamed (overwrite) into place.
public enum SecureFile {
    /// Missing parent directories are created with `directoryMode`; with `privateDirectory`
    /// the file's own directory is set to exactly that mode even when it already existed.
    public static func write(_ text: String, to path: String, mode: mode_t, replacing: Bool,
                             directoryMode: mode_t = 0o755, privateDirectory: Bool = false) throws {
        try write(Array(text.utf8), to: path, mode: mode, replacing: replacing,
                  directoryMode: directoryMode, privateDirectory: privateDirectory)
    }

    public static func write(_ content: [UInt8], to path: String, mode: mode_t, replacing: Bool,
                             directoryMode: mode_t = 0o755, privateDirectory: Bool = false) throws {
        try createParentDirectory(of: path, mode: directoryMode)
        if privateDirectory {
            let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            guard chmod(directory.isEmpty ? (path.hasPrefix("/") ? "/" : ".") : directory, directoryMode) == 0 else {
                throw failure("cannot set the mode of the directory of", path)
            }
        }
        let temporary = "\(path).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw failure("cannot create", path) }
        var closed = false
        defer {
            if !closed { close(descriptor) }
            unlink(temporary)
        }
        // The umask may only have narrowed the mode; set exactly what was asked.
        guard fchmod(descriptor, mode) == 0 else { throw failure("cannot set the mode of", path) }
        var bytes = content[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            guard written > 0 else { throw failure("cannot write", path) }
            bytes = bytes.dropFirst(written)
        }
        guard fsync(descriptor) == 0 else { throw failure("cannot flush", path) }
        closed = true
        guard close(descriptor) == 0 else { throw failure("cannot write", path) }
        if replacing {
            guard rename(temporary, path) == 0 else { throw failure("cannot replace", path) }
        } else {
            guard link(temporary, path) == 0 else {
                if errno == EEXIST {
                    throw InterceptionError("\(path) already exists; refusing to overwrite it (use --force to replace it)")
                }
                throw failure("cannot create", path)
            }
        }
    }

    public static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    /// Creates missing parent directories (default 0755: the file's own mode protects it).
    private static func createParentDirectory(of path: String, mode: mode_t) throws {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/").dropLast() {
            prefix += "/" + component
            if mkdir(prefix, mode) != 0 && errno != EEXIST {
                throw failure("cannot create the directory \(prefix) for", path)
            }
        }
    }

    private static func failure(_ action: String, _ path: String) -> InterceptionError {
        InterceptionError("\(action) \(path): \(String(cString: strerror(errno)))")
    }
}
