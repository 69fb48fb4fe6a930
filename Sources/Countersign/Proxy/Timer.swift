import CLibevent

/// A one-shot timer on a worker's event base, re-armable; `cancel` or deinit disarms it.
final class Timer {
    private var event: OpaquePointer?
    private let action: () -> Void

    init(base: OpaquePointer, action: @escaping () -> Void) {
        self.action = action
        let context = Unmanaged.passUnretained(self).toOpaque()
        event = event_new(base, -1, 0, timerTrampoline, context)
    }

    deinit {
        if let event { event_free(event) }
    }

    func arm(seconds: Double) {
        guard let event else { return }
        var time = timeval(seconds: seconds)
        event_add(event, &time)
    }

    /// Runs the action after the callbacks already due in this loop iteration (it joins their
    /// queue), once however often it is asked before it runs.
    func fireSoon() {
        if let event { event_active(event, EV_TIMEOUT, 0) }
    }

    func cancel() {
        if let event { event_del(event) }
    }

    fileprivate func fire() { action() }
}

private func timerTrampoline(_ fd: Int32, _ what: Int16, _ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    let timer = Unmanaged<Timer>.fromOpaque(context).takeUnretainedValue()
    timer.fire()
    FlushQueue.current?.flushAll()
}

extension timeval {
    init(seconds: Double) {
        let whole = seconds.rounded(.down)
        self.init(tv_sec: Int(whole), tv_usec: Int((seconds - whole) * 1_000_000))
    }
}
