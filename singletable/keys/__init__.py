"""Keys: order-preserving key codecs, segment escaping and key templates.

* `codecs`: one `KeyCodec` per field type (byte order of the text = value order) and the
  `SegmentEscaper` that keeps a delimiter inside a value from colliding.
* `templates`: ``"EVT#{ts}#{seq}"`` parsed once into a `KeyTemplate` (formatter, prefix
  builder and anchored parser).
* `formats`: the stored-format id of every key codec and attribute encoding, recorded
  in snapshots so that a change in how values are stored is planned like a model change.
"""

from singletable.keys.codecs import KeyCodec, KeyFormat, SegmentEscaper, codec_for
from singletable.keys.templates import FieldSegment, KeyTemplate

__all__ = [
    "FieldSegment",
    "KeyCodec",
    "KeyFormat",
    "KeyTemplate",
    "SegmentEscaper",
    "codec_for",
]
