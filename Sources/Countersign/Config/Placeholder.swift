public enum ConfigPlaceholder {}
