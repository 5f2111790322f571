"""A field type pydantic cannot resolve when the entity class is created is named."""

from __future__ import annotations

import importlib
import sys

import pytest
from pydantic import BaseModel

import singletable as st


def test_a_key_type_imported_only_for_type_checking_is_named() -> None:
    # Issue 26: the error was "type ForwardRef('date') is not supported in keys".
    sys.modules.pop("tests.model.type_checking_only", None)
    with pytest.raises(st.ModelDefinitionError) as caught:
        importlib.import_module("tests.model.type_checking_only")
    assert str(caught.value) == (
        "Day.day: the type 'date' is not defined when the class is created (imported only "
        "under TYPE_CHECKING, or defined later in the module); singletable compiles the "
        "entity's keys and attributes from its field types as the class is defined: import "
        "'date' at run time"
    )


def test_an_attribute_type_defined_later_is_named() -> None:
    with pytest.raises(st.ModelDefinitionError, match=r"\.Note\.body: the type 'Later' is not"):

        class Note(st.Entity, table=st.Table("later"), pk="N#{nid}", sk="N"):
            nid: str
            body: Later | None = None

    class Later(BaseModel):
        text: str
