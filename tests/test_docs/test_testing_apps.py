"""The testing guide's sample tests (docs_src/testing_app_tests.py), run as they are."""

from docs_src.testing_app_tests import (  # noqa: F401 - collected by pytest from here
    singletable_tables,
    test_create_and_query,
    test_email_is_unique,
    test_recent_orders_come_newest_first,
    test_the_endpoint_reads_one_page_in_one_query,
    test_the_stream_handler_counts_orders,
)
