"""I/O: the executors, the only code that talks to DynamoDB.

* `connection`: `Connection`, the synchronous executor over a boto3 client, and its
  `CapacityMeter`.
* `embedded`: an in-memory DynamoDB (moto) for tests, notebooks and the demo.
"""

from singletable.io.connection import CapacityMeter, Connection
from singletable.io.embedded import embedded

__all__ = ["CapacityMeter", "Connection", "embedded"]
