#if canImport(Glibc)
import Glibc
#endif

/// What identifies one version of a file, following symlinks: a rename over it, a rewrite in
/// place or Kubernetes' swap of `..data` under a `name -> ..data/name` link all change it.
/// `nil` stands for "missing or unreadable", itself a state a change can leave.
struct FileFingerprint: Equatable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let mode: UInt32
    let modified: timespec
    let changed: timespec

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        mode = UInt32(info.st_mode)
        modified = info.st_mtim
        changed = info.st_ctim
    }

    static func == (a: FileFingerprint, b: FileFingerprint) -> Bool {
        a.device == b.device && a.inode == b.inode && a.size == b.size && a.mode == b.mode
            && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
            && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
    }
}
