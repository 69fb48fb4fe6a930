import CountersignConfig

/// What a reload does to the listening addresses, with every new address bound before the
/// new configuration takes over: one that another process holds (EADDRINUSE) refuses the
/// whole reload, and the running configuration keeps serving on the sockets it has.
struct ListenerChanges {
    /// An added `listen` address, its index in the fresh configuration, and its socket.
    struct Added {
        let address: ListenAddress
        let index: Int
        let socket: ListeningSocket
    }

    enum AdminChange {
        case unchanged
        case off
        case moved(ListenAddress, ListeningSocket)
    }

    let removed: [ListenAddress]
    let added: [Added]
    let admin: AdminChange

    var listenersChanged: Bool { !removed.isEmpty || !added.isEmpty }

    /// Binds what `fresh` adds to `old`; throws `ListenerError` for the first address that
    /// cannot be bound (the sockets bound before it close again).
    static func prepare(from old: Configuration, to fresh: Configuration) throws -> ListenerChanges {
        let oldAddresses = old.listeners.map(\.address)
        let freshAddresses = fresh.listeners.map(\.address)
        let removed = oldAddresses.filter { !freshAddresses.contains($0) }
        var added: [Added] = []
        for (index, listener) in fresh.listeners.enumerated() where !oldAddresses.contains(listener.address) {
            let socket = try ListeningSocket(host: listener.address.host, port: listener.address.port)
            added.append(Added(address: listener.address, index: index, socket: socket))
        }
        let admin: AdminChange
        if fresh.admin?.address == old.admin?.address {
            admin = .unchanged
        } else if let address = fresh.admin?.address {
            admin = .moved(address, try ListeningSocket(host: address.host, port: address.port))
        } else {
            admin = .off
        }
        return ListenerChanges(removed: removed, added: added, admin: admin)
    }
}
