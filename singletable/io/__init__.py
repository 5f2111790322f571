"""I/O: the executors, the only code that talks to DynamoDB.

* `connection`: `Connection`, the synchronous executor over a boto3 client.
* `async_connection`: `AsyncConnection`, the asyncio executor over aiobotocore (optional
  extra ``async``).
* `common`: what both share apart from the I/O (client configuration, error mapping,
  `CapacityMeter`, resuming an operation with an outcome).
* `embedded`: an in-memory DynamoDB (moto) for tests, notebooks and the demo.
"""

from singletable.io.async_connection import AsyncConnection
from singletable.io.common import CapacityMeter
from singletable.io.connection import Connection
from singletable.io.embedded import embedded

__all__ = ["AsyncConnection", "CapacityMeter", "Connection", "embedded"]
