import CEventSSL
public enum TrustPlaceholder {}
