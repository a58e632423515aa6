# expect: refused Forbidden access to module: sys
import collections
collections._sys
