"""Keys: order-preserving key codecs, segment escaping and key templates.

* `codecs`: `codec_for` picks one `KeyCodec` per field type (byte order of the text =
  value order), with its `KeyFormat` options; the codecs are in `text`, `numbers`,
  `times` and `choices`, all keeping the contract of `codec_base`.
* `escaping`: the `SegmentEscaper` that keeps a delimiter inside a value from colliding.
* `templates`: ``"EVT#{ts}#{seq}"`` parsed once into a `KeyTemplate` (formatter, prefix
  builder and anchored parser).
* `formats`: the stored-format id of every key codec and attribute encoding, recorded
  in snapshots so that a change in how values are stored is planned like a model change.
"""

from singletable.keys.codec_base import KeyCodec
from singletable.keys.codecs import KeyFormat, codec_for
from singletable.keys.escaping import SegmentEscaper
from singletable.keys.templates import FieldSegment, KeyTemplate

__all__ = [
    "FieldSegment",
    "KeyCodec",
    "KeyFormat",
    "KeyTemplate",
    "SegmentEscaper",
    "codec_for",
]
