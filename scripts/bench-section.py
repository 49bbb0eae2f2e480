"""Replaces one `## ` section of a Markdown file (from its heading to the next `## `) with the text
in the SECTION environment variable, or appends it; other sections stay as they are.
Usage: SECTION=... python3 scripts/bench-section.py docs/benchmarks.md "## Desktop"
"""

import os
import re
import sys

path, heading = sys.argv[1], sys.argv[2]
text = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
section = os.environ["SECTION"].rstrip() + "\n"
pattern = re.compile(r"^" + re.escape(heading) + r"\n.*?(?=^## |\Z)", re.S | re.M)
if pattern.search(text):
    text = pattern.sub(lambda _: section + "\n", text, count=1)
else:
    text = text.rstrip() + "\n\n" + section
open(path, "w").write(text.rstrip() + "\n")
