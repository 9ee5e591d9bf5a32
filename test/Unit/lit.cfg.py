# -*- Python -*-
# lit configuration for attn's gtest suites: each *Tests binary under the
# build's test/Unit folder is one lit test per gtest case.

import os

import lit.formats

config.name = "ATTN-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.attn_obj_root, "test", "Unit")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
