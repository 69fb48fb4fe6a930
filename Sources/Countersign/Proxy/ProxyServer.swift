import CLibevent
import CountersignAdmin
import CountersignConfig
import CountersignInterception
import CountersignLog
import Foundation

/// The whole proxy: worker loops, the admin listener, and the main loop that turns
/// signals into a reload (SIGHUP) or a drain (SIGTERM/SIGINT).
public final class ProxyServer: AdminPages {
    private let configPath: String
    private let environment: [String: String]
    private let configStore: ConfigStore
    private var workers: [Worker] = []
    private var mainBase: OpaquePointer?
    private var admin: AdminServer?
    private var signalWatches: [DescriptorWatch] = []
    private var stopWakeup: Wakeup?
    private var drainTimer: Timer?
    private var stopWatch: Timer?
    private var drainPoll: Timer?
    private let drainProgress = DrainProgress()
    private var drainPhase = DrainPhase.serving
    /// Present while `reload.watch` is on.
    private var fileWatcher: ConfigFileWatcher?
    private let log = Logger.shared
    public var isDraining: Bool {
        if case .serving = drainPhase { return false }
        return true
    }
    /// The ports actually bound, in `listen` order (useful when the configuration says port 0).
    public private(set) var boundPorts: [UInt16] = []
    public private(set) var adminPort: UInt16?

    /// Compiles the configuration (trust policies, identities, the interception CA, created
    /// on first start when `createCA`); throws when any of it cannot be loaded.
    public init(configPath: String, environment: [String: String], configuration: Configuration, createCA: Bool = true) throws {
        self.configPath = configPath
        self.environment = environment
        let interception = try InterceptionBootstrap.prepare(configuration, createIfMissing: createCA, log: Logger.shared)
        self.configStore = ConfigStore(try SnapshotBuilder.build(configuration, generation: 1, interception: interception))
    }

    /// Binds every listener and starts the workers; returns once they accept connections.
    public func start() throws {
        signal(SIGPIPE, SIG_IGN)
        RaiseFileLimit.toHardLimit()
        let configuration = configStore.current.configuration
        DescriptorBudget.shared.configure(workers: configuration.workers)
        applyLogSettings(configuration.log)
        guard let base = EventLoop.make() else { throw ListenerError.bind("main loop", "cannot create an event loop") }
        mainBase = base

        let count = max(1, configuration.workers)
        for id in 0..<count { workers.append(try Worker(id: id, configStore: configStore, drainProgress: drainProgress)) }
        for (index, listenerConfig) in configuration.listeners.enumerated() {
            let runtime = ListenerRuntime(address: listenerConfig.address, index: index)
            // One socket per address, which every worker accepts on (and no other process joins).
            let socket = try ListeningSocket(host: listenerConfig.address.host, port: listenerConfig.address.port)
            for worker in workers { try worker.listen(on: socket, runtime: runtime) }
            boundPorts.append(socket.port)
        }
        if let adminConfig = configuration.admin {
            let socket = try ListeningSocket(host: adminConfig.address.host, port: adminConfig.address.port)
            let server = try AdminServer(base: base, socket: socket, pages: self, allow: adminAllow,
                                         headTimeout: adminHeadTimeout)
            admin = server
            adminPort = server.port
        }
        installSignals(base)
        updateFileWatch()
        for worker in workers {
            worker.start()
        }
        log.info("countersign started", [
            ("listen", .string(zip(configuration.listeners, boundPorts).map { "\($0.0.address.host):\($0.1)" }.joined(separator: ","))),
            ("admin", .string(adminPort.map { "\(configuration.admin!.address.host):\($0)" } ?? "off")),
            ("workers", .int(count)), ("config", .string(configPath)),
        ])
    }

    /// `limits.header_timeout` as currently configured, for each admin request head.
    private var adminHeadTimeout: () -> Double {
        { [configStore] in configStore.current.configuration.limits.headerTimeout }
    }

    /// `admin.allow` as currently configured, read at each admin accept.
    private var adminAllow: () -> [CIDR] {
        { [configStore] in configStore.current.configuration.admin?.allow ?? CIDR.loopback }
    }

