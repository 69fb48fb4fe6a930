"""Just enough of RFC 6455 for an echo test: the accept key, and frames with or without a mask."""
import base64
import hashlib
import os
import struct

from .wire import SocketReader

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
OPCODE_TEXT, OPCODE_BINARY, OPCODE_CLOSE = 0x1, 0x2, 0x8


def new_key() -> str:
    return base64.b64encode(os.urandom(16)).decode()


def accept_for(key: str) -> str:
    return base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()


def encode_frame(opcode: int, payload: bytes, masked: bool) -> bytes:
    first = 0x80 | opcode  # FIN set: every frame here is whole
    mask_bit = 0x80 if masked else 0
    length = len(payload)
    if length < 126:
        header = struct.pack("!BB", first, mask_bit | length)
    elif length < 1 << 16:
        header = struct.pack("!BBH", first, mask_bit | 126, length)
    else:
        header = struct.pack("!BBQ", first, mask_bit | 127, length)
    if not masked:
        return header + payload
    mask = os.urandom(4)
    return header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def read_frame(reader: SocketReader):
    """Returns (opcode, payload), unmasking when the frame is masked."""
    first, second = reader.read_exact(2)
    length = second & 0x7F
    if length == 126:
        (length,) = struct.unpack("!H", reader.read_exact(2))
    elif length == 127:
        (length,) = struct.unpack("!Q", reader.read_exact(8))
    mask = reader.read_exact(4) if second & 0x80 else None
    payload = reader.read_exact(length)
    if mask:
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return first & 0x0F, payload
