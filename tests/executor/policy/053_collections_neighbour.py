# expect: native
import collections
collections.Counter('aab').most_common(1)
