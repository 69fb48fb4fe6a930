public enum LogPlaceholder {}
