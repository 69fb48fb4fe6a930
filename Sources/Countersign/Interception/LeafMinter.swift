import CountersignTrust
import FoundationEssentials
import CountersignSupport

/// Mints leaf certificates for intercepted hosts and keeps the recent ones, so only the
/// first connection to a host pays for a signature.
///
/// One EC P-256 key, generated when the minter is made, serves every leaf of the process:
/// generating a key per host would cost more than the signature and buy nothing, since
/// the key never leaves memory.
public final class LeafMinter: @unchecked Sendable {
    public static let defaultCapacity = 1024
    /// A cached leaf with less than this left is minted anew (when a new one would last longer).
    static let renewalMargin: TimeInterval = 24 * 3600

    public let ca: InterceptionCA
    let key: PrivateKey
    private let cache: Mutex<LRUCache<String, MintedLeaf>>
    private let clock: @Sendable () -> Date

    public init(ca: InterceptionCA, capacity: Int = LeafMinter.defaultCapacity,
                clock: @escaping @Sendable () -> Date = { Date() }) throws {
        guard capacity > 0 else { throw InterceptionError("the leaf cache needs room for at least one certificate") }
        self.ca = ca
        self.key = try P256Key.generate()
        self.cache = Mutex(LRUCache(capacity: capacity))
        self.clock = clock
    }

    /// How many leaves the cache holds now.
    public var cachedLeafCount: Int { cache.withLock { $0.count } }

    /// The leaf for `host` (a DNS name or an IP literal, IPv6 with or without brackets),
    /// from the cache when it has one that is not near expiry.
    public func leaf(for host: String) throws -> MintedLeaf {
        guard let literal = HostLiteral(host) else {
            throw InterceptionError("cannot mint a certificate for \"\(host)\": it is neither a DNS name nor an IP literal")
        }
        let now = clock()
        guard now < ca.notAfter else {
            throw InterceptionError("the interception CA \(ca.certificatePath) expired on \(CertificateFacts.timestamp(ca.notAfter)); "
                + "create a new one with `countersign ca init --force`")
        }
        // A cached leaf passed the name constraints of this same CA when it was minted.
        if let cached = cache.withLock({ $0.value(for: literal.text) }), !needsRenewal(cached, now: now) {
            return cached
        }
        guard ca.permits(host: literal.text) else {
            throw InterceptionError("\(literal.text) is outside the interception CA's name constraints "
                + "(\(ca.nameConstraints?.description ?? "")), so clients would reject its certificate; "
                + "re-create the CA for the configured hosts with `countersign ca init --force`")
        }
        // Sign outside the lock; if another thread minted meanwhile, keep one leaf for all.
        let minted = try LeafFactory.mint(for: literal, ca: ca, key: key, now: now)
        return cache.withLock { cache in
            if let raced = cache.value(for: literal.text), !needsRenewal(raced, now: now) { return raced }
            cache.set(minted, for: literal.text)
            return minted
        }
    }

    private func needsRenewal(_ leaf: MintedLeaf, now: Date) -> Bool {
        leaf.notAfter.timeIntervalSince(now) < Self.renewalMargin && leaf.notAfter < ca.notAfter
    }
}
