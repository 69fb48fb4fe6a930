import CountersignSupport

/// The derived key chain: HMAC-SHA256 keyed with `AWS4` + secret over the date, then the region,
/// the service and `aws4_request`. Four HMACs per (day, region, service): cached.
enum AWSSigningKey {
    static func derive(secret: [UInt8], scope: AWSCredentialScope) -> [UInt8] {
        var key = HMACSHA256.authenticate(key: Array("AWS4".utf8) + secret, message: Array(scope.date.utf8))
        key = HMACSHA256.authenticate(key: key, message: Array(scope.region.utf8))
        key = HMACSHA256.authenticate(key: key, message: Array(scope.service.utf8))
        return HMACSHA256.authenticate(key: key, message: Array("aws4_request".utf8))
    }

    static func signature(key: [UInt8], stringToSign: String) -> String {
        Hex.encode(HMACSHA256.authenticate(key: key, message: Array(stringToSign.utf8)))
    }
}

/// Derived keys for the whole process, shared by every worker behind one `Mutex` held only for
/// a dictionary lookup or insert (the HMACs run outside it; two workers racing on a new day
/// both derive, one insert wins, both results are equal). Keyed by the secret too, so a rotated
/// secret under the same access key never meets its predecessor's key. Bounded: a full cache is
/// emptied (keys change daily, so a handful of entries is the steady state).
public final class AWSSigningKeyCache: Sendable {
    public static let shared = AWSSigningKeyCache(capacity: 256)

    private struct Entry: Hashable {
        let accessKeyID: String
        let secret: [UInt8]
        let scope: AWSCredentialScope
    }

    private let capacity: Int
    private let keys = Mutex<[Entry: [UInt8]]>([:])

    public init(capacity: Int) { self.capacity = max(1, capacity) }

    func key(for credentials: AWSCredentials, scope: AWSCredentialScope) -> [UInt8] {
        let entry = Entry(accessKeyID: credentials.accessKeyID, secret: credentials.secretAccessKey, scope: scope)
        if let key = keys.withLock({ $0[entry] }) { return key }
        let key = AWSSigningKey.derive(secret: credentials.secretAccessKey, scope: scope)
        keys.withLock { cache in
            if cache.count >= capacity { cache.removeAll(keepingCapacity: true) }
            cache[entry] = key
        }
        return key
    }

    var count: Int { keys.withLock { $0.count } }
}
