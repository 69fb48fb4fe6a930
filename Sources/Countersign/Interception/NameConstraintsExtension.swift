import COpenSSL

/// The nameConstraints extension (RFC 5280 §4.2.1.10) written into and read out of a certificate.
enum NameConstraintsExtension {
    /// Adds the constraints to `certificate` as a critical extension, so a verifier that
    /// cannot enforce them must refuse the chain rather than ignore them.
    static func add(_ constraints: NameConstraints, to certificate: OpaquePointer) throws {
        guard let extensionValue = NAME_CONSTRAINTS_new() else {
            throw InterceptionError("cannot allocate the name constraints extension: out of memory")
        }
        defer { NAME_CONSTRAINTS_free(extensionValue) }
        extensionValue.pointee.permittedSubtrees = stack(of: constraints.permitted)
        extensionValue.pointee.excludedSubtrees = stack(of: constraints.excluded)
        ERR_clear_error()
        guard X509_add1_ext_i2d(certificate, NID_name_constraints, extensionValue, 1, 0) == 1 else {
            throw InterceptionError.withOpenSSLReason("cannot add name constraints to the CA certificate")
        }
    }

    /// The constraints in `certificate`, or nil when it has none (an unconstrained CA).
    static func read(from certificate: OpaquePointer) -> NameConstraints? {
        guard let raw = X509_get_ext_d2i(certificate, NID_name_constraints, nil, nil) else { return nil }
        let value = raw.assumingMemoryBound(to: NAME_CONSTRAINTS.self)
        defer { NAME_CONSTRAINTS_free(value) }
        return NameConstraints(permitted: subtrees(in: value.pointee.permittedSubtrees),
                               excluded: subtrees(in: value.pointee.excludedSubtrees))
    }

    private static func stack(of subtrees: [GeneralSubtree]) -> OpaquePointer? {
        guard !subtrees.isEmpty, let stack = cs_sk_GENERAL_SUBTREE_new_null() else { return nil }
        for subtree in subtrees {
            let element = GENERAL_SUBTREE_new()!
            GENERAL_NAME_free(element.pointee.base)
            element.pointee.base = GeneralNames.make(subtree: subtree)
            _ = cs_sk_GENERAL_SUBTREE_push(stack, element)
        }
        return stack
    }

    private static func subtrees(in stack: OpaquePointer?) -> [GeneralSubtree] {
        guard let stack else { return [] }
        return (0..<cs_sk_GENERAL_SUBTREE_num(stack)).compactMap { index in
            guard let element = cs_sk_GENERAL_SUBTREE_value(stack, index),
                  let base = element.pointee.base else { return nil }
            return GeneralNames.subtree(from: base)
        }
    }
}
