import CLibevent
import CountersignLog
#if canImport(Glibc)
import Glibc
#endif

/// Watches the configuration file and every file it names, and reports which changed.
///
/// inotify watches the directories holding them, not the files: a file replaced by a rename
/// (editors, `kubectl` mounts) is a new inode the old watch would never see, and in a mounted
/// Kubernetes Secret the named file is a symlink `name -> ..data/name` whose only event is
/// the kubelet renaming a fresh `..data` over the old one in that directory. So any event in
/// a watched directory only schedules a look; what decides is each file's fingerprint
/// (inode, size, times, followed through symlinks) against the one recorded when it was last
/// loaded. The look happens `debounce` seconds after the first event and covers every event
/// until then: one reload for a rotation that made a dozen events.
final class ConfigFileWatcher {
    static let debounce = 0.3
    private static let mask = UInt32(IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE | IN_DELETE | IN_ATTRIB)

    private let fd: Int32
    private var readWatch: DescriptorWatch?
    private var debounceTimer: Timer?
    private var lookPending = false
    /// Watch descriptor -> directory.
    private var directories: [Int32: String] = [:]
    /// Each watched file's fingerprint when it was last loaded (nil: it was missing).
    private var baseline: [String: FileFingerprint?] = [:]
    private let onChange: ([String]) -> Void
    private let log: Logger

    /// nil (and logged) when the kernel refuses an inotify instance.
    init?(base: OpaquePointer, log: Logger, onChange: @escaping ([String]) -> Void) {
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else {
            log.error("cannot watch the configuration files: inotify_init1 failed; reload with SIGHUP", [("errno", .int(Int(errno)))])
            return nil
        }
        self.onChange = onChange
        self.log = log
        readWatch = DescriptorWatch(base: base, descriptor: fd, condition: .readable, repeat: .persistent) { [unowned self] _ in self.readable() }
        readWatch?.arm()
        debounceTimer = Timer(base: base) { [unowned self] in self.look() }
    }

    deinit {
        readWatch = nil
        Glibc.close(fd)
    }

    /// The watched files' fingerprints now: taken before a reload reads them, and handed back
    /// to `watch` after it, they make that reload's content the new baseline.
    func fingerprintsNow() -> [String: FileFingerprint?] {
        var now: [String: FileFingerprint?] = [:]
        for file in baseline.keys { now[file] = .some(FileFingerprint(path: file)) }
        return now
    }

    /// Watches exactly `files` from now on. A file already watched keeps its recorded
    /// fingerprint, or the one `loaded` gives (what a reload read, fingerprinted before it read
    /// it): a change made while the reload was reading it is still seen, and a change the
    /// reload already loaded (a file written, then SIGHUP) is not loaded again.
    func watch(_ files: [String], loaded: [String: FileFingerprint?] = [:]) {
        var fresh: [String: FileFingerprint?] = [:]
        for file in files { fresh[file] = loaded[file] ?? baseline[file] ?? .some(FileFingerprint(path: file)) }
        baseline = fresh
        var wanted: [String] = []
        for file in files {
            wanted.append(Self.directory(of: file))
            // A symlink elsewhere: a rewrite at its target makes events only there.
            if let target = Self.resolved(file) { wanted.append(Self.directory(of: target)) }
        }
        // Adding a directory already watched returns its descriptor: no moment without a
        // watch, so a rotation during a reload is not missed. Only the ones no longer wanted go.
        var kept: [Int32: String] = [:]
        for directory in Set(wanted).sorted() {
            let descriptor = inotify_add_watch(fd, directory, Self.mask)
            if descriptor >= 0 {
                kept[descriptor] = directory
            } else {
                log.warn("cannot watch a configuration directory; changes there need SIGHUP", [("directory", .string(directory)), ("errno", .int(Int(errno)))])
            }
        }
        for descriptor in directories.keys where kept[descriptor] == nil { inotify_rm_watch(fd, descriptor) }
        directories = kept
    }

    fileprivate func readable() {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var sawEvents = false
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            sawEvents = true
        }
        guard sawEvents, !lookPending else { return }
        lookPending = true
        debounceTimer?.arm(seconds: Self.debounce)
    }

    /// Compares every file with its baseline; the changed ones become the new baseline
    /// before the owner reloads, so a change during the reload triggers another look.
    private func look() {
        lookPending = false
        var changed: [String] = []
        for (file, recorded) in baseline.sorted(by: { $0.key < $1.key }) {
            let now = FileFingerprint(path: file)
            if now != recorded {
                changed.append(file)
                baseline[file] = .some(now)
            }
        }
        if !changed.isEmpty { onChange(changed) }
    }

    func close() {
        debounceTimer?.cancel()
        readWatch?.disarm()
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        let target = String(cString: pointer)
        return target == path ? nil : target
    }
}

