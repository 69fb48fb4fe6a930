/// The one lock type: the standard library's `Mutex`, which keeps the state it guards inside
/// it (no field reachable without the lock). Re-exported so every module that imports Support
/// uses the same type; shared caches hold one each and keep their critical sections short.
@_exported import struct Synchronization.Mutex
