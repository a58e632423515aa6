# expect: refused Import of collections.abc is not allowed
import collections.abc
