"""attn without torch: MODE core (the package works, never imports torch),
block (torch made unimportable, then `import attn.torch`)."""

import sys

if sys.argv[1] == "block":
    sys.modules["torch"] = None  # `import torch` now raises ImportError

import attn

print("core ok: %s" % attn.version().startswith("attn "))
print("imported torch: %s" % (sys.modules.get("torch") is not None))
if sys.argv[1] == "block":
    try:
        import attn.torch  # noqa: F401
        print("attn.torch: imported")
    except ImportError as e:
        print("attn.torch: ImportError: %s" % e)
