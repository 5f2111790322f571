"""Attribute values: model values <-> DynamoDB's low-level AttributeValues.

* `numbers`: DynamoDB's Number rules (38 significant digits, 1E-130 .. 1E+126), number text.
* `size`: item size by DynamoDB's rules, and the 400 KB limit.
* `convert`: the generic runtime converter for values of any supported type.
* `codecs`: one compiled `AttributeCodec` per field annotation (the hot path); the codecs
  by family are in `scalars`, `choices` and `containers`, built from `codec_parts`.

Nothing here knows about keys, entities or requests.
"""

from singletable.attributes.codecs import AttributeCodec, attribute_codec_for
from singletable.attributes.convert import from_attribute_value, to_attribute_value
from singletable.attributes.size import (
    MAX_ITEM_SIZE,
    attribute_value_size,
    check_item_size,
    item_size,
)

__all__ = [
    "MAX_ITEM_SIZE",
    "AttributeCodec",
    "attribute_codec_for",
    "attribute_value_size",
    "check_item_size",
    "from_attribute_value",
    "item_size",
    "to_attribute_value",
]
