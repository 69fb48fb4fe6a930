import CEventSSL
import CountersignTrust
public enum InterceptionPlaceholder {}
