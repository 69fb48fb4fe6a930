public enum AdminPlaceholder {}
