import CEventSSL
public enum AuthPlaceholder {}