    /// Runs the main loop until the drain has finished.
    public func runMainLoop() {
        guard let mainBase else { return }
        FlushQueue.installForCurrentThread()
        EventLoop.run(mainBase)
        for worker in workers { worker.waitUntilStopped() }
        configStore.current.auth.persist()
        admin?.close()
        fileWatcher?.close()
        fileWatcher = nil
        signalWatches.removeAll()
        stopWakeup = nil
        log.info("countersign stopped")
    }

    // MARK: - Signals

    /// Asks the main loop, from any thread, to drain and stop (what SIGTERM does).
    public func requestStop() {
        stopWakeup?.signal()
    }

    private func installSignals(_ base: OpaquePointer) {
        stopWakeup = Wakeup(base: base) { [unowned self] in self.beginDrain() }
        for signalNumber in [SIGHUP, SIGTERM, SIGINT] {
            if let watch = DescriptorWatch(base: base, descriptor: signalNumber, condition: .signal, repeat: .persistent,
                                           action: { [unowned self] _ in self.handleSignal(signalNumber) }) {
                watch.arm()
                signalWatches.append(watch)
            }
        }
    }

    private func handleSignal(_ number: Int32) {
        if number == SIGHUP {
            reload(trigger: .signal)
        } else {
            beginDrain()
        }
    }

    /// Re-reads the configuration and every file it names; a bad one is logged and the
    /// running configuration stays. Whatever the outcome, the watch (when on) then covers the
    /// files of the configuration that runs.
    public func reload(trigger: ReloadTrigger) {
        var namedByFailedLoad: [String] = []
        // Taken before the files are read: this reload is what they held then.
        let loaded = fileWatcher?.fingerprintsNow() ?? [:]
        defer { updateFileWatch(also: namedByFailedLoad, loaded: loaded) }
        let old = configStore.current.configuration
        do {
            let fresh = try ConfigLoader.load(path: configPath, environment: environment)
            let interception = try InterceptionBootstrap.prepare(fresh, createIfMissing: true, log: log)
            // Bound first: an address another process holds refuses the reload here.
            let listenerChanges = try ListenerChanges.prepare(from: old, to: fresh)
            // The fresh snapshot starts from state_dir: bring it up to date first.
            configStore.current.auth.persist()
            configStore.replace(with: try SnapshotBuilder.build(fresh, generation: configStore.current.generation + 1, interception: interception))
            applyLogSettings(fresh.log)
            for worker in workers {
                let idle = fresh.limits.idleTimeout
                worker.post { $0.context.pool.idleTimeout = idle }
            }
            applyListenerChanges(listenerChanges)
            Observations.shared.retain(patterns: fresh.hosts.entries.map(\.pattern))
            if fresh.workers != old.workers {
                log.warn("a change of `workers` takes effect at the next restart")
            }
            Metrics.shared.countReload(trigger: trigger.label, ok: true)
            log.info("configuration reloaded", [("config", .string(configPath)), ("generation", .int(configStore.current.generation))] + trigger.logFields)
        } catch {
            namedByFailedLoad = (error as? ConfigErrors)?.namedFiles ?? []
            configStore.reloadFailed(ReloadFailure(time: Date(), reason: String(describing: error)))
            Metrics.shared.countReload(trigger: trigger.label, ok: false)
            log.error("configuration reload failed; keeping the running configuration",
                      [("config", .string(configPath)), ("error", .string(String(describing: error)))] + trigger.logFields)
        }
    }

    /// Starts, re-aims or stops the file watch to match the running configuration; `also`:
    /// files a configuration that failed to load named (one may be missing yet: its arrival
    /// triggers the next attempt).
    private func updateFileWatch(also: [String] = [], loaded: [String: FileFingerprint?] = [:]) {
        guard let mainBase else { return }
        let configuration = configStore.current.configuration
        guard configuration.reload.watch else {
            fileWatcher?.close()
            fileWatcher = nil
            return
        }
        if fileWatcher == nil {
            fileWatcher = ConfigFileWatcher(base: mainBase, log: log) { [unowned self] changed in
                self.reload(trigger: .watch(changed))
            }
        }
        var files = [configuration.sourcePath] + configuration.namedFiles
        if let interception = configuration.interception { files += [interception.caCertificatePath, interception.caKeyPath] }
        fileWatcher?.watch(files + also.filter { !files.contains($0) }, loaded: loaded)
    }

