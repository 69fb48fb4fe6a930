/// A request to an aws-sigv4 host whose web identity has no keys yet (or keys due for refresh)
/// waits in `.awaitingCredentials` for the one STS fetch of the whole process; then it is
/// forwarded (once: `FetchedCredentials.awsKeys`), or refused with a `Proxy-Status` naming STS.
extension ClientConnection {
    /// The web identity whose keys a request under `plan` must first wait for, if any. Asked
    /// only of a host with an entry: for the others the caller asks nothing (the role's
    /// optional made and copied out cost ~70 instructions a request).
    func awsKeysToFetch(for plan: HostPlan, snapshot: ConfigSnapshot) -> WebIdentityRole? {
        guard case .awsSigV4(let aws)? = plan.signer,
              case .webIdentity(let role) = aws.keys, AWSTemporaryKeys.shared.needsFetch(role) else { return nil }
        return role
    }

    /// Waits for `role`'s keys; `resume` runs once they are there.
    func awaitAWSKeys(_ role: WebIdentityRole, snapshot: ConfigSnapshot, record: AccessRecord, closeOnFailure: Bool,
                      resume: @escaping () -> Void) {
        state = .awaitingCredentials
        AWSTemporaryKeys.shared.fetch(role, context: context, snapshot: snapshot) { [weak self] error in
            // The client may have gone meanwhile; nothing else is read while this request waits.
            guard let self, self.state == .awaitingCredentials else { return }
            self.state = .readingHead
            // Resumed, the request goes on with what there is (keys still valid after a failed refresh).
            guard let error else { return resume() }
            self.fail(with: error, record: record, close: closeOnFailure)
        }
    }
}
