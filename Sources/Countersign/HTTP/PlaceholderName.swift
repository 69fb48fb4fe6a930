/// `countersign:NAME`: NAME is the longest run of letters, digits, `_` and `-`.
public enum PlaceholderName {
    public static func isNameByte(_ byte: UInt8) -> Bool {
        CharacterClass.isAlpha(byte) || CharacterClass.isDigit(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    public static func isValid(_ name: String) -> Bool { !name.isEmpty && name.utf8.allSatisfy(isNameByte) }
}