    /// New `listen` addresses start accepting and removed ones stop (their connections
    /// finish normally); the admin listener moves when its address changed.
    private func applyListenerChanges(_ changes: ListenerChanges) {
        if changes.listenersChanged {
            for worker in workers { worker.post { $0.updateListeners(removing: changes.removed, adding: changes.added) } }
            log.info("listeners changed", [("added", .string(changes.added.map { "\($0.address)" }.joined(separator: ","))),
                                           ("removed", .string(changes.removed.map { "\($0)" }.joined(separator: ",")))])
        }
        guard let mainBase else { return }
        switch changes.admin {
        case .unchanged:
            return
        case .off:
            admin?.close()
            admin = nil
            adminPort = nil
        case .moved(let address, let socket):
            admin?.close()
            admin = nil
            adminPort = nil
            do {
                let server = try AdminServer(base: mainBase, socket: socket, pages: self, allow: adminAllow,
                                         headTimeout: adminHeadTimeout)
                admin = server
                adminPort = server.port
            } catch {
                log.error("cannot move the admin listener", [("address", .string("\(address)")), ("error", .string("\(error)"))])
            }
        }
    }

    /// Starts the drain: not ready at once, idle connections closed, new ones still served
    /// (each closing after its exchange) until the drain is quiet or `drain_timeout` passes.
    public func beginDrain() {
        guard let mainBase else { return }
        guard case .serving = drainPhase else {
            log.warn("second stop signal: stopping now")
            forceStop()
            return
        }
        let limits = configStore.current.configuration.limits
        let rule = DrainRule(quietPeriod: limits.drainQuietPeriod, timeout: limits.drainTimeout)
        let started = DrainProgress.now()
        drainProgress.noteBusy(at: started)
        drainPhase = .accepting(rule, since: started)
        log.info("draining", [("drain_timeout_s", .double(rule.timeout)), ("drain_quiet_period_s", .double(rule.quietPeriod))])
        for worker in workers { worker.post { $0.beginDrain() } }
        drainTimer = Timer(base: mainBase) { [weak self] in self?.drainTimedOut() }
        drainTimer?.arm(seconds: rule.timeout)
        drainPoll = Timer(base: mainBase) { [weak self] in self?.checkDrain() }
        drainPoll?.arm(seconds: Self.drainPollInterval)
    }

    /// How often the main loop looks whether the drain is quiet.
    private static let drainPollInterval = 0.05

    private func checkDrain() {
        guard case .accepting(let rule, let since) = drainPhase else { return }
        let now = DrainProgress.now()
        if Metrics.shared.connectionsOpen.current > 0 { drainProgress.noteBusy(at: now) }
        switch rule.verdict(elapsed: Double(now - since) / 1e9, sinceBusy: drainProgress.secondsSinceBusy(at: now)) {
        case .keepServing:
            drainPoll?.arm(seconds: Self.drainPollInterval)
        case .quiet:
            log.info("drain quiet: stopping", [("drained_s", .double(Double(now - since) / 1e9))])
            drainPhase = .stopping
            // What arrived just before the listeners closed still finishes, within drain_timeout.
            for worker in workers { worker.post { $0.finishDrain() } }
            checkStopped()
        case .timedOut:
            drainTimedOut()
        }
    }

    private func drainTimedOut() {
        log.warn("drain_timeout reached: closing the remaining connections")
        forceStop()
    }

    private func forceStop() {
        drainPhase = .stopping
        drainPoll?.cancel()
        for worker in workers { worker.post { $0.stopLoop() } }
        checkStopped()
    }

