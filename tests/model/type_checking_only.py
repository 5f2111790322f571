"""An entity whose key field's type is imported only under TYPE_CHECKING (issue 26).

Importing this module raises `ModelDefinitionError`: the test imports it on purpose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import singletable as st

if TYPE_CHECKING:
    from datetime import date


class Day(st.Entity, table=st.Table("type-checking-only"), pk="D#{day}", sk="DAY"):
    day: date
