import Foundation
import CEventSSL
public enum ProxyPlaceholder { public static func base() -> OpaquePointer? { var s = fd_set(); _ = s; let d = Data(); _ = d; return event_base_new() } }
