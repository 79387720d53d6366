"""The domain's limits: how long a tag, a label or a machine name may be, how many tags a run has, which ids
exist. The parser, the services and the API's schemas import them from here (the schemas document them,
they do not own them); this module imports nothing of the app.
"""

# Tags and labels are short names; a limit keeps a hostile upload from storing megabytes in them.
MAX_TAG_CHARS = 200
MAX_LABEL_CHARS = 500
# Tags one run may have: a PATCH or an upload with more is refused (400).
MAX_TAGS_PER_RUN = 50

# The characters str.isspace() calls spaces, as a regular expression class written out (JSON Schema's `\s` is
# ECMAScript's, Python's differs): a tag holds none of them (app.tags.check_tag).
TAG_SPACES = "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"

# A machine name is a host name (at most 253 characters) or bonnie++'s -m text. PostgreSQL refuses an entry of
# the (machine, id) index over 2,704 bytes, which a longer name of incompressible text reached: the upload failed
# as a whole. 500 characters of at most 4 bytes each fit, and the page filters take names that long.
MAX_MACHINE_CHARS = 500

# Ids are INTEGER columns; PostgreSQL's INTEGER holds at most 2**31 - 1, so a larger id in a URL
# names no row (and must not reach the database, which would refuse to compare it).
MAX_ID = 2**31 - 1

# An Idempotency-Key names one upload, e.g. the runner's "sweep:<study id>:<configuration>:<round>": printable
# ASCII, as the header's draft standard (a structured-field string) allows, and short enough to index.
IDEMPOTENCY_KEY_MAX_CHARS = 200