    private func checkStopped() {
        if workers.allSatisfy({ $0.isStopped }) {
            drainTimer?.cancel()
            if let mainBase { EventLoop.stop(mainBase) }
        } else {
            if stopWatch == nil, let mainBase { stopWatch = Timer(base: mainBase) { [weak self] in self?.checkStopped() } }
            stopWatch?.arm(seconds: Self.drainPollInterval)
        }
    }

    private func applyLogSettings(_ settings: LogConfig) {
        Logger.shared.configure(level: settings.level, format: settings.format == .text ? .text : .json, access: settings.access)
    }

    // MARK: - Admin pages

    public func metricsText() -> String {
        let snapshot = configStore.current
        var extra = Observations.shared.samples()
        for (name, notAfter) in snapshot.identityExpiry.sorted(by: { $0.key < $1.key }) {
            extra.append(("countersign_identity_certificate_expiry_timestamp_seconds", "notAfter of each configured client identity (Unix time).",
                          "credential=\"\(PrometheusLabel.escape(name))\"", Double(notAfter)))
        }
        for crl in RevocationListSchedule(snapshot).entries {
            guard let nextUpdate = crl.nextUpdate else { continue }
            extra.append(("countersign_crl_next_update_timestamp_seconds",
                          "nextUpdate of each configured CRL (Unix time): past it, chains its issuer signed are refused.",
                          "file=\"\(PrometheusLabel.escape(crl.file))\",issuer=\"\(PrometheusLabel.escape(crl.issuer))\"", Double(nextUpdate)))
        }
        if let ca = snapshot.interception?.ca {
            extra.append(("countersign_interception_ca_expiry_timestamp_seconds", "notAfter of the interception CA (Unix time).", "",
                          ca.notAfter.timeIntervalSince1970))
        }
        extra.append(("countersign_descriptors_in_use", "Descriptors held by connections (clients, upstreams, pooled, pipes).", "",
                      Double(DescriptorBudget.shared.used)))
        extra.append(("countersign_descriptor_budget", "Descriptors connections may hold: RLIMIT_NOFILE minus a reserve.", "",
                      Double(DescriptorBudget.shared.limit == .max ? -1 : DescriptorBudget.shared.limit)))
        extra.append(("countersign_config_generation", "How many times the configuration was loaded (1 at start).", "", Double(snapshot.generation)))
        return Metrics.shared.prometheusText(extra: extra)
    }

    func statusReport() -> StatusReport {
        StatusReport(snapshot: configStore.current, rows: Observations.shared.rows, refusals: Observations.shared.refusals,
                     metrics: Metrics.shared, draining: isDraining, lastReload: configStore.lastReload)
    }
}

/// Where the process is on its way to stopping.
enum DrainPhase {
    case serving
    /// After SIGTERM/SIGINT: still accepting and serving; `since` in monotonic nanoseconds.
    case accepting(DrainRule, since: UInt64)
    /// Listeners closed; the last connections finish or are closed.
    case stopping
}

/// What asked for a reload, for the log and `countersign_reloads_total`.
public enum ReloadTrigger {
    case signal
    /// The watched files that changed.
    case watch([String])

    var label: String {
        switch self {
        case .signal: return "signal"
        case .watch: return "watch"
        }
    }

    var logFields: [(String, LogValue)] {
        switch self {
        case .signal: return [("trigger", .string("SIGHUP"))]
        case .watch(let files): return [("trigger", .string("file change")), ("changed", .string(files.joined(separator: ",")))]
        }
    }
}

enum RaiseFileLimit {
    /// Thousands of tunnels need thousands of descriptors; take what the hard limit allows.
    static func toHardLimit() {
        var limit = rlimit()
        guard getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        setrlimit(RLIMIT_NOFILE_VALUE, &limit)
    }

    /// The hard limit, which `run` raises the soft one to; nil when unlimited.
    static var hardLimit: Int? {
        var limit = rlimit()
        guard getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0, limit.rlim_max < rlim_t(Int.max) else { return nil }
        return Int(limit.rlim_max)
    }

    #if os(Linux)
    static let RLIMIT_NOFILE_VALUE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    static let RLIMIT_NOFILE_VALUE = RLIMIT_NOFILE
    #endif
}
